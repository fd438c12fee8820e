# Checkpoints and --resume: a run split in two, or killed and resumed,
# gives bit-identical embeddings to an uninterrupted run (one thread,
# fixed seed); a killed run leaves no model dir, only its checkpoint.
. "$KG_TOP/tests/cli/lib.sh"
plan 24
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
t="kg-train -q --model_name RotatE --hidden_dim 32 --num_thread 1 --seed 5"
t="$t --batch_size 256 --neg_sample_size 32 -adv"

check "uninterrupted 6 epochs" $t --epochs 6 ds full
check "first 3 epochs, checkpoint kept" $t --epochs 3 --keep_checkpoint \
    ds part
check "checkpoint records 3 epochs" sh -c \
    'jq -e ".epoch == 3" part.ckpt/state.json >/dev/null'
check "resume to 6 epochs" $t --epochs 6 --resume --checkpoint_dir \
    part.ckpt ds resumed
check "resumed entities bit-identical" cmp -s full/entities.npy \
    resumed/entities.npy
check "resumed relations bit-identical" cmp -s full/relations.npy \
    resumed/relations.npy
check "resumed optimiser state bit-identical" cmp -s \
    full/entity_state.npy resumed/entity_state.npy
check "resumed log continues the first" test \
    "$(jq -s 'map(.epoch) | join(",")' resumed/train_log.jsonl)" = '"1,2,3,4,5,6"'

# Kill longer runs just after a checkpoint (the test hook signals the
# process itself, so no timer races a fast machine), then resume them:
# SIGTERM runs the clean-up handler, SIGKILL leaves what a crash leaves.
for sig in TERM KILL; do
	o=long$sig
	KG_TEST_KILL_AFTER_CKPT=3:$sig $t --epochs 60 ds $o 2>/dev/null
	check "SIG$sig after checkpoint 3 stopped the run" test $? -ne 0
	check "SIG$sig: killed run left no model dir" test ! -e $o
	check "SIG$sig: checkpoint records 3 epochs" sh -c \
	    "jq -e '.epoch == 3' $o.ckpt/state.json >/dev/null"
	check "SIG$sig: killed run resumes" $t --epochs 60 --resume ds $o
	check "SIG$sig: no checkpoint after the resumed run" test ! -e $o.ckpt
done
check "SIGTERM left no temporary" sh -c '! ls -a | grep -q "^longTERM.*\.tmp\."'
check "uninterrupted 60 epochs" $t --epochs 60 ds long_ref
check "SIGTERM: killed + resumed = uninterrupted" cmp -s \
    longTERM/entities.npy long_ref/entities.npy
check "SIGKILL: killed + resumed = uninterrupted" cmp -s \
    longKILL/entities.npy long_ref/entities.npy
# Without -q, which mutes the warning this checks.
${t/-q /} --epochs 1 --resume ds fresh 2>fresh.err
check "--resume without a checkpoint: exit 0 and a model" \
    test $? -eq 0 -a -s fresh/entities.npy
check "--resume without a checkpoint: says it starts afresh" grep -q \
    "^kg-train: warning: no checkpoint 'fresh.ckpt' to resume from; starting afresh$" \
    fresh.err
