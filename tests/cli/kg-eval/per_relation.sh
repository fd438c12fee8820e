#!/usr/bin/env bash
# --per-relation: one entry per relation present in the split, with its
# name; counts add up to the total.  --auc gives a value in [0, 1].
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 5

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls model RotatE 16 || { notok "make model"; exit 0; }
command -v jq >/dev/null 2>&1 || skip_all "per_relation: needs jq"

kg-eval -q --per-relation --auc umls model >out.json
check "exit 0" test $? -eq 0
n=$(jq '[.per_relation[].both.n] | add' out.json)
check "per-relation counts add up" test "$n" = "$(jq .metrics.both.n out.json)"
check "names from relations.tsv" test "$(jq -r '.per_relation[0].name' out.json)" = \
    "$(awk -F'\t' -v id="$(jq '.per_relation[0].relation' out.json)" '$1 == id { print $2 }' umls/relations.tsv)"
check "weighted MRR matches overall" near \
    "$(jq '[.per_relation[] | .both.mrr * .both.n] | add / 1322' out.json)" \
    "$(jq .metrics.both.mrr out.json)" 1e-9
check "auc in [0, 1]" jq -e '.auc >= 0 and .auc <= 1' out.json
