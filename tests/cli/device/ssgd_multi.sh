# kg-train --dist ssgd --device cuda under mpirun (issue 31 item 5) without
# a GPU: the test hook KG_TRAIN_SEAM=cpu runs each rank's device trainer on
# the CPU backend, its chunk gradients downloaded, summed over the ranks by
# lib/dist/ssgd.c's merge (the CPU SSGD's exchange) and applied on the
# device; KG_DEVICE_COUNT=N (only with the seam) lets --device cuda and
# --gpus choose each rank's GPU as if N GPUs were visible.
#
# Measured when written (ComplEx d=24 on UMLS, 33 steps): against the CPU
# --dist ssgd on the same ranks, the largest entity difference 3.0e-7 on
# 2 ranks and 2.7e-7 on 4 (the device step's float arithmetic, not bit
# for bit); the logged loss equal to 9 digits.  Chunks of 99 split
# unevenly over the ranks, so a share's loss scaled by its own length
# rather than the chunk's shows (Adagrad and Adam do not see a scale
# common to every row).
. "$KG_TOP/tests/cli/lib.sh"
plan 20
if ! command -v mpirun >/dev/null || ! command -v jq >/dev/null; then
	skip_all "device ssgd under mpirun: mpirun or jq is not installed"
fi
MPI="timeout 120 mpirun --oversubscribe"
CLOSE=$KG_BUILD/aux/npy_close
dev="env KG_TRAIN_SEAM=cpu"
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
# 5216 triples, batches of 500: 11 steps per epoch, 33 in all.
a="-q --model_name ComplEx --hidden_dim 24 --epochs 3 --batch_size 500
    --neg_sample_size 50 --neg_chunk_size 99 --num_thread 1 --no_checkpoint
    --regularization_coef 1e-4 --rel_optimizer adam"
loss() { tail -n 1 "$1/train_log.jsonl" | jq '.loss'; }

$dev kg-train $a ds seam
$dev kg-train $a --dist ssgd ds seam_ssgd
check "one process: the device SSGD equals the device trainer bit for bit" \
    sh -c 'cmp -s seam/entities.npy seam_ssgd/entities.npy &&
    cmp -s seam/relations.npy seam_ssgd/relations.npy &&
    cmp -s seam/relation_state.npy seam_ssgd/relation_state.npy'
for n in 2 4; do
	$MPI -np $n kg-train $a --dist ssgd ds cpu$n 2>err.txt &&
	    $MPI -np $n $dev kg-train $a --dist ssgd ds dev$n 2>>err.txt ||
	    notok "$n ranks failed: $(tail -n 3 err.txt)"
	if "$CLOSE" cpu$n/entities.npy dev$n/entities.npy 1e-4 >diff.txt &&
	    "$CLOSE" cpu$n/relations.npy dev$n/relations.npy 1e-4 >>diff.txt
	then
		ok "$n ranks: the device SSGD matches the CPU SSGD after 33 steps ($(head -n 1 diff.txt))"
	else
		notok "$n ranks: the device SSGD drifts from the CPU's: $(cat diff.txt)"
	fi
	check "$n ranks: the global loss is logged ($(loss dev$n), CPU $(loss cpu$n))" \
	    awk -v a="$(loss dev$n)" -v b="$(loss cpu$n)" \
	    'BEGIN { d = a - b; exit !(d < 1e-5 && d > -1e-5) }'
	check "$n ranks: the manifest names the device trainer" test \
	    "$(jq -r .figures.trainer dev$n/manifest.json)" = device
done
# The ranks' shares really are summed: a rank alone is another model.
check "2 ranks are not one rank's copy" sh -c \
    "! '$CLOSE' seam/entities.npy dev2/entities.npy 0 >/dev/null"

# Each rank's GPU: 4 ranks on 2 GPUs, local rank mod 2.
$MPI -np 4 env KG_TRAIN_SEAM=cpu KG_DEVICE_COUNT=2 kg-train ${a#-q} \
    --device cuda --dist ssgd ds g4 2>err4.txt
check "4 ranks on 2 GPUs: the manifest's device list" test \
    "$(jq -c '[.figures.devices, .figures.devices_emulated]' g4/manifest.json)" = \
    '[["cuda:0","cuda:1","cuda:0","cuda:1"],true]'
check "4 ranks on 2 GPUs: each rank's line names its GPU" test \
    "$(grep -c 'trains on cuda:[01] (emulated' err4.txt)" = 4
check "rank 3 is on cuda:1" grep -q \
    '^kg-train: rank 3 of 4 (local rank 3 of 4) trains on cuda:1 ' err4.txt
check "4 ranks on emulated GPUs train as the 4-rank device SSGD" sh -c \
    'cmp -s g4/entities.npy dev4/entities.npy &&
    cmp -s g4/relations.npy dev4/relations.npy'
$MPI -np 2 env KG_TRAIN_SEAM=cpu KG_DEVICE_COUNT=2 kg-train $a --gpus 1,0 \
    --dist ssgd ds g2
check "--gpus 1,0: rank 0 on cuda:1, rank 1 on cuda:0" test \
    "$(jq -c .figures.devices g2/manifest.json)" = '["cuda:1","cuda:0"]'

# Refusals: one line, exit 2, nothing written.
err=$($MPI -np 2 env KG_TRAIN_SEAM=cpu KG_DEVICE_COUNT=2 kg-train $a \
    --gpus 0,2 --dist ssgd ds no1 2>&1 >/dev/null)
check "--gpus naming a GPU past the count is refused in one line" test \
    "$(printf '%s\n' "$err" | grep '^kg-train:')" = \
    "kg-train: cuda:2 is not visible (2 GPUs are: cuda:0 to cuda:1)"
expect_fail "an entry no rank uses is checked too" 2 \
    "^kg-train: cuda:5 is not visible \(2 GPUs are: cuda:0 to cuda:1\)$" \
    env KG_TRAIN_SEAM=cpu KG_DEVICE_COUNT=2 kg-train $a --gpus 0,5 ds no6
expect_fail "no GPU visible is refused" 2 \
    "^kg-train: no GPU is visible \(local rank 0\)$" \
    env KG_TRAIN_SEAM=cpu KG_DEVICE_COUNT=0 kg-train $a --device cuda ds no2
expect_fail "--gpus with --device cuda:N is refused" 2 \
    "^kg-train: --gpus and --device cuda:N \(or --gpu N\) both choose the GPU; give one of them$" \
    kg-train $a --gpus 0,1 --device cuda:1 ds no3
expect_fail "--gpus with --device cpu is refused" 2 \
    "^kg-train: --gpus lists the GPUs of the ranks; it does not go with --device cpu$" \
    kg-train $a --device cpu --gpus 0 ds no4
expect_fail "an empty --gpus entry is refused" 2 \
    "^kg-train: --gpus: '0,,1' has an empty entry" \
    kg-train $a --gpus 0,,1 ds no5
check "the refusals wrote nothing" sh -c \
    'test ! -e no1 && test ! -e no2 && test ! -e no3 && test ! -e no4 &&
    test ! -e no5 && test ! -e no6'
