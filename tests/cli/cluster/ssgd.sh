# GNN training (synchronous SGD on kg-expand parts) and distributed
# evaluation across 2 hosts of tests/cluster that share no filesystem:
# each rank reads its part from its own host's disk; the result equals 2
# ranks on one host bit for bit; the checkpoint, with every rank's rows
# shipped to rank 0, lands on rank 0's host alone, and a run killed there
# resumes to the uninterrupted result; a lost host ends the run with rank
# 0's line naming the epoch and the checkpoint; kg-eval on 2 hosts reports
# what one process reports; a part missing on host 2 is named, with the
# host.
. "$KG_TOP/tests/cli/lib.sh"
. "$KG_TOP/tests/cluster/cluster.sh"
plan 11
if ! why=$(cluster_usable); then
	skip_all "cluster ssgd: $why"
fi
if [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ] || ! command -v jq >/dev/null; then
	skip_all "cluster ssgd: kg_gen_enterprise or jq is missing"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
enterprise_fixture 300 2 || { notok "cluster ssgd: pipeline up to kg-expand"; exit 1; }
a="-q --model_name RGCN --epochs 5 --batch_size 256 --lr 0.01"
a="$a --dropout 0.2 --gnn_hidden 32 --hidden_dim 32 --num_thread 1"
T=$KG_BIN/kg-train
mpirun --allow-run-as-root -np 2 $T $a --features feat --expanded x2 ds one ||
    notok "cluster ssgd: one-host reference"

cluster_up 2 || { notok "cluster ssgd: 2 hosts came up"; exit 1; }
for i in 1 2; do cp -R ds feat x2 "$(cluster_dir $i)/"; done
h1=$(cluster_dir 1) h2=$(cluster_dir 2) S=$CLUSTER_SCRATCH
b="$a --features $S/feat --expanded $S/x2"

cluster_mpirun -np 2 $T $b --keep_checkpoint $S/ds $S/m
same=1
for f in entities.npy relations.npy gnn_weights.npy; do
	cmp -s one/$f "$h1/m/$f" || same=0
done
check "cluster ssgd: 2 hosts = 1 host x 2 ranks, bit for bit" test $same = 1
check "cluster ssgd: the model is on rank 0's host only" test ! -e "$h2/m"
check "cluster ssgd: rank 1's rows are in rank 0's checkpoint" \
    test -s "$h1/m.ckpt/rank-001-learned.npy" -a ! -e "$h2/m.ckpt"

# Killed after the second checkpoint on both hosts, resumed.
cluster_mpirun -np 2 -x KG_TEST_KILL_AFTER_CKPT=2:KILL $T $b $S/ds $S/k \
    2>/dev/null
check "cluster ssgd: the killed run stopped" test $? -ne 0 -a ! -e "$h1/k"
check "cluster ssgd: its checkpoint holds 2 epochs" sh -c \
    "jq -e '.epoch == 2' '$h1/k.ckpt/state.json' >/dev/null"
check "cluster ssgd: it resumes across the hosts" \
    cluster_mpirun -np 2 $T $b --resume $S/ds $S/k
same=1
for f in entities.npy relations.npy gnn_weights.npy; do
	cmp -s one/$f "$h1/k/$f" || same=0
done
check "cluster ssgd: killed + resumed = uninterrupted, bit for bit" \
    test $same = 1

# Host 2 lost mid-run: Open MPI ends rank 0 with a signal, and rank 0's
# line says the epoch it was in and the checkpoint on disk (or the one
# before, when the signal came as the next was committed).
cluster_mpirun -np 2 $T $b --epochs 500 $S/ds $S/lost 2>err &
job=$!
for _ in $(seq 1 600); do
	e=$(jq -r '.epoch // 0' "$h1/lost.ckpt/state.json" 2>/dev/null || echo 0)
	[ "${e:-0}" -ge 2 ] && break
	sleep 0.1
done
ip netns pids "kg${CLUSTER_ID}h2" | xargs -r kill -9
wait $job
k=$(jq -r '.epoch' "$h1/lost.ckpt/state.json" 2>/dev/null || echo -1)
line=$(grep "^kg-train: rank 0 (host kg${CLUSTER_ID}h1) of 2 ended by a signal during epoch [0-9]*: .*; the last checkpoint is '$S/lost.ckpt', after epoch [0-9]*\$" err)
e=$(sed -n 's/.* during epoch \([0-9]*\):.*/\1/p' <<<"$line")
c=$(sed -n 's/.*, after epoch \([0-9]*\)$/\1/p' <<<"$line")
check "cluster ssgd: host 2 lost: kg-train's line: epoch ${e:-?}, checkpoint after ${c:-?} (on disk: $k)" \
    test -n "$line" -a "${e:-0}" -eq "$(( ${c:-0} + 1 ))" -a \
    \( "${c:-x}" = "$k" -o "${c:-x}" = "$(( k - 1 ))" \)

# kg-eval over 2 hosts, the model copied to each (the staging step).
cp -R "$h1/m" "$h2/m"
kg-eval -q ds one >want.json
cluster_mpirun -np 2 "$KG_BIN/kg-eval" -q $S/ds $S/m >got.json
check "cluster ssgd: kg-eval on 2 hosts ran" test -s got.json
strip() { jq -S 'del(.seconds_rank, .seconds_auc, .threads, .ranks, .dataset, .model_dir)' "$1"; }
check "cluster ssgd: kg-eval on 2 hosts = one process" \
    test "$(strip want.json)" = "$(strip got.json)"

# Host 2 lacks rank 1's part: rank 1 says which file and which host.
rm -rf "$h2/x2/part-001"
err=$(cluster_mpirun -np 2 $T $b $S/ds $S/nopart 2>&1)
rc=$?
check "cluster ssgd: a part missing on host 2: exit 1, one line naming it and the host" \
    test $rc -eq 1 -a "$(grep -c '^kg-train: ' <<<"$err")" -eq 1 -a \
    -n "$(grep -F "kg-train: '$S/x2/part-001' does not exist on host kg${CLUSTER_ID}h2 (rank 1 of 2): run one rank per part" <<<"$err")" \
    -a ! -e "$h1/nopart"
