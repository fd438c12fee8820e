# What kg-train says on stderr when it is not a terminal (issue 32, item
# 9): one plain line an epoch, in one format for the shallow trainer, the
# GNN trainer and the bucket driver; then always the stop and, when it
# validated, the epoch whose parameters the model keeps (a script learns
# which epoch it got); nothing under -q.  The ETA never passes what
# --time_budget leaves.  Numbers are replaced by N before the whole stderr
# is compared with its expected text.
. "$KG_TOP/tests/cli/lib.sh"
echo "1..12"
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
t="kg-train --model_name DistMult --hidden_dim 16 --num_thread 1 --seed 5"
t="$t --batch_size 256 --neg_sample_size 16 --no_checkpoint --force"
# shape FILE: its lines with every number replaced by N.
shape() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g' "$1"; }
fig() { jq -r ".figures.$2" "$1/manifest.json"; }

$t --epochs 4 --valid_every 2 ds m4 2>err4 | cat
want="kg-train: epoch N/N: loss N, N triples/s, N s, eta N s
kg-train: epoch N/N: loss N, N triples/s, N s, valid MRR N, eta N s
kg-train: epoch N/N: loss N, N triples/s, N s, eta N s
kg-train: epoch N/N: loss N, N triples/s, N s, valid MRR N, eta N s
kg-train: stopped by epochs after epoch N, step N
kg-train: keeping the parameters of epoch N (valid MRR N)"
check "shallow, into a file: a line an epoch and the summary" \
    test "$(shape err4)" = "$want"
check "shallow: the epochs counted 1/4 to 4/4" test "$(grep -o 'epoch [0-9]*/4' err4 |
    tr '\n' ' ')" = "epoch 1/4 epoch 2/4 epoch 3/4 epoch 4/4 "
check "shallow: the last epoch kept is named" \
    grep -qx 'kg-train: keeping the parameters of epoch 4 (valid MRR [0-9.]*)' err4

# Early stopping: the epoch kept is the manifest's best, not the last.
$t --lr 0.5 --epochs 30 --valid_every 1 --patience 4 ds es 2>erres
best=$(fig es best_epoch) last=$(fig es epochs)
check "early stopping: stopped by early_stopping after epoch $last" \
    grep -qx "kg-train: stopped by early_stopping after epoch $last, step [0-9]*" erres
check "early stopping: keeps epoch $best (< $last), as the manifest says" \
    sh -c "[ $best -lt $last ] && grep -qx 'kg-train: keeping the parameters of epoch $best (valid MRR [0-9.]*)' erres"

$t -q --epochs 4 --valid_every 2 ds q 2>errq
check "-q: nothing on stderr" test ! -s errq

# The time budget bounds the ETA: 1 second of training in an unbounded
# number of epochs.
$t --epochs 1000000 --time_budget 1 ds tb 2>errtb
etas=$(sed -n 's/.*, eta \([0-9]*\) s$/\1/p' errtb)
check "time budget: epoch lines with an ETA" test -n "$etas"
check "time budget: every ETA at most the 1 s budget" \
    test "$(printf '%s\n' $etas | sort -n | tail -1)" -le 1
check "time budget: the stop is named" \
    grep -qx "kg-train: stopped by time_budget after epoch [0-9]*, step [0-9]*" errtb

# The GNN trainer: the same lines.
kg-train --model_name RGCN --layers 1 --gnn_hidden 8 --hidden_dim 8 \
    --epochs 2 --valid_every 2 --batch_size 2048 --neg_sample_size 2 \
    --num_thread 1 --no_checkpoint --force ds g 2>errg
want="kg-train: epoch N/N: loss N, N triples/s, N s, eta N s
kg-train: epoch N/N: loss N, N triples/s, N s, valid MRR N, eta N s
kg-train: stopped by epochs after epoch N, step N
kg-train: keeping the parameters of epoch N (valid MRR N)"
check "GNN: the same lines" test "$(shape errg)" = "$want"

# The bucket driver: the same lines, with the bytes sent.
if ! command -v mpirun >/dev/null; then
	skip "buckets: mpirun is not installed"
	skip "buckets: mpirun is not installed"
	exit 0
fi
kg-partition -q -m random -p 4 -o p4 ds
timeout 60 mpirun --oversubscribe -np 2 $t --epochs 2 --partitions p4 \
    ds b 2>errb
want="kg-train: epoch N/N: loss N, N triples/s, N s, N bytes sent, eta N s
kg-train: epoch N/N: loss N, N triples/s, N s, N bytes sent, eta N s
kg-train: stopped by epochs after epoch N, step N"
check "buckets: a line an epoch and the stop, in the same format" test "$(shape errb)" = "$want"
check "buckets: the last epoch's ETA is 0" grep -q 'epoch 2/2: .*, eta 0 s$' errb
