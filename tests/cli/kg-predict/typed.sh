#!/usr/bin/env bash
# --typed: on a dataset with entity types, answers are only entities of
# the types seen in that position of the relation in the train triples
# (and relations whose head and tail types fit): exactly the untyped
# ranking with the other types taken out.  A dataset without types is
# refused with nothing written.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
echo "1..12"

# People live in cities and work at companies, companies sit in cities,
# people know people; 40 people, 8 cities, 8 companies.
awk 'BEGIN {
	srand(3)
	for (p = 0; p < 40; p++) {
		print "p" p "\tlives_in\tc" int(rand() * 8)
		print "p" p "\tworks_at\tk" int(rand() * 8)
		print "p" p "\tknows\tp" int(rand() * 40)
	}
	for (k = 0; k < 8; k++) print "k" k "\tlocated_in\tc" int(rand() * 8)
}' >train.tsv
awk 'BEGIN {
	for (p = 0; p < 40; p++) print "p" p "\tperson"
	for (c = 0; c < 8; c++) print "c" c "\tcity"
	for (k = 0; k < 8; k++) print "k" k "\tcompany"
}' >types.tsv
kg-ingest -q -o ds --types types.tsv --train train.tsv || { notok "ingest"; exit 0; }
kg-ingest -q -o plain --train train.tsv || { notok "ingest without types"; exit 0; }
"$MKMODEL" ds m DistMult 8 || { notok "make model"; exit 0; }

printf 'p1\tlives_in\t?\n?\tworks_at\tk2\np3\tknows\t?\nk1\tlocated_in\t?\np4\t?\tc2\n' >q.tsv
kg-predict -q --typed -k 5 --no-header ds m q.tsv >typed.tsv
check "exit 0" test $? -eq 0
kg-predict -q -k 60 --no-header ds m q.tsv >all.tsv

# type NAME: the type of an entity.
ty() { awk -F'\t' -v n="$1" '$1 == n { print $2 }' types.tsv; }
check "tails of lives_in are cities" test "$(awk -F'\t' '$2 == "lives_in" && $1 == "p1" { print $3 }' typed.tsv |
    while read -r e; do ty "$e"; done | sort -u)" = city
check "heads of works_at are people" test "$(awk -F'\t' '$2 == "works_at" && $3 == "k2" { print $1 }' typed.tsv |
    while read -r e; do ty "$e"; done | sort -u)" = person
check "tails of located_in are cities" test "$(awk -F'\t' '$1 == "k1" { print $3 }' typed.tsv |
    while read -r e; do ty "$e"; done | sort -u)" = city
check "person to city: lives_in alone" test "$(awk -F'\t' '$1 == "p4" && $3 == "c2" { print $2 }' typed.tsv)" = lives_in
check "five answers to each entity query" test "$(grep -c -v '^p4' typed.tsv)" -eq 20

# The typed answers are the untyped ranking with the other types left out.
keep() {	# QUERYKEY FIELD TYPE: the first five of that type
	awk -F'\t' -v key="$1" -v f="$2" '$0 ~ key' all.tsv | while IFS=$'\t' read -r h r t s k; do
		e=$h; [ "$3" = 3 ] && e=$t
		[ "$(ty "$e")" = "$4" ] && printf '%s\t%s\t%s\t%s\n' "$h" "$r" "$t" "$s"
	done | head -5
}
check "lives_in: the untyped ranking's cities" test \
    "$(keep '^p1\tlives_in' 3 3 city)" = "$(awk -F'\t' '$1 == "p1"' typed.tsv | cut -f1-4)"
check "works_at heads: the untyped ranking's people" test \
    "$(keep '\tworks_at\tk2\t' 1 1 person)" = "$(awk -F'\t' '$3 == "k2"' typed.tsv | cut -f1-4)"
check "knows: the untyped ranking's people" test \
    "$(keep '^p3\tknows' 3 3 person)" = "$(awk -F'\t' '$1 == "p3"' typed.tsv | cut -f1-4)"
check "untyped answers do include other types" test \
    "$(awk -F'\t' '$1 == "p1" { print $3 }' all.tsv | while read -r e; do ty "$e"; done | sort -u | wc -l)" -eq 3

expect_fail "a dataset without types" 1 \
    "^kg-predict: --typed: dataset 'plain' has no entity types \(kg-ingest --types\)$" \
    kg-predict -q --typed -o out.tsv plain m q.tsv
check "nothing written" test ! -e out.tsv
