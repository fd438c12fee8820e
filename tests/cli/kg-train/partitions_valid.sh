# kg-train --partitions in one process runs the epoch loop of the other
# trainers: validation, early stopping with the best epoch kept (through
# the store: out of core, no copy of the table in memory), --target_mrr,
# --time_budget and --max_step.  A run killed between its best epoch and
# its stop and resumed ends where the uninterrupted run ends, bit for bit,
# over the parking store, the partition buffer and the device's partition
# buffer (on the CPU backend through KG_TRAIN_SEAM; one thread, fixed
# seed).
. "$KG_TOP/tests/cli/lib.sh"
plan 38
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" && kg-partition -q -m random -p 4 -s 3 -o p4 ds ||
    { notok "ingest and partition umls"; exit 0; }
t="kg-train -q --model_name DistMult --hidden_dim 16 --num_thread 1"
t="$t --seed 5 --batch_size 256 --neg_sample_size 16 --lr 0.5 --epochs 30"
t="$t --partitions p4"
fig() { jq -r ".figures.$2" "$1/manifest.json"; }

# resumed NAME OPTIONS: 8 checks.
resumed() {
	local n=$1 best last kill_at
	shift
	check "$n: uninterrupted run" $t "$@" --valid_every 1 --patience 4 \
	    ds $n-full
	best=$(fig $n-full best_epoch) last=$(fig $n-full epochs)
	# The kill must fall after the best epoch and before the stop, with
	# a validation or more since the best: else the test proves nothing.
	kill_at=$((last - 2))
	check "$n: stops early, 2+ validations after its best ($best < $kill_at < $last)" \
	    test "$(fig $n-full stopped_by)" = early_stopping -a "$best" -lt "$kill_at"
	KG_TEST_KILL_AFTER_CKPT=$kill_at:KILL $t "$@" --valid_every 1 \
	    --patience 4 ds $n-part 2>/dev/null
	check "$n: killed after checkpoint $kill_at" test $? -ne 0 -a ! -e $n-part
	check "$n: the checkpoint keeps the best epoch and the patience count" sh -c \
	    "jq -e '.best_epoch == $best and .bad_rounds == $((kill_at - best))' $n-part.ckpt/state.json >/dev/null"
	check "$n: the killed run resumes" $t "$@" --valid_every 1 --patience 4 \
	    --resume ds $n-part
	check "$n: resumed, it stops where the uninterrupted run stops" test \
	    "$(fig $n-part stopped_by) $(fig $n-part epochs) $(fig $n-part best_epoch) $(fig $n-part best_valid_mrr)" = \
	    "early_stopping $last $best $(fig $n-full best_valid_mrr)"
	check "$n: resumed, the best epoch's entities, bit for bit" cmp -s \
	    $n-full/entities.npy $n-part/entities.npy
	check "$n: resumed, the best epoch's relations, bit for bit" cmp -s \
	    $n-full/relations.npy $n-part/relations.npy
}
resumed park
resumed buffer --buffer_capacity 2
export KG_TRAIN_SEAM=cpu
resumed device --gpu_buffer 2
unset KG_TRAIN_SEAM

# The kept parameters are the best epoch's: kg-eval's valid MRR of the
# model dir is the best MRR the loop saw.
same_mrr() {
	kg-eval -q --split valid ds "$1" | jq -e --argjson b "$(fig "$1" best_valid_mrr)" \
	    '(.metrics.both.mrr - $b) | fabs < 1e-9' >/dev/null
}
check "park: the model holds the best epoch's parameters (valid MRR $(fig park-full best_valid_mrr))" \
    same_mrr park-full
check "buffer: the model holds the best epoch's parameters (valid MRR $(fig buffer-full best_valid_mrr))" \
    same_mrr buffer-full
check "device: the model holds the best epoch's parameters (valid MRR $(fig device-full best_valid_mrr))" \
    same_mrr device-full
check "the best epoch is not the last one (else the restore is untested)" \
    test "$(fig park-full best_epoch)" -lt "$(fig park-full epochs)" -a \
    "$(fig buffer-full best_epoch)" -lt "$(fig buffer-full epochs)"
check "out of core the snapshot keeps no rows in memory, parked it does" \
    test "$(fig buffer-full snapshot_bytes_in_memory)" = 0 -a \
    "$(fig park-full snapshot_bytes_in_memory)" -gt 0
check "a validated epoch's log line holds its valid MRR" sh -c \
    "grep '\"step\"' park-full/train_log.jsonl | jq -se 'length == $(fig park-full epochs) and all(.valid_mrr > 0 and .ranks == 1)' >/dev/null"

q="--no_checkpoint --epochs 8"
check "--max_step 50 cuts the second epoch" $t $q --max_step 50 ds ms
check "--max_step: stopped by max_step at step 50 after epoch 2" test \
    "$(fig ms stopped_by) $(fig ms steps) $(fig ms epochs)" = "max_step 50 2"
check "--max_step: the cut epoch trains fewer buckets" test \
    "$(grep -c '"epoch": 2, "round"' ms/train_log.jsonl)" -lt \
    "$(grep -c '"epoch": 1, "round"' ms/train_log.jsonl)"
check "--time_budget stops after the epoch that spends it" $t $q \
    --time_budget 1e-9 ds tb
check "--time_budget: stopped by time_budget after epoch 1" test \
    "$(fig tb stopped_by) $(fig tb epochs)" = "time_budget 1"
check "--target_mrr 0.3 stops at the first epoch that reaches it" $t $q \
    --valid_every 1 --target_mrr 0.3 ds tm
check "--target_mrr: the last epoch reaches 0.3, none before" sh -c \
    "test $(fig tm stopped_by) = target_mrr && grep '\"step\"' tm/train_log.jsonl |
     jq -se '(.[-1].valid_mrr >= 0.3) and ([.[:-1][].valid_mrr] | all(. < 0.3))' >/dev/null"
check "without validation: no best epoch, stopped by epochs" test \
    "$(fig ms best_epoch) $(kg-train -q --num_thread 1 --epochs 2 --partitions p4 --no_checkpoint ds plain && fig plain stopped_by)" = \
    "null epochs"
