#!/usr/bin/env bash
# All-zero embeddings: every candidate ties with the truth, so the raw
# optimistic rank is 1, the pessimistic rank the entity count and the
# realistic rank their mean; filtered MR stays the mean of the two.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 14

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" --zeros umls zeros DistMult 8 || { notok "make model"; exit 0; }
have_json || skip_all "ties: neither jq nor python3"

kg-eval -q --raw umls zeros >raw.json
check "raw exit 0" test $? -eq 0
check "raw optimistic MR 1" near "$(jget raw.json .by_ties.optimistic.both.mr)" 1 0
check "raw optimistic hits@1 1" near "$(jget raw.json '.by_ties.optimistic.both["hits@1"]')" 1 0
check "raw pessimistic MR 135" near "$(jget raw.json .by_ties.pessimistic.both.mr)" 135 0
check "raw realistic MR 68" near "$(jget raw.json .metrics.both.mr)" 68 1e-9
check "raw realistic MRR 1/68" near "$(jget raw.json .metrics.both.mrr)" "$(awk 'BEGIN { printf "%.15f", 1 / 68 }')" 1e-9
check "raw realistic hits@10 0" near "$(jget raw.json '.metrics.both["hits@10"]')" 0 0

kg-eval -q umls zeros >filt.json
o=$(jget filt.json .by_ties.optimistic.both.mr)
p=$(jget filt.json .by_ties.pessimistic.both.mr)
r=$(jget filt.json .by_ties.realistic.both.mr)
check "filtered optimistic MR 1" near "$o" 1 0
check "filtered pessimistic MR < 135" awk -v p="$p" 'BEGIN { exit !(p < 135) }'
check "filtered realistic = (opt + pess) / 2" near "$r" "$(awk -v a="$o" -v b="$p" 'BEGIN { printf "%.12f", (a + b) / 2 }')" 1e-9

kg-eval -q --ties pessimistic umls zeros >pess.json
check "--ties pessimistic selects" test "$(jget pess.json .ties)" = pessimistic
check "--ties pessimistic metrics" near "$(jget pess.json .metrics.both.mr)" "$p" 0

# Triple classification with all scores equal: AUC exactly one half.
kg-eval -q --auc --auc-neg 3 umls zeros >auc.json
check "auc 0.5 on ties" near "$(jget auc.json .auc)" 0.5 0
check "auc negatives recorded" test "$(jget auc.json .auc_negatives_per_positive)" = 3
