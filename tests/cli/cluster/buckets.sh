# Bucket training across hosts that share no filesystem: 2 and 4 hosts of
# tests/cluster (network namespaces on a bridge, TCP between them, each
# with a private scratch directory) give the same bits as as many ranks
# on one host; the model and the checkpoint land on rank 0's host alone,
# and a run resumed there continues where it stopped.
. "$KG_TOP/tests/cli/lib.sh"
. "$KG_TOP/tests/cluster/cluster.sh"
echo "1..10"
names="2h-model-place 2h-entities 2h-relations 2h-ckpt 2h-resume 4h-entities
4h-relations tcp-traffic teardown-ns teardown-links"
if ! why=$(cluster_usable); then
	for n in $names; do skip "cluster $n: $why"; done
	exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" && kg-partition -q -p 4 -o p4 ds &&
    kg-partition -q -p 8 -o p8 ds || { notok "umls and its partitions"; exit 0; }
t="$KG_BIN/kg-train -q --model_name DistMult --hidden_dim 16 --num_thread 1"

cluster_up 4 || { notok "cluster of 4 hosts came up"; exit 0; }
id=$CLUSTER_ID
for i in 1 2 3 4; do
	cp -R ds p4 p8 "$(cluster_dir $i)/" || notok "staging on host $i"
done
h1=$(cluster_dir 1) h2=$(cluster_dir 2) S=$CLUSTER_SCRATCH

# The references: 2 and 4 ranks on this host, one filesystem.
mpirun -np 2 $t --epochs 3 --partitions p4 ds one2 &&
    mpirun -np 4 $t --epochs 2 --partitions p8 ds one4 ||
    notok "one-host references"

cluster_mpirun -np 2 $t --epochs 3 --keep_checkpoint --partitions $S/p4 \
    $S/ds $S/m2
check "cluster 2 hosts: the model is on rank 0's host, not the other's" \
    test -s "$h1/m2/entities.npy" -a ! -e "$h2/m2"
check "cluster 2 hosts = 1 host x 2 ranks: entities bit for bit" \
    cmp -s one2/entities.npy "$h1/m2/entities.npy"
check "cluster 2 hosts = 1 host x 2 ranks: relations bit for bit" \
    cmp -s one2/relations.npy "$h1/m2/relations.npy"
check "cluster 2 hosts: the checkpoint holds all 4 partitions on rank 0's host" \
    test "$(ls "$h1"/m2.ckpt/entities-p*.npy | wc -l)" = 4 -a ! -e "$h2/m2.ckpt"

# Two epochs, then resumed to three from rank 0's checkpoint: rank 1's
# partitions travel back to it over the network.
cluster_mpirun -np 2 $t --epochs 2 --keep_checkpoint --partitions $S/p4 \
    $S/ds $S/r2 &&
    cluster_mpirun -np 2 $t --epochs 3 --resume --force --partitions \
    $S/p4 $S/ds $S/r2
check "cluster 2 hosts: 2 epochs resumed to 3 = 3 epochs, bit for bit" \
    cmp -s one2/entities.npy "$h1/r2/entities.npy"

cluster_mpirun -np 4 $t --epochs 2 --partitions $S/p8 $S/ds $S/m4
check "cluster 4 hosts = 1 host x 4 ranks: entities bit for bit" \
    cmp -s one4/entities.npy "$h1/m4/entities.npy"
check "cluster 4 hosts = 1 host x 4 ranks: relations bit for bit" \
    cmp -s one4/relations.npy "$h1/m4/relations.npy"
# The partitions crossed host 2's link (a DistMult partition of UMLS at
# d=16 with its state is about 2 kB; two runs move dozens of them).
rx=$(cat /sys/class/net/kg${id}v2/statistics/rx_bytes 2>/dev/null || echo 0)
check "cluster: the ranks talked over host 2's link ($rx bytes)" \
    test "$rx" -gt 50000

cluster_down
check "cluster: no namespace left" sh -c "! ip netns list | grep -q '^kg${id}h'"
check "cluster: no link left" sh -c "! ip -o link show | grep -q 'kg${id}[vb]'"
