# kg-train --partitions under mpirun runs the epoch loop on every rank:
# a time budget stops every rank after the same epoch, and the epoch
# lines are the other trainers' with the traffic added.  Validation and
# --max_step need one process (each rank holds only some partitions) and
# are refused with nothing written.
source "$KG_TOP/tests/cli/lib.sh"
plan 6

if ! command -v mpirun >/dev/null; then
	skip_all "dist buckets loop: mpirun is not installed"
fi
MPI="timeout 60 mpirun --oversubscribe"
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" && kg-partition -q -m random -p 4 -o p4 ds ||
    { notok "dist: ingest and partition umls"; exit 1; }
a="-q --num_thread 1 --hidden_dim 16 --epochs 3 --partitions p4"

$MPI -np 2 kg-train $a --valid_every 1 ds v 2>err.v
rc=$?
check "dist: --valid_every on 2 ranks is refused (exit $rc)" sh -c \
    "test $rc -eq 1 && grep -q '^kg-train: --valid_every with partitions trains in one process; under mpirun each rank holds only some partitions$' err.v"
check "dist: the refused run wrote nothing" test ! -e v -a ! -e v.ckpt
$MPI -np 2 kg-train $a --max_step 10 ds m 2>err.m
rc=$?
check "dist: --max_step on 2 ranks is refused, nothing written (exit $rc)" sh -c \
    "test $rc -eq 1 -a ! -e m -a ! -e m.ckpt && grep -q '^kg-train: --max_step with partitions trains in one process' err.m"
check "dist: --time_budget on 2 ranks" $MPI -np 2 kg-train $a --no_checkpoint \
    --time_budget 1e-9 ds t
check "dist: every rank stopped by the time budget after epoch 1" test \
    "$(jq -r '.figures | "\(.stopped_by) \(.epochs)"' t/manifest.json)" = "time_budget 1"
$MPI -np 2 kg-train $a --no_checkpoint ds e 2>/dev/null
check "dist: one epoch line per epoch, with steps, ranks and bytes sent" sh -c \
    "grep '\"step\"' e/train_log.jsonl | jq -se 'length == 3 and all(.step > 0 and .ranks == 2 and .bytes_sent > 0 and (.valid_mrr | not))' >/dev/null"
