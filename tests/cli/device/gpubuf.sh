# kg-train --device cuda --partitions DIR --gpu_buffer C: the device's
# partition buffer (a device tier, lib/store/dev_tier.h) end to end
# without a GPU, through the test hook KG_TRAIN_SEAM=cpu (the device
# trainer on the CPU backend, the path --device cuda takes).
#
# Accuracy on UMLS (ComplEx d=64, 20 epochs, seeds 1-3, filtered test MRR
# averaged), measured when written: the whole table on the device 0.8547;
# the buffer with C=2 of P=4 random partitions 0.8046 and of P=8 0.8089
# with the negative pool (--neg_pool 4096, the default), the CPU's
# out-of-core trainer's figures to every digit (each seed's too, and
# --neg_pool 16, whose slots repeat rows, and --neg_pool 0); without the
# pool, negatives from inside the bucket only, 0.7731 and 0.7268.  The
# checks guard the match with the CPU trainer, the tables, and the gap
# to the whole table.
. "$KG_TOP/tests/cli/lib.sh"
plan 30
if ! command -v jq >/dev/null; then
	skip_all "kg-train device partition buffer: jq is not installed"
fi
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" &&
    kg-partition -q -m random -p 4 -s 1 -o p4 ds &&
    kg-partition -q -m random -p 8 -s 1 -o p8 ds ||
    { notok "ingest and partition umls"; exit 0; }
t="kg-train -q --model_name ComplEx --hidden_dim 64 --epochs 20
    --num_thread 1 --no_checkpoint"
dev="env KG_TRAIN_SEAM=cpu"
mrr() {		# MODEL_DIR: filtered test MRR
	kg-eval -q --threads 1 ds "$1" | jq '.metrics.both.mrr'
}
avg() { awk '{ s += $1 } END { printf "%.4f\n", s / NR }'; }
within() {	# NAME A B TOL
	if awk -v a="$2" -v b="$3" -v t="$4" \
	    'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; then
		ok "$1 ($2 against $3)"
	else
		notok "$1 ($2 against $3, more than $4 apart)"
	fi
}

ran=1
for s in 1 2 3; do
	$dev $t --seed $s ds whole$s &&
	    $dev $t --seed $s --partitions p4 --gpu_buffer 2 ds dev4-$s &&
	    $dev $t --seed $s --partitions p8 --gpu_buffer 2 ds dev8-$s &&
	    $t --seed $s --partitions p4 --buffer_capacity 2 ds cpu4-$s &&
	    $t --seed $s --partitions p8 --buffer_capacity 2 ds cpu8-$s ||
	    ran=0
done
check "the runs train" test $ran = 1
whole=$(for s in 1 2 3; do mrr whole$s; done | avg)
for P in 4 8; do
	dv=$(for s in 1 2 3; do mrr dev$P-$s; done | avg)
	cp=$(for s in 1 2 3; do mrr cpu$P-$s; done | avg)
	echo "# MRR over seeds 1-3: whole table $whole, buffer P=$P C=2 $dv," \
	    "CPU out of core $cp"
	within "P=$P C=2: MRR within 0.0001 of the CPU's out-of-core trainer" \
	    "$dv" "$cp" 0.0001
	eval "dev$P=\$dv"
done
within "P=4 C=2: MRR within 0.06 of the whole table on the device" \
    "$dev4" "$whole" 0.06
within "P=8 C=2: MRR within 0.055 of the whole table on the device" \
    "$dev8" "$whole" 0.055
# The tables agree within rounding (measured: 1.4e-06 and 5.6e-06).
check "P=4 seed 1: the entity table within 5e-5 of the CPU's" \
    "$KG_BUILD/aux/npy_close" dev4-1/entities.npy cpu4-1/entities.npy 5e-5
check "P=8 seed 3: the entity table within 5e-5 of the CPU's" \
    "$KG_BUILD/aux/npy_close" dev8-3/entities.npy cpu8-3/entities.npy 5e-5
# A pool smaller than a partition (34 rows): its slots draw some rows
# twice, and their gradients step one after another.  And no pool.
for k in 16 0; do
	$dev $t --seed 1 --partitions p4 --gpu_buffer 2 --neg_pool $k ds \
	    devk$k && $t --seed 1 --partitions p4 --buffer_capacity 2 \
	    --neg_pool $k ds cpuk$k
	within "--neg_pool $k: MRR within 0.0001 of the CPU's" \
	    "$(mrr devk$k)" "$(mrr cpuk$k)" 0.0001
done

# The manifest: partitions, C, swaps and the order's count and bound
# (P=4, C=2: the order swaps 5 an epoch, its bound; the device keeps the
# partition that comes straight back and uploads 4 an epoch, fewer when
# the one the last state dropped is the next epoch's second state's:
# seed 1, 71 in 20 epochs; P=8: 27 an epoch and 498 uploads in 20).
f=dev4-1/manifest.json
check "the manifest names the device trainer" test \
    "$(jq -r '.figures.trainer' $f)" = device
