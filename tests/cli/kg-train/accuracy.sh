# The accuracy options of issue 15: the relation-prediction term, DURA,
# the learning-rate schedule, and the time-to-accuracy stops (time budget,
# target validation MRR), with their bad values refused as usage errors.
. "$KG_TOP/tests/cli/lib.sh"
plan 14
if ! command -v jq >/dev/null; then
	skip_all "kg-train accuracy options: jq is not installed"
fi
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
t="kg-train -q --num_thread 1 --no_checkpoint --reciprocal --one_vs_all
    --loss softmax --batch_size 128 --neg_chunk_size 128 --hidden_dim 32"
same() {	# NAME WANT GOT
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$3', want '$2'"; fi
}
mrr() {		# MODEL_DIR: filtered test MRR
	kg-eval -q ds "$1" | jq '.by_ties.realistic.both.mrr'
}
above() {	# NAME VALUE MIN
	if awk -v x="$2" -v m="$3" 'BEGIN { exit !(x > m) }'; then
		ok "$1 ($2 > $3)"
	else
		notok "$1 ($2 <= $3)"
	fi
}

check "ComplEx with relation prediction and DURA trains" $t \
    --model_name ComplEx --rel_pred_weight 1 --dura_coef 0.01 \
    --lr_warmup 10 --lr_decay 0.9 --epochs 10 ds rp
above "its test MRR is far above chance (0.04)" "$(mrr rp)" 0.6
same "the manifest records the options" "1 0.01 10 0.9" \
    "$(jq -r '.config | "\(.rel_pred_weight) \(.dura_coef) \(.lr_warmup) \(.lr_decay)"' rp/manifest.json)"
check "RESCAL takes relation prediction" $t --model_name RESCAL \
    --hidden_dim 16 --rel_pred_weight 0.5 --epochs 2 ds r1
check "TransE_l1 takes relation prediction" $t --model_name TransE_l1 \
    --rel_pred_weight 0.5 --epochs 2 ds r2

expect_fail "RotatE has no relation-prediction form" 2 \
    "rel_pred_weight: RotatE cannot score every relation" \
    $t --model_name RotatE --rel_pred_weight 1 ds x
expect_fail "DURA is for the bilinear models" 2 \
    "dura_coef: DURA is for DistMult, ComplEx and RESCAL, not TransE_l2" \
    $t --model_name TransE_l2 --dura_coef 0.1 ds x
expect_fail "--lr_decay 0 is refused" 2 "lr_decay" \
    $t --lr_decay 0 ds x
expect_fail "--lr_decay above 1 is refused" 2 "lr_decay" \
    $t --lr_decay 1.5 ds x
expect_fail "--rel_pred_weight must not be negative" 2 "rel_pred_weight" \
    $t --model_name DistMult --rel_pred_weight -1 ds x
expect_fail "--target_mrr needs --valid_every" 2 \
    "target_mrr needs --valid_every" \
    $t --model_name DistMult --target_mrr 0.5 ds x

# Time to accuracy: the first validation at or above the target stops the
# run, and a budget of a microsecond stops it after one epoch.
$t --model_name DistMult --epochs 50 --valid_every 1 --target_mrr 0.3 \
    ds tgt || notok "train to a target MRR"
same "--target_mrr stops the run" "target_mrr" \
    "$(jq -r .figures.stopped_by tgt/manifest.json)"
check "at the first validation that reached it" sh -c \
    'jq -s "(.[-1].valid_mrr >= 0.3) and ([.[:-1][].valid_mrr] | all(. < 0.3))" tgt/train_log.jsonl | grep -q true &&
     test "$(jq .figures.epochs tgt/manifest.json)" -lt 50'
$t --model_name DistMult --epochs 50 --time_budget 1e-6 ds tb ||
    notok "train with a time budget"
same "--time_budget stops after the epoch that spends it" "time_budget 1" \
    "$(jq -r '.figures | "\(.stopped_by) \(.epochs)"' tb/manifest.json)"
