# The paper-scale options of GNN training on a small generated graph:
# --batches_per_epoch N makes an epoch N batches shared by the ranks, so
# with N x batch = the training triples one epoch on 2 ranks draws every
# core triple of each rank exactly once (each rank's permutation comes
# back to its start) and N x batch = half of them leaves each rank half
# way; --lr_scale_ranks linear
# on 2 ranks is twice the learning rate; -q prints nothing,
# --progress a progress line; a run killed with SIGKILL after a
# checkpoint (the test hook) resumes to the bits of an uninterrupted run;
# bad values are refused.
source "$KG_TOP/tests/cli/lib.sh"
plan 16

TRAIN=$KG_BIN/kg-train
GEN=$KG_BUILD/aux/kg_gen_enterprise
if [ ! -x "$GEN" ] || ! command -v python3 >/dev/null; then
	skip_all "gnn paper: kg_gen_enterprise or python3 is missing"
fi
enterprise_fixture 350 2 ||
    { notok "gnn paper: pipeline up to kg-expand"; exit 1; }

# Element i of a 1-d .npy (little-endian, v1.0 header).
npy_at() {
	python3 - "$1" "$2" <<'PY'
import ast, struct, sys
b = open(sys.argv[1], "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
h = ast.literal_eval(b[10:10 + hl].decode())
size = {"<u8": 8, "<i8": 8, "<i4": 4}[h["descr"]]
fmt = {"<u8": "<Q", "<i8": "<q", "<i4": "<i"}[h["descr"]]
i = int(sys.argv[2])
print(struct.unpack(fmt, b[10 + hl + i * size:10 + hl + (i + 1) * size])[0])
PY
}
# The first dimension of a .npy.
npy_rows() {
	python3 - "$1" <<'PY'
import ast, struct, sys
b = open(sys.argv[1], "rb").read(4096)
hl = struct.unpack("<H", b[8:10])[0]
print(ast.literal_eval(b[10:10 + hl].decode())["shape"][0])
PY
}

n=$(npy_rows ds/train.npy)
# N batches of n / N positives (N divides n, n / N even if it can be; 1
# x n when n is prime).
N=1
for k in 16 12 10 9 8 7 6 5 4 3 2; do
	if [ $((n % k)) -eq 0 ] && { [ $N = 1 ] || [ $(((n / k) % 2)) = 0 ]; }
	then
		N=$k
		[ $(((n / k) % 2)) = 0 ] && break
	fi
done
bs=$((n / N))
t="$TRAIN -q --model_name RGCN --features feat --gnn_hidden 16"
t="$t --hidden_dim 16 --num_thread 1 --seed 3 --fanout 4,3 --blocks"
t="$t --neg_chunk_size 16 --neg_sample_size 4 --lr 0.01"

if command -v mpirun >/dev/null; then
	MPI="timeout 120 mpirun --oversubscribe -np 2"
	$MPI $t --expanded x2 --neg_pool_seeds --epochs 1 \
	    --batches_per_epoch $N --batch_size $bs --keep_checkpoint ds \
	    cover 2>err || notok "gnn paper: 2-rank epoch: $(cat err)"
	c0=$(npy_at cover.ckpt/rank-000-sampler.npy 4)
	c1=$(npy_at cover.ckpt/rank-001-sampler.npy 4)
	s0=$(npy_rows cover.ckpt/rank-000-order.npy)
	s1=$(npy_rows cover.ckpt/rank-001-order.npy)
	if [ "$c0" = 0 ] && [ "$c1" = 0 ] && [ $((s0 + s1)) -eq "$n" ] &&
	    [ "$s0" -gt 0 ] && [ "$s1" -gt 0 ]; then
		ok "gnn paper: a 2-rank epoch of $N x $bs draws each rank's $s0 + $s1 core triples once"
	else
		notok "gnn paper: 2-rank epoch: cursors $c0 $c1 over $s0 + $s1 of $n"
	fi
	# The fixture's n gives an even batch (see N above); if the
	# generator changes and it does not, say so rather than skip.
	if [ $((bs % 2)) -ne 0 ]; then
		notok "gnn paper: half an epoch: $n triples have no even batch"
	else
		$MPI $t --expanded x2 --neg_pool_seeds --epochs 1 \
		    --batches_per_epoch $N --batch_size $((bs / 2)) \
		    --keep_checkpoint ds half 2>/dev/null
		c0=$(npy_at half.ckpt/rank-000-sampler.npy 4)
		c1=$(npy_at half.ckpt/rank-001-sampler.npy 4)
		if [ $((c0 + c1)) -eq $((n / 2)) ] && [ "$c0" -gt 0 ] &&
		    [ "$c1" -gt 0 ]; then
			ok "gnn paper: half an epoch's worth stops each rank part way ($c0 + $c1)"
		else
			notok "gnn paper: half epoch: cursors $c0 + $c1, wanted $((n / 2))"
		fi
	fi
	# On 2 ranks --lr_scale_ranks linear is twice the learning rate.
	q="--expanded x2 --epochs 1 --batches_per_epoch 4 --batch_size 32"
	q="$q --no_checkpoint"
	$MPI ${t/--lr 0.01/--lr 0.02} $q ds lr2 2>/dev/null
	$MPI $t $q --lr_scale_ranks linear ds lrs 2>/dev/null
	if cmp -s lr2/gnn_weights.npy lrs/gnn_weights.npy &&
	    ! cmp -s lr2/gnn_weights.npy cover/gnn_weights.npy; then
		ok "gnn paper: --lr_scale_ranks linear doubles the rate on 2 ranks"
	else
		notok "gnn paper: --lr_scale_ranks linear"
	fi
else
	skip_section 3 "gnn paper: mpirun is not installed"
fi

# -q: nothing on stderr; --progress: a progress line with an ETA.
v="--epochs 2 --batches_per_epoch 3 --batch_size 32 --no_checkpoint"
$t $v ds quiet 2>err
check "gnn paper: -q prints nothing" test ! -s err
${t/-q /} $v --progress ds prog 2>err
check "gnn paper: --progress shows step and ETA" grep -q "step [1-3]/3 .*ETA" err
check "gnn paper: epoch lines without -q, as the shallow trainer writes them" grep -Eq "kg-train: epoch 2/2: loss [0-9.]+, [0-9]+ triples/s, [0-9.]+ s, eta [0-9]+ s$" err

# SIGKILL right after the second checkpoint (the test hook signals the
# process itself, so no timer races a fast machine), then --resume: the
# bits of an uninterrupted run.
l="--epochs 5 --batches_per_epoch 40 --batch_size 64"
KG_TEST_KILL_AFTER_CKPT=2:KILL $t $l ds long 2>/dev/null
check "gnn paper: SIGKILL after checkpoint 2 stopped the run" test $? -ne 0
check "gnn paper: killed run left no model dir" test ! -e long
check "gnn paper: checkpoint records 2 epochs" \
    grep -q '"epoch": 2' long.ckpt/state.json
check "gnn paper: killed run resumes" $t $l --resume ds long
check "gnn paper: uninterrupted run" $t $l --no_checkpoint ds long_ref
if cmp -s long/entities.npy long_ref/entities.npy &&
    cmp -s long/gnn_weights.npy long_ref/gnn_weights.npy &&
    cmp -s long/relations.npy long_ref/relations.npy; then
	ok "gnn paper: killed + resumed = uninterrupted"
else
	notok "gnn paper: killed + resumed differs"
fi

expect_fail "gnn paper: blocks need fan-outs" 2 "fanout" \
    $TRAIN -q --model_name RGCN --blocks ds bad1
expect_fail "gnn paper: batches per epoch positive" 2 "batches_per_epoch" \
    $TRAIN -q --model_name RGCN --batches_per_epoch 0 ds bad2
expect_fail "gnn paper: chunk size positive" 2 "neg_chunk_size" \
    $TRAIN -q --model_name RGCN --neg_chunk_size 0 ds bad3
expect_fail "gnn paper: learning-rate scaling by name" 2 "lr_scale_ranks" \
    $TRAIN -q --model_name RGCN --lr_scale_ranks cubic ds bad4
if ls -d bad* 2>/dev/null | grep -q .; then
	notok "gnn paper: refused runs left output"
fi