check "the manifest gives P and C" test \
    "$(jq -c '[.figures.nparts, .figures.gpu_buffer_capacity]' $f)" = "[4,2]"
check "P=4: the order's swaps and bound over 20 epochs" test \
    "$(jq -c '[.figures.order_swaps, .figures.swaps_lower_bound]' $f)" = \
    "[100,100]"
check "P=4: 71 uploads in 20 epochs, 2 to fill the first state" test \
    "$(jq -c '[.figures.swaps, .figures.gpu_fills]' $f)" = "[71,2]"
check "P=8: the order's 27 an epoch, 498 uploads" test \
    "$(jq -c '[.figures.order_swaps, .figures.swaps_lower_bound,
    .figures.swaps]' dev8-1/manifest.json)" = "[540,540,498]"
check "the config records the negative pool" test \
    "$(jq -r '.config.neg_pool' $f)" = 4096
err=$($dev kg-train --model_name ComplEx --hidden_dim 8 --epochs 1 \
    --num_thread 1 --no_checkpoint --partitions p4 --gpu_buffer 2 ds say \
    2>&1 >/dev/null)
check "stderr says where it trains and how much is on the device" test \
    "$(printf '%s\n' "$err" | head -1)" = \
    "kg-train: training on $(jq -r .figures.backend say/manifest.json), 2 of 4 partitions on the device"
check "the epoch line gives the swaps" grep -q \
    "epoch 1/1: .*, 4 swaps to the device (the order's 5, at least 5)" \
    <<<"$err"

# --gpu_mem_budget: 3 partitions (2 to train, 1 to read ahead) give C=2.
pb=$(jq '.figures.partition_bytes' dev4-1/manifest.json)
check "--gpu_mem_budget of 3 partitions trains with C=2" $dev $t --epochs 2 \
    --partitions p4 --gpu_mem_budget $((3 * pb)) ds budget
check "and the manifest says C=2" test \
    "$(jq '.figures.gpu_buffer_capacity' budget/manifest.json)" = 2

# Disk -> RAM -> GPU: the host's partitions in the disk buffer change no
# bit of the result.
check "a disk buffer under the device trains" $dev $t --epochs 3 \
    --partitions p8 --gpu_buffer 2 --buffer_capacity 3 ds disk
check "the partitions came from disk" sh -c \
    "jq -e '.figures.bytes_read > 0 and .figures.buffer_capacity == 3' \
    disk/manifest.json >/dev/null"
check "in memory, the same run" $dev $t --epochs 3 --partitions p8 \
    --gpu_buffer 2 ds inmem
check "the disk buffer gives the same bits" cmp -s disk/entities.npy \
    inmem/entities.npy

# Checkpoints and --resume: the device refills from the checkpoint.
r="kg-train -q --model_name ComplEx --hidden_dim 32 --num_thread 1
    --partitions p4 --gpu_buffer 2"
$dev $r --epochs 4 ds full && $dev $r --epochs 2 --keep_checkpoint ds part &&
    $dev $r --epochs 4 --resume --checkpoint_dir part.ckpt ds resumed
check "resumed to 4 epochs: entities bit-identical" cmp -s \
    full/entities.npy resumed/entities.npy

# Settings that cannot work: one line, exit 2, nothing written.
expect_fail "C < 2 is refused" 2 \
    "^kg-train: --gpu_buffer: 1 is out of range \[2, 1048576\]$" \
    $dev $t --partitions p4 --gpu_buffer 1 ds no1
expect_fail "P < C is refused" 2 \
    "^kg-train: --gpu_buffer 5 is more than the 4 partitions$" \
    $dev $t --partitions p4 --gpu_buffer 5 ds no2
expect_fail "a budget under 3 partitions is refused" 2 \
    "^kg-train: --gpu_mem_budget $((3 * pb - 1)) holds 2 partitions of $pb bytes; the device needs 3 \(2 to train, 1 to read ahead\)" \
    $dev $t --partitions p4 --gpu_mem_budget $((3 * pb - 1)) ds no3
expect_fail "partitions on a device need a buffer size" 2 \
    "^kg-train: --partitions on a device needs --gpu_buffer or --gpu_mem_budget$" \
    $dev $t --partitions p4 ds no4
expect_fail "--gpu_buffer on the CPU is refused" 2 \
    "^kg-train: --gpu_buffer and --gpu_mem_budget need --partitions and --device cuda$" \
    $t --partitions p4 --gpu_buffer 2 ds no5
check "the refusals wrote nothing" sh -c 'for n in no1 no2 no3 no4 no5; do
    test ! -e $n && test ! -e $n.ckpt || exit 1; done'
