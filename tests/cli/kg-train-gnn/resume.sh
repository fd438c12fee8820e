# GNN checkpoints and --resume: a run split in two gives bit-identical
# outputs to an uninterrupted one, as one process (mini-batches with
# dropout, so every RNG draw counts) and as 2 ranks on 2 expanded parts;
# a checkpoint that does not fit the run (dims, rank count) is refused
# with exit 1 and no output; a run killed after a checkpoint resumes to
# what an uninterrupted run gives; the default checkpoint is removed after
# success; the training time of --time_budget goes on from the
# checkpoint's, and 2 ranks stop after the same epoch when it is spent.
source "$KG_TOP/tests/cli/lib.sh"
plan 39

TRAIN=$KG_BIN/kg-train
GEN=$KG_BUILD/aux/kg_gen_enterprise
if [ ! -x "$GEN" ]; then
	skip_all "gnn resume: kg_gen_enterprise is not built"
fi
enterprise_fixture 300 2 ||
    { notok "gnn resume: pipeline up to kg-expand"; exit 1; }

t="$TRAIN -q --model_name RGCN --features feat --batch_size 256 --lr 0.01"
t="$t --gnn_hidden 16 --hidden_dim 16 --num_thread 1 --seed 3"
same() {
	for f in entities.npy relations.npy gnn_weights.npy; do
		cmp -s "$1/$f" "$2/$f" || return 1
	done
}
# One process, mini-batches (fan-outs draw from the RNG too).
m="--fanout 4,4 --dropout 0.2"
check "gnn resume: uninterrupted 4 epochs" $t $m --epochs 4 ds full
check "gnn resume: no checkpoint left after success" test ! -e full.ckpt
check "gnn resume: first 2 epochs, checkpoint kept" $t $m --epochs 2 \
    --keep_checkpoint ds half
check "gnn resume: checkpoint records 2 epochs" \
    grep -q '"epoch": 2' half.ckpt/state.json
cp -R half.ckpt budget.ckpt
check "gnn resume: resume to 4 epochs" $t $m --epochs 4 --resume \
    --checkpoint_dir half.ckpt ds resumed
check "gnn resume: resumed run is bit-identical" same full resumed
# The checkpoint's training time, and a budget it has spent already:
# the resumed run stops after one epoch more.
secs=$(jq .train_seconds budget.ckpt/state.json)
check "gnn resume: the checkpoint holds the training time" \
    jq -e '.train_seconds >= 1e-9' budget.ckpt/state.json
check "gnn resume: resumed run counts every epoch" \
    jq -e '.figures.epochs == 4' resumed/manifest.json
check "gnn resume: resumed run's training time goes on" \
    jq -e --argjson s "$secs" '.figures.train_seconds >= $s' \
    resumed/manifest.json
check "gnn resume: resume with a spent budget" $t $m --epochs 10 \
    --resume --checkpoint_dir budget.ckpt --time_budget "$secs" ds budget
check "gnn resume: a spent budget stops after one epoch more" \
    jq -e '.figures.stopped_by == "time_budget" and .figures.epochs == 3' \
    budget/manifest.json

# A checkpoint that does not fit.
expect_fail "gnn resume: other dims refused" 1 "gnn_dims" \
    $t $m --epochs 4 --hidden_dim 8 --resume --checkpoint_dir half.ckpt \
    ds bad
check "gnn resume: refused resume left no output" test ! -e bad

# Two ranks on two expanded parts.
if command -v mpirun >/dev/null; then
	MPI="timeout 60 mpirun --oversubscribe -np 2"
	x="--expanded x2 --dropout 0.2"
	check "gnn resume: 2 ranks, 3 epochs" $MPI $t $x --epochs 3 ds mfull
	check "gnn resume: 2 ranks, 1 epoch, checkpoint kept" $MPI $t $x \
	    --epochs 1 --keep_checkpoint ds mhalf
	check "gnn resume: every rank wrote its state" test -s \
	    mhalf.ckpt/rank-000-learned.npy -a -s mhalf.ckpt/rank-001-learned.npy
	check "gnn resume: 2 ranks resume to 3 epochs" $MPI $t $x --epochs 3 \
	    --resume --checkpoint_dir mhalf.ckpt ds mresumed
	check "gnn resume: 2 ranks resumed bit-identical" same mfull mresumed
	check "gnn resume: 2 ranks' training time goes on" \
	    jq -e --slurpfile h mhalf/manifest.json \
	    '.figures.train_seconds >= $h[0].figures.train_seconds' \
	    mresumed/manifest.json
	check "gnn resume: 2 ranks with a time budget" $MPI $t $x \
	    --epochs 3 --time_budget 1e-6 --no_checkpoint ds mbudget
	check "gnn resume: 2 ranks stop after the same epoch" \
	    jq -e '.figures.stopped_by == "time_budget" and .figures.epochs == 1' \
	    mbudget/manifest.json
	expect_fail "gnn resume: other rank count refused" 1 \
	    "same number of ranks" $t --dropout 0.2 --epochs 3 --resume \
	    --checkpoint_dir mhalf.ckpt ds mbad
	check "gnn resume: rank mismatch left no output" test ! -e mbad
else
	skip_section 10 "gnn resume: mpirun is not installed"
fi

# Kill longer runs just after their 5th checkpoint (the test hook signals
# the process itself, so no timer races a fast machine), then resume:
# SIGTERM runs the clean-up handler, SIGKILL leaves what a crash leaves.
for sig in TERM KILL; do
	o=long$sig
	KG_TEST_KILL_AFTER_CKPT=5:$sig $t --dropout 0.2 --epochs 40 ds $o \
	    2>/dev/null
	check "gnn resume: SIG$sig after checkpoint 5 stopped the run" \
	    test $? -ne 0
	check "gnn resume: SIG$sig: killed run left no model dir" test ! -e $o
	check "gnn resume: SIG$sig: checkpoint records 5 epochs" \
	    grep -q '"epoch": 5' $o.ckpt/state.json
	check "gnn resume: SIG$sig: killed run resumes" $t --dropout 0.2 \
	    --epochs 40 --resume ds $o
	check "gnn resume: SIG$sig: no checkpoint after the resumed run" \
	    test ! -e $o.ckpt
done
check "gnn resume: SIGTERM left no temporary" \
    sh -c '! ls -a | grep -q "^longTERM.*\.tmp\."'
check "gnn resume: uninterrupted 40 epochs" $t --dropout 0.2 \
    --epochs 40 --no_checkpoint ds long_ref
check "gnn resume: SIGTERM: killed + resumed = uninterrupted" \
    same longTERM long_ref
check "gnn resume: SIGKILL: killed + resumed = uninterrupted" \
    same longKILL long_ref
# Without -q, which mutes the warning this checks.
${t/-q /} --epochs 1 --resume ds fresh 2>fresh.err
check "gnn resume: --resume without a checkpoint: exit 0 and a model" \
    test $? -eq 0 -a -s fresh/entities.npy
check "gnn resume: --resume without a checkpoint: says it starts afresh" \
    grep -q "^kg-train: warning: no checkpoint 'fresh.ckpt' to resume from; starting afresh$" \
    fresh.err
