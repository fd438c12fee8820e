#!/usr/bin/env bash
# kg-eval on a model directory written by kg-train itself (UMLS, a short
# ComplEx run, plain and with reciprocal relations): the directory loads,
# and the trained model ranks far above chance (random embeddings give an
# MRR near 0.05 here).
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"

command -v kg-train >/dev/null 2>&1 || { skip "trained: kg-train not built"; exit 0; }
have_json || { skip "trained: neither jq nor python3"; exit 0; }
make_umls umls || { notok "ingest umls"; exit 0; }

for recip in "" --reciprocal; do
	name=complex${recip:+-reciprocal}
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
	check "$name: MRR $mrr > 0.3" awk -v x="$mrr" 'BEGIN { exit !(x > 0.3) }'
	auc=$(jget out.json .auc)
	check "$name: AUC $auc > 0.7" awk -v x="$auc" 'BEGIN { exit !(x > 0.7) }'
done
