# kg-train refuses, before any training, an output or a checkpoint whose
# parent directory it cannot write into: the in-memory run, the
# partitioned run (in one process, out of core, under mpirun with 2
# ranks) and the GNN run (alone and under mpirun) each exit 1 with one
# line naming the directory, and leave nothing behind.  Root writes into
# a directory whatever its mode, so the parents here are a plain file
# and a directory that does not exist.
. "$KG_TOP/tests/cli/lib.sh"
plan 18
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
kg-partition -q -m random -p 4 -s 1 -o p4 ds || { notok "kg-partition"; exit 0; }
: >afile

# refused NAME WHAT DIR COMMAND...: the command exits 1 with exactly one
# "kg-train:" line, that it cannot write the WHAT (output or checkpoint)
# into DIR, and the working directory holds what it held before.  (Under
# mpirun, mpirun's own notice of the abort is not a kg-train line.)
refused() {
	local name=$1 what=$2 dir=$3 err rc before after lines; shift 3
	before=$(ls -A)
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	after=$(ls -A)
	lines=$(grep '^kg-train:' <<<"$err")
	if [ "$rc" -ne 1 ]; then
		notok "$name (exit $rc, wanted 1; stderr: $err)"
	elif [[ "$lines" != "kg-train: cannot write the $what into '$dir': "* ]] ||
	    [ "$(wc -l <<<"$lines")" -ne 1 ]; then
		notok "$name (stderr '$err', wanted one line: cannot write the $what into '$dir')"
	elif [ "$before" != "$after" ]; then
		notok "$name (left behind: $(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' '))"
	else
		ok "$name"
	fi
}

# Enough epochs that a run which trained first would be noticed.
t="kg-train -q --model_name DistMult --hidden_dim 8 --batch_size 512
    --neg_sample_size 8 --num_thread 1 --seed 1 --epochs 20"
g="kg-train -q --model_name RGCN --layers 1 --gnn_hidden 8 --hidden_dim 8
    --batch_size 512 --neg_sample_size 4 --num_thread 1 --seed 1 --epochs 20"

# driver NAME COMMAND...: the three refusals of one driver.
driver() {
	local name=$1; shift
	refused "$name: output under a file" output afile "$@" ds afile/out
	refused "$name: output under a missing directory" output nodir/sub \
	    "$@" ds nodir/sub/out
	refused "$name: checkpoint under a file" checkpoint afile \
	    "$@" --checkpoint_dir afile/ck ds out
}

driver "in memory" $t
driver "partitions" $t --partitions p4
driver "out of core" $t --partitions p4 --buffer_capacity 2
driver "gnn" $g
if command -v mpirun >/dev/null; then
	MPI="timeout 60 mpirun --oversubscribe -np 2"
	driver "partitions, 2 ranks" $MPI $t --partitions p4
	driver "gnn, 2 ranks" $MPI $g
else
	skip_section 6 "mpirun: mpirun is not installed"
fi
