# Bucket training with a long checkpoint path (issue 12, item 2): a path
# over 100 characters once truncated a checkpoint file name ("cannot stat
# .../entity_state-p0.npy") and left a parking directory in TMPDIR and a
# hidden .NAME.tmp.PID.  Now 1 and 2 ranks train and resume with it, and
# no run, failed or not, leaves anything in TMPDIR or a temporary beside
# the checkpoint.
source "$KG_TOP/tests/cli/lib.sh"
plan 9

if ! command -v mpirun >/dev/null; then
	skip_all "dist long paths: mpirun is not installed"
fi
MPI="timeout 60 mpirun --oversubscribe"
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "dist: ingest umls"; exit 1; }
kg-partition -q -m random -p 4 -o p4 ds || { notok "dist: partition"; exit 1; }
mkdir -p tmp
export TMPDIR=$PWD/tmp
long=$PWD/a-directory-whose-name-is-long-enough/to-push-the-checkpoint-path/past-one-hundred-characters
mkdir -p "$long"
[ ${#long} -gt 100 ] || notok "dist: the test path is not long (${#long})"
a="-q --model_name ComplEx --hidden_dim 16 --epochs 2 --seed 3
    --batch_size 256 --neg_sample_size 32 --num_thread 1 --partitions p4"

# leftovers: what a run must not leave behind.
leftovers() {
	ls -A tmp
	ls -A "$long" | grep -v -x -e ck1 -e ck2
	ls -A . | grep '\.tmp\.'
}

for n in 1 2; do
	if [ "$n" -eq 1 ]; then run=""; else run="$MPI -np 2"; fi
	$run kg-train $a --keep_checkpoint --checkpoint_dir "$long/ck$n" ds \
	    m$n 2>err$n
	rc=$?
	if [ "$rc" -eq 0 ] && [ -s m$n/entities.npy ] &&
	    [ -f "$long/ck$n/entities-p3.npy" ] &&
	    [ -f "$long/ck$n/entity_state-p3.npy" ]; then
		ok "dist: $n rank(s) train with a ${#long}-character checkpoint path"
	else
		notok "dist: $n rank(s), long checkpoint path: status $rc: $(tail -n 3 err$n)"
	fi
	$run kg-train $a --epochs 3 --resume --checkpoint_dir "$long/ck$n" \
	    ds r$n 2>err$n
	check "dist: $n rank(s) resume from the long path" test -s r$n/entities.npy
	left=$(leftovers)
	if [ -z "$left" ]; then
		ok "dist: $n rank(s) leave nothing in TMPDIR or beside the checkpoint"
	else
		notok "dist: $n rank(s) left: $left"
	fi
done

# Failed runs: a resume with the wrong rank count, and a rank that dies.
$MPI -np 1 kg-train $a --resume --checkpoint_dir "$long/ck2" ds x \
    >/dev/null 2>&1
check "dist: a refused resume fails" test ! -e x
KG_TEST_DIE_RANK=1 $MPI -np 2 kg-train $a --checkpoint_dir "$long/ck2" \
    --force ds dead >/dev/null 2>&1
check "dist: a run with a dead rank fails" test ! -e dead
left=$(leftovers)
if [ -z "$left" ]; then
	ok "dist: failed runs leave nothing in TMPDIR or beside the checkpoint"
else
	notok "dist: failed runs left: $left"
fi
