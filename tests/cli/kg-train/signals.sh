# SIGTERM and SIGINT during a run that replaces a model (--force) leave
# the old model as it was and no temporary behind (issue 32, item 6).
# The test hook signals the process after its first checkpoint, with two
# OpenMP threads running, so no timer races the machine.
. "$KG_TOP/tests/cli/lib.sh"
plan 9
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
t="kg-train -q --model_name DistMult --hidden_dim 16 --num_thread 2 --seed 3"

check "a model to replace" $t --epochs 1 ds m
cp -r m m.orig
for sig in TERM INT; do
	rm -rf m.ckpt
	KG_TEST_KILL_AFTER_CKPT=1:$sig $t --force --epochs 50 ds m 2>err
	rc=$?
	want=$((128 + $(kill -l $sig)))
	check "SIG$sig: the run died of it (exit $want)" test $rc -eq $want
	check "SIG$sig: the old model is intact" diff -r m.orig m
	left=$(ls -A | grep -E '\.tmp\.|\.dead$|\.old\.')
	check "SIG$sig: no temporary left${left:+ ($left)}" test -z "$left"
	check "SIG$sig: nothing on stderr" test ! -s err
done
