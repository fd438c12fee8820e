# The GPU harness must not pass having tested nothing: with a GPU
# expected (KG_GPU_REQUIRE, or nvidia-smi listing one) every tests/gpu
# program fails when the backend does not open, tests/gpu/run.sh (make
# test-gpu) fails instead of skipping, and bench/gpu.sh exits nonzero when
# one of its runs fails.  Without a GPU expected the same run skips.  The
# programs are pointed at cuda:1023, which no machine has, so that the
# checks hold on a GPU machine too; nvidia-smi is faked on PATH.
. "$KG_TOP/tests/cli/lib.sh"
# The programs tests/gpu/run.sh runs, from its own loop.
progs=$(sed -n 's/^for prog in \(.*\); do$/\1/p' "$KG_TOP/tests/gpu/run.sh")
nprogs=$(echo $progs | wc -w)
plan $((nprogs + 8))
mkdir -p gpu nogpu nocuda
printf '#!/bin/sh\necho "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"\n' >gpu/nvidia-smi
printf '#!/bin/sh\necho "NVIDIA-SMI has failed" >&2\nexit 9\n' >nogpu/nvidia-smi
chmod +x gpu/nvidia-smi nogpu/nvidia-smi
printf 'KG_CUDA=\nKG_NCCL=\n' >nocuda/cuda.cfg
export KG_GPU_DEVICE=cuda:1023
unset KG_GPU_REQUIRE

for prog in $progs; do
	KG_GPU_REQUIRE=1 "$KG_BUILD/gpu/$prog" >out.txt 2>&1
	rc=$?
	check "$prog under KG_GPU_REQUIRE fails when the backend does not open" \
	    sh -c "[ $rc -eq 1 ] && grep -q '^not ok - $prog: no GPU backend' out.txt"
done
"$KG_BUILD/gpu/gpu_ops" >out.txt 2>&1
rc=$?
check "gpu_ops without it skips in one line" \
    sh -c "[ $rc -eq 0 ] && [ \$(wc -l <out.txt) -eq 1 ] && grep -q '^skip - gpu_ops: ' out.txt"

# tests/gpu/run.sh: a skip where no GPU is seen, a failure where one is.
check "test-gpu skips where nvidia-smi sees no GPU" sh -c \
    'PATH=$PWD/nogpu:$PATH "$KG_TOP/tests/gpu/run.sh" "$KG_BUILD" >out.txt 2>&1 &&
    grep -q "^test-gpu: skipped: " out.txt'
# In a build without the CUDA backend run.sh fails before the programs.
if grep -q '^KG_CUDA=1$' "$KG_BUILD/cuda.cfg" 2>/dev/null; then
	want="^0 passed, $nprogs failed, 0 skipped$"
else
	want="^0 passed, 1 failed, 0 skipped$"
fi
export want
check "test-gpu fails where nvidia-smi lists a GPU that does not open" sh -c \
    'PATH=$PWD/gpu:$PATH "$KG_TOP/tests/gpu/run.sh" "$KG_BUILD" >out.txt 2>&1
    [ $? -eq 1 ] && grep -q "^not ok - " out.txt && grep -q "$want" out.txt'
check "and where KG_GPU_REQUIRE is set" sh -c \
    'PATH=$PWD/nogpu:$PATH KG_GPU_REQUIRE=1 "$KG_TOP/tests/gpu/run.sh" "$KG_BUILD" >out.txt 2>&1
    [ $? -eq 1 ] && grep -q "$want" out.txt'
check "a build without CUDA skips where no GPU is seen" sh -c \
    'PATH=$PWD/nogpu:$PATH "$KG_TOP/tests/gpu/run.sh" nocuda >out.txt 2>&1 &&
    grep -q "^test-gpu: skipped: built without the CUDA backend" out.txt'
check "and fails where nvidia-smi lists a GPU" sh -c \
    'PATH=$PWD/gpu:$PATH "$KG_TOP/tests/gpu/run.sh" nocuda >out.txt 2>&1
    [ $? -eq 1 ] && grep -q "^not ok - test-gpu: built without the CUDA backend .*, but nvidia-smi lists a GPU$" out.txt'

# bench/gpu.sh --dry-run with the "GPU" kg-train failing (a wrapper that
# fails under the dry run's KG_TRAIN_SEAM, the CPU runs going through).
if ! command -v python3 >/dev/null; then
	skip_section 2 "bench/gpu.sh: python3 is not installed"
elif [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ]; then
	skip_section 2 "bench/gpu.sh: $KG_BUILD/aux/kg_gen_enterprise is not built"
else
	mkdir -p tools
	for t in kg-ingest kg-eval kg-partition; do ln -s "$KG_BIN/$t" tools/$t; done
	printf '#!/bin/sh\n[ -n "${KG_TRAIN_SEAM:-}" ] && { echo "kg-train: made to fail" >&2; exit 3; }\nexec "%s" "$@"\n' \
	    "$KG_BIN/kg-train" >tools/kg-train
	chmod +x tools/kg-train
	KG_GPU_BIN=$PWD/tools KG_GPU_AUX=$KG_BUILD/aux KG_GPU_OUT=$PWD/out \
	    KG_GPU_WORK=$PWD/work KG_GPU_DATA=$PWD/nodata KG_GPU_STAGES=rgcn \
	    KG_GPU_RGCN_NODES=2000 KG_GPU_RGCN_BATCHES=2 KG_GPU_RGCN_NEG=5 \
	    bash "$KG_TOP/bench/gpu.sh" --dry-run >/dev/null 2>err.txt
	rc=$?
	check "bench/gpu.sh exits 1 when a GPU run failed" sh -c \
	    "[ $rc -eq 1 ] && grep -q '^bench/gpu.sh: 1 run(s) failed' err.txt"
	check "and gpu.json names it, the CPU run measured" test "$(python3 -c '
import json
j = json.load(open("out/gpu.json"))
print(len(j["failed_runs"]), j["failed_runs"][0].startswith("rgcn: status 3: "),
      j["figures"]["rgcn"]["cpu_seconds_per_epoch"] > 0)')" = "1 True True"
fi
