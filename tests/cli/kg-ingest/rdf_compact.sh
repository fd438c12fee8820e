# --compact with a Turtle input's own prefixes: @prefix and PREFIX
# directives name IRIs, --prefix overrides a name, the manifest keeps
# the mapping so that names expand back, and a prefix that would name an
# IRI two ways (declared again as another namespace, or first declared
# after a statement) is refused.
source "$KG_TOP/tests/cli/lib.sh"
plan 12

W=http://www.wikidata.org
cat >a.ttl <<EOT
@prefix wd: <$W/entity/> .
@prefix wdt: <$W/prop/direct/> .
PREFIX : <http://example.org/>
wd:Q1 wdt:P31 wd:Q5 .
wd:Q2 wdt:P31 :thing ; wdt:P2 "x"@en .
<http://other.org/z> wdt:P1 wd:Q1 .
EOT
cat >b.ttl <<EOT
@prefix wd: <$W/entity/> .
wd:Q7 <$W/prop/direct/P31> wd:Q1 .
EOT

kg-ingest -q -o full a.ttl b.ttl
kg-ingest -q -o cmp --compact a.ttl b.ttl
check "the input's prefixes name entities, others as written" test \
    "$(cut -f2 cmp/entities.tsv | tr '\n' ' ')" = \
    "wd:Q1 wd:Q5 wd:Q2 :thing http://other.org/z wd:Q7 "
check "and relations and the literal table" test \
    "$(cut -f2 cmp/relations.tsv | tr '\n' ' ')$(cut -f1,2 cmp/literals.tsv)" = \
    "wdt:P31 wdt:P1 wd:Q2	wdt:P2"
# Expand by the manifest's mapping: the names and triples of a plain run.
expand() {
	python3 - "$1" "$2" <<'PY'
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
pre = {p["name"]: p["namespace"] for p in m["figures"]["rdf"]["compact_prefixes"]}
for line in open(sys.argv[1] + "/" + sys.argv[2]):
    i, name = line.rstrip("\n").split("\t")
    p, colon, rest = name.partition(":")
    if colon and p in pre and not name.startswith("http"):
        name = pre[p] + rest
    print(i + "\t" + name)
PY
}
expand cmp entities.tsv >ent.back
expand cmp relations.tsv >rel.back
check "compacted names expand back by the manifest's prefixes" sh -c \
    'cmp -s ent.back full/entities.tsv && cmp -s rel.back full/relations.tsv &&
     cmp -s cmp/train.npy full/train.npy'
check "the manifest says where each prefix was declared" python3 -c '
import json, sys
m = json.load(open("cmp/manifest.json"))["figures"]["rdf"]["compact_prefixes"]
got = sorted((p["name"], p["from"]) for p in m)
sys.exit(got != [("", "a.ttl:3"), ("wd", "a.ttl:1"), ("wdt", "a.ttl:2")])'

# --prefix takes a name from the input: its directive is ignored.
printf '@prefix wd: <http://example.org/wd/> .\nwd:Q7 wd:p wd:Q1 .\n' >c.ttl
kg-ingest -q -o over --compact --prefix wd=http://example.org/wd/ a.ttl c.ttl
check "--prefix overrides the input's prefix of that name" test \
    "$(cut -f2 over/entities.tsv | tr '\n' ' ')" = \
    "$W/entity/Q1 $W/entity/Q5 $W/entity/Q2 :thing http://other.org/z wd:Q7 wd:Q1 "

expect_fail "a prefix declared as two namespaces is refused" 1 \
    "^kg-ingest: c.ttl:1: prefix 'wd:' declared as <http://example.org/wd/> here and as <$W/entity/> at a.ttl:1; --compact needs one namespace a prefix \(choose with --prefix wd=IRI\)$" \
    kg-ingest -q -o x --compact a.ttl c.ttl
check "and nothing is written" test ! -e x
printf '@prefix wd: <%s/entity/> .\nwd:Q7 wd:p wd:Q1 .\n@prefix ex: <http://ex.org/> .\nex:a ex:b ex:c .\n' $W >late.ttl
expect_fail "a prefix first declared after a statement is refused" 1 \
    "^kg-ingest: late.ttl:3: prefix 'ex:' declared after the first statement; --compact would name its IRIs two ways \(declare it before, or give --prefix ex=IRI\)$" \
    kg-ingest -q -o x --compact late.ttl
check "and nothing is written" test ! -e x
kg-ingest -q -o late --compact --prefix ex=http://ex.org/ late.ttl
check "unless --prefix gives it" test \
    "$(cut -f2 late/entities.tsv | tr '\n' ' ')" = "wd:Q7 wd:Q1 ex:a ex:c "
printf '<%s/entity/Q1> <%s/p> <%s/entity/Q9> .\n' $W $W $W >n.nt
expect_fail "--compact without --prefix needs Turtle input" 2 \
    "^kg-ingest: --compact needs --prefix NAME=IRI or Turtle input \(whose prefixes it uses\)$" \
    kg-ingest -q -o x --compact n.nt
kg-ingest -q -o mix --compact a.ttl n.nt
check "an N-Triples input is compacted by a Turtle input's prefixes" grep -qx \
    "5	wd:Q9" mix/entities.tsv
