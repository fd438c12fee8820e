# kg-ingest: byte-order marks, repeated triples counted, a split that
# does not add up is bad usage, and the output never holds an input
# (issue 12, items 6, 7, 9 and 1).  Golden stderr and exit codes.
source "$KG_TOP/tests/cli/lib.sh"
plan 19
fig() { python3 -c 'import json, sys
v = json.load(open(sys.argv[1] + "/manifest.json"))["figures"]
for k in sys.argv[2].split("."):
    v = v[k]
print(v)' "$1" "$2"; }

# Item 6: a UTF-8 BOM is not part of the first entity's name.
bom=$(printf '\357\273\277')
printf '%sa\tr\tb\nb\tr\tc\n' "$bom" >bom.tsv
printf '%sa,r,b\nb,r,c\n' "$bom" >bom.csv
printf '%sa\tt1\nb\tt2\n' "$bom" >types.tsv
gzip -c bom.tsv >bom.tsv.gz
check "TSV with a BOM" kg-ingest -q -o tsv --types types.tsv bom.tsv
check "the first entity is 'a'" test "$(head -n 1 tsv/entities.tsv)" = "$(printf '0\ta')"
check "the types file's BOM too" test "$(fig tsv typed_entities)" = 2
check "CSV with a BOM" kg-ingest -q --format csv -o csv bom.csv
check "the first CSV entity is 'a'" test "$(head -n 1 csv/entities.tsv)" = "$(printf '0\ta')"
check "gzip with a BOM" kg-ingest -q -o gz bom.tsv.gz
check "the first gzip entity is 'a'" test "$(head -n 1 gz/entities.tsv)" = "$(printf '0\ta')"

# Item 7: repeated triples are counted with or without --dedup.
printf 'a\tr\tb\na\tr\tb\nb\tr\tc\na\tr\tb\n' >dup.tsv
printf 'b\tr\tc\n' >dupv.tsv
kg-ingest -q -o keep --train dup.tsv --valid dupv.tsv
kg-ingest -q --dedup -o drop --train dup.tsv --valid dupv.tsv
check "without --dedup: 3 repeats counted" test "$(fig keep duplicates)" = 3
check "without --dedup: none dropped" test "$(fig keep dropped.duplicates)" = 0
check "without --dedup: all 4 train triples kept" test "$(fig keep triples.train)" = 4
check "with --dedup: 3 repeats counted" test "$(fig drop duplicates)" = 3
check "with --dedup: 3 dropped" test "$(fig drop dropped.duplicates)" = 3
check "with --dedup: 2 train, 0 valid triples" \
    test "$(fig drop triples.train)/$(fig drop triples.valid)" = 2/0

# Item 9: fractions that do not sum to 1 are bad usage.
golden "--split 0.5,0.6,0.1 is bad usage" 2 \
    "kg-ingest: --split: fractions 0.5,0.6,0.1 sum to 1.2, not 1" \
    kg-ingest -q -o out --split 0.5,0.6,0.1 dup.tsv

# Item 1: --force never replaces a directory that holds an input.
mkdir data && cp dup.tsv data/
golden "an output holding the input file" 1 \
    "kg-ingest: input 'data/dup.tsv' is inside the output 'data'" \
    kg-ingest -q -f -o data data/dup.tsv
golden "an output holding the types file" 1 \
    "kg-ingest: input 'data/dup.tsv' is inside the output './data'" \
    kg-ingest -q -f -o ./data --types data/dup.tsv --train dup.tsv
golden "the output is the input file" 1 \
    "kg-ingest: output 'dup.tsv' is the input 'dup.tsv'" \
    kg-ingest -q -f -o dup.tsv dup.tsv
check "the inputs are still there" test -f data/dup.tsv -a -f dup.tsv
check "no output after the errors" test ! -e out
