# kg-train's device trainer (lib/kge/train_device.h) end to end without a
# GPU: the test hook KG_TRAIN_SEAM=cpu runs it on the CPU backend through
# the same path --device cuda takes (options, checkpoints, resume, model
# dir, manifest).  Its filtered test MRR is within 0.005 of the CPU
# trainer's at the same settings and seed; the options it does not take
# are refused with exit 2 and one line, writing nothing.
. "$KG_TOP/tests/cli/lib.sh"
plan 23
if ! command -v jq >/dev/null; then
	skip_all "kg-train device trainer: jq is not installed"
fi
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
t="kg-train -q --num_thread 1 --no_checkpoint --batch_size 256
    --neg_sample_size 32 --lr 0.1"
mrr() {		# MODEL_DIR: filtered test MRR
	kg-eval -q ds "$1" | jq '.by_ties.realistic.both.mrr'
}
within() {	# NAME A B TOL
	if awk -v a="$2" -v b="$3" -v t="$4" \
	    'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; then
		ok "$1 ($2 against $3)"
	else
		notok "$1 ($2 against $3, more than $4 apart)"
	fi
}

for m in "DistMult --hidden_dim 64 --epochs 8" \
    "ComplEx --hidden_dim 64 --epochs 8" \
    "TransE_l2 --hidden_dim 32 --gamma 6 -adv --epochs 8"; do
	set -- $m
	check "$1: the device trainer trains" env KG_TRAIN_SEAM=cpu \
	    $t --model_name $m ds seam_$1
	check "$1: the CPU trainer trains" $t --model_name $m ds cpu_$1
	within "$1: MRR within 0.005 of the CPU trainer's" \
	    "$(mrr seam_$1)" "$(mrr cpu_$1)" 0.005
done
check "the manifest names the device trainer" test \
    "$(jq -r '.figures.trainer' seam_DistMult/manifest.json)" = device
check "and the CPU trainer's has no trainer key" test \
    "$(jq -r '.figures.trainer' cpu_DistMult/manifest.json)" = null
check "the loss falls" sh -c "jq -se '.[0].loss > 1.2 * .[-1].loss' \
    seam_DistMult/train_log.jsonl >/dev/null"
err=$(KG_TRAIN_SEAM=cpu kg-train --model_name DistMult --hidden_dim 8 \
    --epochs 1 --num_thread 1 --no_checkpoint ds seam_say 2>&1 >/dev/null)
check "stderr says where it trains" test \
    "$(printf '%s\n' "$err" | head -1)" = "kg-train: training on $(jq -r .figures.backend seam_say/manifest.json)"

# Checkpoints and --resume: a run split in two gives the same bits.
r="kg-train -q --num_thread 1 --model_name RotatE --hidden_dim 32 -adv
    --gamma 6 --batch_size 256 --neg_sample_size 32"
check "uninterrupted 4 epochs" env KG_TRAIN_SEAM=cpu $r --epochs 4 ds full
check "2 epochs, checkpoint kept" env KG_TRAIN_SEAM=cpu $r --epochs 2 \
    --keep_checkpoint ds part
check "resumed to 4 epochs" env KG_TRAIN_SEAM=cpu $r --epochs 4 --resume \
    --checkpoint_dir part.ckpt ds resumed
check "resumed entities bit-identical" cmp -s full/entities.npy \
    resumed/entities.npy
check "resumed relations and state bit-identical" sh -c \
    'cmp -s full/relations.npy resumed/relations.npy &&
    cmp -s full/entity_state.npy resumed/entity_state.npy'

# What the device trainer does not take.
expect_fail "1-vs-all is refused" 2 \
    "^kg-train: 1-vs-all \(--one_vs_all, --one_vs_all_after\) is not supported on a device yet \(use --device cpu\)$" \
    env KG_TRAIN_SEAM=cpu $t --model_name DistMult --one_vs_all --epochs 1 ds no1
expect_fail "gradient clipping is refused" 2 \
    "^kg-train: gradient clipping \(--max_grad_norm\) is not supported on a device" \
    env KG_TRAIN_SEAM=cpu $t --model_name DistMult --max_grad_norm 1 ds no2
expect_fail "data-parallel SGD refuses 1-vs-all on a device as well" 2 \
    "^kg-train: 1-vs-all \(--one_vs_all, --one_vs_all_after\) is not supported on a device yet" \
    env KG_TRAIN_SEAM=cpu $t --model_name DistMult --dist ssgd \
    --one_vs_all_after 2 ds no3
expect_fail "--deterministic is refused" 2 \
    "^kg-train: --deterministic repeats a run bit for bit on the CPU only" \
    env KG_TRAIN_SEAM=cpu $t --model_name DistMult --deterministic ds no4
check "the refusals wrote nothing" sh -c \
    'test ! -e no1 && test ! -e no2 && test ! -e no3 && test ! -e no4 &&
    test ! -e no1.ckpt'
