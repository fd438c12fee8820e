#!/usr/bin/env bash
# --per-relation prints a table on stderr after the overall one: one row
# per relation of the report's "per_relation", in the same order, with
# the same triples and metrics (to the table's 4 decimals); without
# --per-relation, or with -q, there is no such table.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
echo "1..7"

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls model RotatE 16 || { notok "make model"; exit 0; }
command -v jq >/dev/null 2>&1 || { skip "per_relation_table: needs jq"; exit 0; }

kg-eval --per-relation umls model >out.json 2>err.txt
check "exit 0" test $? -eq 0
# The rows after the header line that starts with "relation".
awk '$1 == "relation" { on = 1; next } on' err.txt >rows.txt
check "one row per relation in the report" test "$(wc -l <rows.txt)" -eq \
    "$(jq '.per_relation | length' out.json)"
jq -r '.per_relation[] | [.name, .tail.n,
    (.tail.mrr, .head.mrr, .both.mrr | . * 10000 | round / 10000),
    (.both.mr * 100 | round / 100),
    (.both["hits@1"], .both["hits@3"], .both["hits@10"] | . * 10000 | round / 10000)]
    | @tsv' out.json >want.tsv
awk '{ printf "%s\t%d", $1, $2; for (i = 3; i <= NF; i++) printf "\t%s", $i + 0; print "" }' \
    rows.txt >got.tsv
check "rows equal the report's per-relation metrics" cmp -s got.tsv want.tsv
check "the table's triples add up to the split" test \
    "$(awk '{ s += $2 } END { print s }' rows.txt)" -eq "$(jq .n_triples out.json)"
check "header names the columns" grep -Eq \
    '^  relation +triples +tail MRR +head MRR +MRR +MR +Hits@1 +Hits@3 +Hits@10$' err.txt

kg-eval umls model >/dev/null 2>plain.txt
check "no table without --per-relation" sh -c '! grep -q "tail MRR" plain.txt'
kg-eval -q --per-relation umls model >/dev/null 2>quiet.txt
check "-q prints no table" test ! -s quiet.txt
