# Two-stage training: drawn negatives, then 1-vs-all, switched after a
# fixed epoch count (--one_vs_all_after) or once the validation MRR has
# levelled off (--one_vs_all_plateau).  The switch shows in the log's
# loss (the full softmax's is larger), is recorded in the manifest and
# the checkpoint, and a run resumed after it is bit-identical to one that
# was not interrupted (one thread, fixed seed).
. "$KG_TOP/tests/cli/lib.sh"
plan 28
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
t="kg-train -q --model_name DistMult --hidden_dim 32 --reciprocal"
t="$t --loss softmax --batch_size 256 --neg_sample_size 16 --num_thread 1"
t="$t --seed 3"

# A fixed switch: epochs 1-3 draw 16 negatives, 4-5 score all 135
# entities, whose softmax loss starts well above the sampled one.
check "--one_vs_all_after 3" $t --epochs 5 --one_vs_all_after 3 ds fixed
check "manifest config records the switch" sh -c \
    'jq -e ".config.one_vs_all_after == 3 and .config.one_vs_all == false" fixed/manifest.json >/dev/null'
check "loss jumps at the switch (1-vs-all from epoch 4)" sh -c \
    'jq -se "(.[3].loss > 1.5 * .[2].loss) and (.[2].loss < 1.5 * .[1].loss)" fixed/train_log.jsonl >/dev/null'
check "all 1-vs-all from the start differs" $t --epochs 5 --one_vs_all ds ova
check "the two runs differ" sh -c '! cmp -s fixed/entities.npy ova/entities.npy'

# The plateau switch: recorded as an epoch count inside the run.
p="$t --valid_every 1 --one_vs_all_plateau 2 --epochs 30"
check "--one_vs_all_plateau 2, 30 epochs" $p --keep_checkpoint ds full
at=$(jq '.figures.one_vs_all_after' full/manifest.json)
check "switched inside the run (after epoch $at)" sh -c \
    "test '$at' -ge 2 && test '$at' -lt 30"
check "config records the plateau, not a fixed switch" sh -c \
    'jq -e ".config.one_vs_all_plateau == 2 and .config.one_vs_all_after == 0" full/manifest.json >/dev/null'
check "the checkpoint keeps the switch" sh -c \
    "jq -e '.one_vs_all_after == $at' full.ckpt/state.json >/dev/null"
# Stop one epoch after the switch, resume to 30: the same parameters.
stop=$((at + 1))
check "first $stop epochs, checkpoint kept" $t --valid_every 1 \
    --one_vs_all_plateau 2 --epochs $stop --keep_checkpoint ds part
check "resume to 30 epochs" $t --valid_every 1 --one_vs_all_plateau 2 \
    --epochs 30 --resume --checkpoint_dir part.ckpt --keep_checkpoint ds \
    resumed
check "resumed run keeps 1-vs-all (bit-identical parameters)" cmp -s \
    full.ckpt/entities-p0.npy part.ckpt/entities-p0.npy
check "resumed manifest reports the same switch" sh -c \
    "jq -e '.figures.one_vs_all_after == $at' resumed/manifest.json >/dev/null"

expect_fail "--one_vs_all_plateau without --valid_every" 2 \
    "--one_vs_all_plateau needs --valid_every" \
    $t --epochs 2 --one_vs_all_plateau 2 ds bad1
expect_fail "--one_vs_all_plateau with --one_vs_all_after" 2 \
    "drop --one_vs_all_after" \
    $t --epochs 2 --valid_every 1 --one_vs_all_plateau 2 \
    --one_vs_all_after 1 ds bad2
expect_fail "--one_vs_all with --one_vs_all_after" 2 \
    "drop --one_vs_all_after" $t --epochs 2 --one_vs_all \
    --one_vs_all_after 1 ds bad3
expect_fail "--one_vs_all_after with --neg_in_batch" 2 \
    "--one_vs_all_after scores every entity already" $t --epochs 2 \
    --neg_in_batch --one_vs_all_after 1 ds bad4
expect_fail "--one_vs_all_plateau with --neg_in_batch" 1 \
    "--one_vs_all_plateau and --neg_in_batch cannot be combined" $t \
    --epochs 2 --valid_every 1 --neg_in_batch --one_vs_all_plateau 2 ds bad5
expect_fail "--one_vs_all_dura without 1-vs-all epochs" 2 \
    "--one_vs_all_dura needs 1-vs-all epochs" $t --epochs 2 \
    --dura_coef 0.01 --one_vs_all_dura 0.1 ds bad6
expect_fail "--one_vs_all_dura for TransE" 2 \
    "--one_vs_all_dura: DURA is for DistMult" \
    $t --model_name TransE --epochs 2 --one_vs_all_after 1 \
    --one_vs_all_dura 0.1 ds bad7
check "no output from the refused runs" sh -c \
    'test ! -e bad1 && test ! -e bad2 && test ! -e bad3 && test ! -e bad4 && test ! -e bad5 && test ! -e bad6 && test ! -e bad7'

# DURA of its own in the 1-vs-all stage: the sampled epochs are those of
# the fixed switch above (same loss), the 1-vs-all ones are not.
check "--one_vs_all_dura 0.5 after a fixed switch" $t --epochs 5 \
    --one_vs_all_after 3 --one_vs_all_dura 0.5 ds odura
check "manifest records it (null when not given)" sh -c \
    'jq -e ".config.one_vs_all_dura == 0.5" odura/manifest.json >/dev/null &&
     jq -e ".config.one_vs_all_dura == null" fixed/manifest.json >/dev/null'
check "sampled epochs unchanged, 1-vs-all ones regularised" sh -c \
    'jq -se "(.[2].loss == $(jq -s ".[2].loss" fixed/train_log.jsonl)) and (.[4].loss > $(jq -s ".[4].loss" fixed/train_log.jsonl))" odura/train_log.jsonl >/dev/null'

# Grouped 1-vs-all: recorded in the manifest, trains, and differs from
# the plain order (the queries' answers come together).
check "--one_vs_all_grouped with the plateau switch" $p --one_vs_all_grouped \
    ds grouped
check "manifest records the grouping" sh -c \
    'jq -e ".config.one_vs_all_grouped == true" grouped/manifest.json >/dev/null &&
     jq -e ".config.one_vs_all_grouped == false" full/manifest.json >/dev/null'
check "grouped and plain 1-vs-all epochs differ" sh -c \
    '! cmp -s grouped/entities.npy full/entities.npy'
if kg-eval -q ds grouped >g.json 2>/dev/null; then
	m=$(jq '.by_ties.realistic.both.mrr // .metrics.both.mrr' g.json)
	check "grouped model: filtered MRR $m > 0.6" awk -v m="$m" \
	    'BEGIN { exit !(m > 0.6) }'
else
	notok "kg-eval reads the grouped model"
fi
