# GNN training's device step under mpirun (issue 31 item 5;
# lib/gnntrain/device_dist.c) without a GPU: the test hook
# KG_TRAIN_SEAM=cpu runs each rank's device step on the CPU backend; the
# gradients come back to the host, where the ranks average them as they
# do the CPU step's.  R-GCN + DistMult on the generated enterprise graph,
# 2 ranks, on the whole graph and on sampled blocks.
#
# Measured when written: test AUC 0.79619 (whole graph) and 0.81131
# (blocks), the CPU ranks' to every digit; the weights within 4.8e-7 and
# 4.5e-7 of theirs (the device step's float arithmetic).
. "$KG_TOP/tests/cli/lib.sh"
plan 7
if ! command -v mpirun >/dev/null || ! command -v jq >/dev/null; then
	skip_all "GNN device step under mpirun: mpirun or jq is not installed"
fi
enterprise_fixture 300 || { notok "enterprise fixture"; exit 0; }
MPI="timeout 300 mpirun --oversubscribe"
CLOSE=$KG_BUILD/aux/npy_close
t="kg-train -q --model_name RGCN --layers 2 --gnn_hidden 16 --hidden_dim 16
    --batch_size 128 --neg_sample_size 4 --num_thread 1 --no_checkpoint
    --lr 0.01 --dropout 0.2 --epochs 8"
auc() { kg-eval -q --auc ds "$1" | jq .auc; }

for v in "full" "blocks --fanout 6,4 --blocks"; do
	set -- $v
	n=$1
	shift
	$MPI -np 2 $t "$@" ds cpu_$n 2>err.txt &&
	    $MPI -np 2 env KG_TRAIN_SEAM=cpu $t "$@" ds dev_$n 2>>err.txt ||
	    notok "$n: 2 ranks failed: $(tail -n 3 err.txt)"
	check "$n: AUC within 0.01 of the CPU ranks' ($(auc dev_$n) against $(auc cpu_$n))" \
	    awk -v a="$(auc dev_$n)" -v b="$(auc cpu_$n)" \
	    'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.01) }'
	check "$n: weights and relations within 1e-4 of the CPU ranks' ($("$CLOSE" cpu_$n/gnn_weights.npy dev_$n/gnn_weights.npy 1))" \
	    sh -c "'$CLOSE' cpu_$n/gnn_weights.npy dev_$n/gnn_weights.npy 1e-4 >/dev/null &&
	    '$CLOSE' cpu_$n/relations.npy dev_$n/relations.npy 1e-4 >/dev/null"
	check "$n: the manifest names the device trainer" test \
	    "$(jq -r .figures.trainer dev_$n/manifest.json)" = device
done
# The ranks' gradients are averaged: one rank alone trains another model.
env KG_TRAIN_SEAM=cpu $t ds one
check "2 ranks are not one rank's copy" sh -c \
    "! '$CLOSE' one/gnn_weights.npy dev_full/gnn_weights.npy 1e-4 >/dev/null"
