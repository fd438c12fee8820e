#!/usr/bin/env bash
# kg-eval on a model directory written by kg-train itself (UMLS, a short
# ComplEx run, plain and with reciprocal relations): the directory loads,
# and the trained model ranks as well as it did when measured (one
# thread, fixed seed, so the run is deterministic): MRR 0.7466 and AUC
# 0.9875 plain, 0.8064 and 0.9746 reciprocal; the bars sit 0.03 (MRR)
# and 0.02 (AUC) below, so a real loss of accuracy fails (random
# embeddings give an MRR near 0.05 here).
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 8

command -v kg-train >/dev/null 2>&1 || skip_all "trained: kg-train not built"
have_json || skip_all "trained: neither jq nor python3"
make_umls umls || { notok "ingest umls"; exit 0; }

for recip in "" --reciprocal; do
	name=complex${recip:+-reciprocal}
	if [ -n "$recip" ]; then min_mrr=0.775 min_auc=0.955
	else min_mrr=0.715 min_auc=0.965; fi
	if ! kg-train -q --model_name ComplEx --hidden_dim 32 --epochs 10 \
	    --num_thread 1 --seed 1 $recip umls "$name" >/dev/null 2>train.err; then
		notok "$name: kg-train ($(head -c 300 train.err))"
		continue
	fi
	kg-eval -q --auc umls "$name" >out.json
	check "$name: kg-eval exit 0" test $? -eq 0
	check "$name: reciprocal recorded" test "$(jget out.json .reciprocal)" = \
	    "$([ -n "$recip" ] && echo true || echo false)"
	mrr=$(jget out.json .metrics.both.mrr)
	check "$name: MRR $mrr > $min_mrr" awk -v x="$mrr" -v m=$min_mrr \
	    'BEGIN { exit !(x > m) }'
	auc=$(jget out.json .auc)
	check "$name: AUC $auc > $min_auc" awk -v x="$auc" -v m=$min_auc \
	    'BEGIN { exit !(x > m) }'
done
