#!/usr/bin/env bash
# --device on kg-train, kg-eval and kg-predict (and kg-train's --gpu): the
# CPU is today's behaviour; a CUDA device that cannot do the work is
# refused with exit 2 and one line saying why, never run on the CPU, and
# nothing is written.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 25

make_umls umls || { notok "ingest umls"; exit 0; }
# --max_grad_norm: an option the device trainer does not take, so that
# where a GPU is visible kg-train --device cuda is refused all the same
# (tests/cli/device/seam.sh trains through the device path).
train="kg-train -q --model_name DistMult --hidden_dim 8 --epochs 1
    --num_thread 1 --no_checkpoint --max_grad_norm 1"

# Why a CUDA device is refused here: the build (build/cuda.cfg, written by
# the Makefile) and whether a GPU answers.
if ! grep -q '^KG_CUDA=1$' "$KG_BUILD/cuda.cfg" 2>/dev/null; then
	why="cuda:N: this kgpipe was built without the CUDA backend \(rebuild with nvcc on PATH: make CUDA=1\)"
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	why="cuda:N: WORK does not run on a GPU yet \(the CUDA backend is built and a GPU is visible; use --device cpu\)"
	gpu=1
else
	why="cuda:N: no GPU is visible \(cuda[A-Za-z]+: "
fi
refused() {	# refused WORK INDEX: the pattern for that refusal
	local p=${why//WORK/$1}
	if [ "$1" = training ] && [ -n "${gpu:-}" ] && [ "$2" -eq 0 ]; then
		echo "^kg-train: gradient clipping \(--max_grad_norm\) is not supported on a device yet"
		return
	fi
	if [ "$1" = prediction ] && [ -n "${gpu:-}" ]; then
		echo "^kg-predict: cuda:$2: only [0-9]+ GPUs? (is|are) visible"
		return
	fi
	if [ "$1" = evaluation ] && [ -n "${gpu:-}" ] && [ "$2" -eq 0 ]; then
		echo "^kg-eval: sampled ranking \(--neg-sample\) does not run on a device yet"
		return
	fi
	# GNN training runs R-GCN and RelGNN on a GPU
	# (tests/cli/device/gnn_seam.sh); the shared negatives these
	# commands ask for it refuses.
	if [ "$1" = "GNN training" ] && [ -n "${gpu:-}" ] && [ "$2" -eq 0 ]; then
		echo "^kg-train: shared negatives \(--neg_chunk_size\) are not supported by GNN training on a device yet$"
		return
	fi
	echo "^kg-[a-z]+: ${p//cuda:N/cuda:$2}"
}

expect_fail "kg-train --device cuda" 2 "$(refused training 0)" \
    $train --device cuda umls m_cuda
check "kg-train --device cuda wrote nothing" test ! -e m_cuda -a ! -e m_cuda.ckpt
expect_fail "kg-train --gpu 3 is --device cuda:3" 2 "$(refused training 3)" \
    $train --gpu 3 umls m_gpu
check "kg-train --gpu 3 wrote nothing" test ! -e m_gpu
echo '{"gpu": 1}' >gpu.json
expect_fail "a config file's gpu key too" 2 "$(refused training 1)" \
    $train --config gpu.json umls m_cfg
check "the config's gpu key wrote nothing" test ! -e m_cfg
check "one line of error" test "$($train --device cuda:2 umls m_two 2>&1 | wc -l)" -eq 1
expect_fail "unknown device" 2 "^kg-train: --device: unknown device 'gpu' \(expected cpu, cuda or cuda:N\)" \
    $train --device gpu umls m_bad
expect_fail "device number out of range" 2 "^kg-train: --device: .*1024" \
    $train --device cuda:1024 umls m_bad
expect_fail "--gpu below -1" 2 "^kg-train: --gpu: .*-2" $train --gpu -2 umls m_bad
check "bad devices wrote nothing" test ! -e m_bad

# The CPU: as before, and the manifest says where the model was trained.
check "kg-train --device cpu trains" $train --device cpu umls m_cpu
check "kg-train --gpu -1 (DGL-KE's CPU) trains" $train --gpu -1 umls m_cpu1
check "manifest: device cpu" test "$(jget m_cpu/manifest.json .figures.device)" = cpu
check "manifest: the CPU backend" grep -Eq '"backend": "cpu:openblas:[A-Za-z0-9]+"' m_cpu/manifest.json

# --neg-sample: an option the device ranker does not take, so that where
# a GPU is visible the refusal stands (tests/cli/device/eval_seam.sh ranks
# through the device path).
expect_fail "kg-eval --device cuda" 2 "$(refused evaluation 0)" \
    kg-eval -q --device cuda --neg-sample 10 -o eval.json umls m_cpu
check "kg-eval --device cuda wrote nothing" test ! -e eval.json
check "kg-eval --device cpu" kg-eval -q --device cpu -o eval.json umls m_cpu
expect_fail "kg-eval unknown device" 2 "^kg-eval: --device: unknown device 'cuda0'" \
    kg-eval -q --device cuda0 umls m_cpu

printf 'acquired_abnormality\tlocation_of\t?\n' >q.tsv
# cuda:1023: a GPU no machine here has, so that where GPUs are visible
# the refusal stands (tests/cli/device/predict_seam.sh scores through the
# device path).
expect_fail "kg-predict --device cuda:1023" 2 "$(refused prediction 1023)" \
    kg-predict -q --device cuda:1023 -o pred.tsv umls m_cpu q.tsv
check "kg-predict --device cuda:1023 wrote nothing" test ! -e pred.tsv
check "kg-predict --device cpu" kg-predict -q --device cpu -o pred.tsv umls m_cpu q.tsv

# GNN training takes them too (cmd/cli/gnn_cli.c), refused the same way
# (shared negatives: what the device step does not run, refused with a
# GPU).
expect_fail "kg-train --model_name RelGNN --device cuda" 2 "$(refused 'GNN training' 0)" \
    kg-train -q --model_name RelGNN --epochs 1 --neg_chunk_size 4 \
    --device cuda umls g_cuda
expect_fail "kg-train --model_name RelGNN --gpu 2" 2 "$(refused 'GNN training' 2)" \
    kg-train -q --model_name RelGNN --epochs 1 --neg_chunk_size 4 \
    --gpu 2 umls g_gpu
check "GNN refusals wrote nothing" test ! -e g_cuda -a ! -e g_gpu
