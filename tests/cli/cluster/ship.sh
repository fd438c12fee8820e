# kg-train --ship_inputs on 2 hosts of tests/cluster whose inputs are on
# rank 0's host alone: rank 0 sends the other rank what it reads (the
# dataset and partitions; the dataset, features and that rank's expanded
# part) over MPI, and bucket and GNN training give the bits of 2 ranks on
# one host; the other host's disk is left as it was.
. "$KG_TOP/tests/cli/lib.sh"
. "$KG_TOP/tests/cluster/cluster.sh"
plan 5
if ! why=$(cluster_usable); then
	skip_all "cluster ship: $why"
fi
if [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ]; then
	skip_all "cluster ship: kg_gen_enterprise is missing"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
enterprise_fixture 300 2 || { notok "cluster ship: pipeline up to kg-expand"; exit 1; }
d=$(fixture_data umls)
kg-ingest -q -o uds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" && kg-partition -q -p 4 -o p4 uds ||
    { notok "cluster ship: umls and its partitions"; exit 1; }
T=$KG_BIN/kg-train
g="-q --model_name RGCN --epochs 3 --batch_size 256 --lr 0.01 --dropout 0.2"
g="$g --gnn_hidden 32 --hidden_dim 32 --num_thread 1"
b="-q --model_name DistMult --hidden_dim 16 --num_thread 1 --epochs 3"
mpirun --allow-run-as-root -np 2 $T $g --features feat --expanded x2 ds gref &&
    mpirun --allow-run-as-root -np 2 $T $b --partitions p4 uds bref ||
    notok "cluster ship: one-host references"

cluster_up 2 || { notok "cluster ship: 2 hosts came up"; exit 1; }
cp -R ds feat x2 uds p4 "$(cluster_dir 1)/"
h1=$(cluster_dir 1) h2=$(cluster_dir 2) S=$CLUSTER_SCRATCH

cluster_mpirun -np 2 $T $b --ship_inputs --partitions $S/p4 $S/uds $S/b
check "cluster ship: buckets with shipped inputs = one host, bit for bit" \
    cmp -s bref/entities.npy "$h1/b/entities.npy"
cluster_mpirun -np 2 $T $g --ship_inputs --features $S/feat --expanded $S/x2 \
    $S/ds $S/g
same=1
for f in entities.npy relations.npy gnn_weights.npy; do
	cmp -s gref/$f "$h1/g/$f" || same=0
done
check "cluster ship: GNN with shipped inputs = one host, bit for bit" \
    test $same = 1
check "cluster ship: the other host's disk is as it was" \
    test -z "$(ls -A "$h2" | grep -v '^\.tmp$')" -a -z "$(ls -A "$h2/.tmp")"
check "cluster ship: rank 0's inputs are unchanged" \
    cmp -s ds/train.npy "$h1/ds/train.npy"
check "cluster ship: the models are on rank 0's host" \
    test -s "$h1/b/entities.npy" -a -s "$h1/g/entities.npy"
