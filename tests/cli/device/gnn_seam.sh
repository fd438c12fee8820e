# GNN training's device step (lib/gnn/step_device.h, lib/gnntrain/device.c)
# end to end without a GPU: the test hook KG_TRAIN_SEAM=cpu runs it on the
# CPU backend through the path --device cuda takes.  On the generated
# enterprise graph (learned embeddings), R-GCN and RelGNN + DistMult on
# the whole graph and on sampled blocks: test AUC within 0.01 of the CPU
# step's at the same settings and seed; the manifest names the device
# trainer; a run
# cut at a checkpoint and resumed gives the uninterrupted run's bits (also
# with validation, whose MRRs equal the CPU step's, and the regulariser,
# while the parameters and Adam states live on the device); what
# the device step does not run is refused with one line, writing nothing.
. "$KG_TOP/tests/cli/lib.sh"
plan 28
if ! command -v jq >/dev/null; then
	skip_all "GNN device step: jq is not installed"
fi
enterprise_fixture 300 || { notok "enterprise fixture"; exit 0; }
t="kg-train -q --model_name RGCN --layers 2 --gnn_hidden 16 --hidden_dim 16
    --batch_size 128 --neg_sample_size 4 --num_thread 1 --no_checkpoint
    --lr 0.01 --dropout 0.2 --epochs 8"
auc() { kg-eval -q --auc ds "$1" | jq .auc; }
within() {	# NAME A B TOL
	if awk -v a="$2" -v b="$3" -v t="$4" \
	    'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; then
		ok "$1 ($2 against $3)"
	else
		notok "$1 ($2 against $3, more than $4 apart)"
	fi
}

for v in "full" "blocks --fanout 6,4 --blocks" \
    "relgnn --encoder RelGNN" \
    "relgnn_blocks --encoder RelGNN --fanout 6,4 --blocks"; do
	set -- $v
	n=$1
	shift
	check "$n: the device step trains" env KG_TRAIN_SEAM=cpu $t "$@" ds seam_$n
	check "$n: the CPU step trains" $t "$@" ds cpu_$n
	within "$n: AUC within 0.01 of the CPU step's" "$(auc seam_$n)" \
	    "$(auc cpu_$n)" 0.01
done
check "the manifest names the device trainer and backend" test \
    "$(jq -r '.figures.trainer + " " + .figures.device + " " + (.figures.backend | .[0:4])' \
    seam_full/manifest.json)" = "device cpu cpu:"
check "and the CPU step's manifest has no trainer key" test \
    "$(jq -r '.figures.trainer' cpu_full/manifest.json)" = null

# Checkpoints and --resume (the host keeps the state): the same bits.
r="$t --fanout 5,3 --epochs 4"
r=${r/--no_checkpoint/}
check "uninterrupted 4 epochs" env KG_TRAIN_SEAM=cpu $r --no_checkpoint ds whole
check "2 epochs, checkpoint kept" env KG_TRAIN_SEAM=cpu $r --epochs 2 \
    --keep_checkpoint ds half
check "resumed to 4 epochs" env KG_TRAIN_SEAM=cpu $r --resume \
    --checkpoint_dir half.ckpt ds resumed
check "resumed weights and relations bit-identical" sh -c \
    'cmp -s whole/gnn_weights.npy resumed/gnn_weights.npy &&
    cmp -s whole/relations.npy resumed/relations.npy'

# The state lives on the device between steps: validation (and its best
# snapshot) reads it back, and a resumed run pushes it again.  The device
# step samples the next batch while the device runs (lib/gnntrain/step.c,
# device_step): with dropout and sampling on one random stream, a draw out
# of the CPU step's order would change every epoch's MRR.
v="$r --reg 0.0001 --valid_every 1"
mrrs() { jq -r .valid_mrr "$1/train_log.jsonl" | tr '\n' ' '; }
check "validated: the device step trains" env KG_TRAIN_SEAM=cpu $v \
    --no_checkpoint ds vdev
check "validated: the CPU step trains" $v --no_checkpoint ds vcpu
check "each epoch's valid MRR equals the CPU step's" test \
    "$(mrrs vdev)" = "$(mrrs vcpu)"
check "validated, 2 epochs, checkpoint kept" env KG_TRAIN_SEAM=cpu $v \
    --epochs 2 --keep_checkpoint ds vhalf
check "validated, resumed to 4 epochs" env KG_TRAIN_SEAM=cpu $v --resume \
    --checkpoint_dir vhalf.ckpt ds vres
check "validated, resumed: the same bits" sh -c \
    'cmp -s vdev/gnn_weights.npy vres/gnn_weights.npy &&
    cmp -s vdev/relations.npy vres/relations.npy &&
    cmp -s vdev/entities.npy vres/entities.npy'

expect_fail "adaptive negatives are refused" 2 \
    "^kg-train: adaptive negatives \(--neg_candidates\) are not supported by GNN training on a device yet$" \
    env KG_TRAIN_SEAM=cpu $t --neg_candidates 2 ds no1
expect_fail "shared negatives are refused" 2 \
    "^kg-train: shared negatives \(--neg_chunk_size\) are not supported by GNN training on a device yet$" \
    env KG_TRAIN_SEAM=cpu $t --neg_chunk_size 4 ds no2
expect_fail "attribute features are refused" 1 \
    "^kg-train: GNN training on a device reads learned embeddings only: leave out --features or add --learned_only$" \
    env KG_TRAIN_SEAM=cpu $t --features feat ds no3
check "the refusals wrote nothing" sh -c \
    'test ! -e no1 && test ! -e no2 && test ! -e no3 && test ! -e no3.ckpt'
