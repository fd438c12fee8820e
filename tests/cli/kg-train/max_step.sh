# --max_step and --epochs (issue 12, item 11): --max_step alone bounds
# training as in DGL-KE (the default 10 epochs no longer cut it short);
# with both, the first reached stops the run; the manifest says which
# bound stopped it, early stopping included.
. "$KG_TOP/tests/cli/lib.sh"
plan 9
if ! command -v jq >/dev/null; then
	skip_all "kg-train max_step: jq is not installed"
fi
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
# 5216 triples in batches of 1024: 6 steps per epoch, 60 in 10 epochs.
t="kg-train -q --model_name DistMult --hidden_dim 8 --batch_size 1024
    --neg_sample_size 16 --num_thread 1 --no_checkpoint"

# figures NAME: "steps epochs stopped_by" of a model dir.
figures() {
	jq -r '.figures | "\(.steps) \(.epochs) \(.stopped_by)"' \
	    "$1/manifest.json"
}
same() {	# NAME WANT GOT
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1: got '$3', want '$2'"; fi
}

$t --max_step 100 ds alone || notok "train with --max_step alone"
same "--max_step alone runs 100 steps, past the default 10 epochs" \
    "100 17 max_step" "$(figures alone)"
check "the log goes on to step 100" sh -c \
    'tail -n 1 alone/train_log.jsonl | grep -q "\"step\": 100,"'
$t --max_step 100 --epochs 5 ds both_e || notok "train with both, epochs first"
same "--epochs 5 stops before --max_step 100" "30 5 epochs" \
    "$(figures both_e)"
$t --max_step 20 --epochs 5 ds both_s || notok "train with both, steps first"
same "--max_step 20 stops inside epoch 4 of 5" "20 4 max_step" \
    "$(figures both_s)"
$t --max_step 12 --epochs 2 ds both_eq || notok "train with both reached at once"
same "both bounds reached at once: epochs" "12 2 epochs" \
    "$(figures both_eq)"
$t --epochs 2 ds plain || notok "train with --epochs alone"
same "--epochs alone" "12 2 epochs" "$(figures plain)"
echo '{"epochs": 3}' >cfg.json
$t --config cfg.json --max_step 100 ds cfg || notok "train with a config"
same "--epochs from a config counts as given" "18 3 epochs" \
    "$(figures cfg)"
# A learning rate too small to move a float: the valid MRR never
# improves, so patience 1 stops the run after its second validation.
$t --lr 1e-12 --epochs 10 --valid_every 1 --patience 1 ds early ||
    notok "train with early stopping"
same "early stopping is named" "12 2 early_stopping" "$(figures early)"
expect_fail "--max_step 0 is refused" 2 "max_step" $t --max_step 0 ds x
