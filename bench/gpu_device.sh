#!/usr/bin/env bash
# The one command a session lent a GPU runs (issue 31, "Running it on a
# GPU"), from the repository root with gpu-carry/ carried:
#
#   device run:  bash bench/gpu_device.sh       carry: ["gpu-carry"]
#                timeout_s: 600 (it keeps itself within KG_DEVICE_BUDGET)
#
# gpu-carry/ is made here by `make gpu-carry` (bench/gpu_carry.sh): the
# kg-* tools built with CUDA=1 for sm_90 and the shared libraries they
# load (packed in runtime.tar.xz), the headers of kgpipe's Debian
# packages, FB15k and FB15k-237; about 18 MB, with the tree well under the
# device tool's 64 MiB.  That machine has nvcc 13, gcc and PyTorch (whose
# nvidia-cublas wheel, or the toolkit, gives the cuBLAS the backend
# dlopens) but no Debian packages, no MPI and no network.
#
# In order, everything to $OUT (or bench/work/gpu when unset), 7 files
# within the tool's 8:
#  1. env.txt: GPU, driver, compilers, cores, the carried tools' commit;
#  2. bench/gpu.sh with the carried tools: every figure of the issue, GPU
#     and the same machine's CPU cores, into gpu.json and gpu.log (no
#     stage starts after KG_GPU_DEADLINE, default 300 s; see its header);
#  3. the build check: the CUDA backend and the test programs of tests/gpu
#     compiled there with its nvcc and gcc against the carried headers and
#     libraries (no mpicc: the archive members the test programs pull in
#     do not call MPI), build.log;
#  4. make test-gpu (tests/gpu/run.sh), test-gpu.log, under a timeout that
#     keeps the whole within KG_DEVICE_BUDGET (default 560 s); eval.txt
#     (tests/gpu/gpu_eval.c's filtered-ranking timings, device and CPU,
#     without the process's loading) and gpu_buf.json (tests/gpu/gpu_buf.c:
#     a table 10x the budget through the partition buffer) go into
#     gpu.json too, under "test_gpu".
# Step 2 stops starting stages at 300 s and any run at 420 s
# (KG_GPU_DEADLINE, KG_GPU_HARD), which leaves at least 140 s of the 560
# for steps 3-4 (the build of ~100 C files and one .cu runs on 16 cores
# there; not timed there yet).  When one call is
# not enough, two calls split it: KG_GPU_SKIP_TESTS=1 (step 2 alone,
# then KG_GPU_DEADLINE=420 suits) and KG_GPU_SKIP_BENCH=1 (steps 3-4).
# KG_GPU_SKIP_BENCH=1 leaves out step 2, KG_GPU_SKIP_TESTS=1 steps 3-4;
# KG_GPU_DRY=1 (here, without a GPU) runs step 2 as bench/gpu.sh
# --dry-run into bench/work/gpu-dry, and step 4 then says in one line that
# it skipped.
# Without GNU make there (or with KG_NO_MAKE=1) step 3 compiles by hand.
set -u
cd "$(dirname "$0")/.."
t_start=$(date +%s)
budget=${KG_DEVICE_BUDGET:-560}
out=${OUT:-bench/work/gpu}
[ -n "${KG_GPU_DRY:-}" ] && out=bench/work/gpu-dry
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
top=$PWD
carry=$top/gpu-carry
if [ ! -d "$carry/include" ] || [ ! -f "$carry/runtime.tar.xz" ]; then
	echo "gpu_device: gpu-carry/ is missing or old: run make gpu-carry here and carry it" |
	    tee "$out/build.log" >&2
	exit 1
fi
rt=$(bash bench/gpu_carry.sh --unpack "$carry") || exit 1
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
cuda_home=$(cd "$(dirname "$nvcc")/.." 2>/dev/null && pwd)
{
	date -u
	uname -a
	nvidia-smi --query-gpu=name,driver_version,memory.total \
	    --format=csv 2>&1 || echo "nvidia-smi failed"
	echo "nvcc: $nvcc"
	"$nvcc" --version 2>&1 | tail -2
	gcc --version | head -1
	command -v make || echo "no make"
	nproc
	git log -1 --format='tree commit %H %s' 2>/dev/null
	echo "carried tools:"
	cat "$carry/BUILD_INFO"
} >"$out/env.txt" 2>&1

# 2. The figures, with the carried tools.
bench_rc=0
if [ -z "${KG_GPU_SKIP_BENCH:-}" ]; then
	KG_GPU_OUT=$out KG_GPU_DEADLINE=${KG_GPU_DEADLINE:-300} \
	    bash bench/gpu.sh ${KG_GPU_DRY:+--dry-run}
	bench_rc=$?
	echo "bench/gpu.sh: status $bench_rc, $(( $(date +%s) - t_start )) s since the start" |
	    tee -a "$out/env.txt"
fi
if [ -n "${KG_GPU_SKIP_TESTS:-}" ]; then
	exit $bench_rc
fi
# cuBLAS: the toolkit's, or the pip wheel PyTorch brings.
pycublas=$(python3 -c 'import glob, os, nvidia
print(next((os.path.dirname(f) for p in nvidia.__path__ for f in sorted(glob.glob(
    os.path.join(p, "**", "libcublas.so.*"), recursive=True))), ""))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$rt/lib:$cuda_home/lib64${pycublas:+:$pycublas}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=build-gpu
# The test programs need OpenBLAS, Jansson and xxHash (no MPI, METIS...:
# the archive members they pull in do not call them); every lib/ file
# still compiles, against the carried headers.
# Warnings stay warnings there: that machine's gcc may know new ones.
libs="-L$rt/lib -Wl,-rpath-link,$rt/lib -l:libopenblas.so.0 -l:libjansson.so.4 -l:libxxhash.so.0 -lm -fopenmp -L$cuda_home/lib64 -lcudart_static -lstdc++ -ldl -lrt -lpthread"
make_vars=(CC=gcc CUDA=1 CUDA_HOME="$cuda_home" NVCC="$nvcc" NVCC_WERROR=
    BUILD=$build PKG_CFLAGS="-I$carry/include" LDLIBS="$libs")

# Without GNU make: the same compilations by hand, then tests/gpu/run.sh.
build_by_hand() {
	export KG_CFLAGS="-std=c11 -D_GNU_SOURCE -O2 -g -fopenmp -Ilib -Icmd -I$carry/include -DKG_HAVE_CUDA"
	export KG_OBJ=$build/obj
	mkdir -p "$KG_OBJ" "$build/gpu" || return 1
	echo "KG_CUDA=1" >"$build/cuda.cfg"
	printf '%s\n' lib/*/*.c | xargs -P "$(nproc)" -n 1 bash -c \
	    'gcc $KG_CFLAGS -c -o "$KG_OBJ/$(echo "$1" | tr / _).o" "$1"' _ ||
	    return 1
	"$nvcc" -std=c++17 -O2 -gencode arch=compute_90,code=[sm_90,compute_90] \
	    -Ilib -DKG_CUDA_LIBDIR="\"$cuda_home/lib64\"" -c \
	    -o "$KG_OBJ/backend_cuda.o" lib/compute/cuda/backend_cuda.cu ||
	    return 1
	rm -f "$build/libkg.a"
	ar rcs "$build/libkg.a" "$KG_OBJ"/*.o || return 1
	gcc $KG_CFLAGS -o "$build/gpu/gpu_ops" tests/gpu/gpu_ops.c \
	    "$build/libkg.a" $libs || return 1
	gcc $KG_CFLAGS -o "$build/gpu/gpu_train" tests/gpu/gpu_train.c \
	    "$build/libkg.a" $libs || return 1
	gcc $KG_CFLAGS -o "$build/gpu/gpu_buf" tests/gpu/gpu_buf.c \
	    "$build/libkg.a" $libs || return 1
	gcc $KG_CFLAGS -o "$build/gpu/gpu_eval" tests/gpu/gpu_eval.c \
	    "$build/libkg.a" $libs || return 1
	gcc $KG_CFLAGS -o "$build/gpu/gpu_gnn" tests/gpu/gpu_gnn.c \
	    "$build/libkg.a" $libs
}

have_make=1
command -v make >/dev/null 2>&1 && [ -z "${KG_NO_MAKE:-}" ] || have_make=0
start=$(date +%s)
if [ $have_make -eq 1 ]; then
	make -j"$(nproc)" "${make_vars[@]}" "$build/gpu/gpu_ops" \
	    "$build/gpu/gpu_train" "$build/gpu/gpu_buf" "$build/gpu/gpu_eval" \
	    "$build/gpu/gpu_gnn" \
	    >"$out/build.log" 2>&1
else
	echo "no make: building by hand" >"$out/build.log"
	build_by_hand >>"$out/build.log" 2>&1
fi
rc=$?
if [ $rc -ne 0 ]; then
	echo "gpu_device: build failed after $(( $(date +%s) - start )) s; see build.log" |
	    tee -a "$out/build.log" >&2
	tail -20 "$out/build.log" >&2
	exit 1
fi
echo "build: $(( $(date +%s) - start )) s" | tee -a "$out/env.txt"
set -o pipefail
# FB15k-237 for tests/gpu/gpu_buf.c, when gpu-carry/ brought it.
if [ -f "$carry/data/fb15k-237/train.txt.gz" ]; then
	export KG_SHARED_DATA=$carry/data
fi
export KG_GPU_BUF_BENCH=$out/gpu_buf.json
left=$((budget - ($(date +%s) - t_start)))
if [ "$left" -lt 30 ]; then
	echo "gpu_device: no time left for make test-gpu ($left s of $budget)" |
	    tee "$out/test-gpu.log"
	rc=1
elif [ $have_make -eq 1 ]; then
	timeout "$left" make "${make_vars[@]}" test-gpu 2>&1 | tee "$out/test-gpu.log"
	rc=$?
else
	timeout "$left" tests/gpu/run.sh "$build" 2>&1 | tee "$out/test-gpu.log"
	rc=$?
fi
[ $rc -eq 124 ] && echo "gpu_device: make test-gpu stopped after $left s (KG_DEVICE_BUDGET $budget)" |
    tee -a "$out/test-gpu.log"
# The filtered evaluation timings (issue 31's target: FB15k-237's test
# split, both sides, all entities, in 0.1 s): gpu_eval's "# eval" lines.
grep '^# eval ' "$out/test-gpu.log" | sed 's/^# eval //' >"$out/eval.txt"
echo "eval timings: $out/eval.txt"
cat "$out/eval.txt"
# Into gpu.json: the test programs' timings and result.
if [ -f "$out/gpu.json" ]; then
	python3 - "$out" <<'PY'
import json, os, sys
o = sys.argv[1]
j = json.load(open(os.path.join(o, "gpu.json")))
t = {"eval_timings": [l.rstrip("\n") for l in open(os.path.join(o, "eval.txt"))]}
try:
    t["gpu_buf"] = json.load(open(os.path.join(o, "gpu_buf.json")))
except Exception:
    t["gpu_buf"] = None
lines = open(os.path.join(o, "test-gpu.log")).read().splitlines()
t["result"] = lines[-1] if lines else None
j["test_gpu"] = t
json.dump(j, open(os.path.join(o, "gpu.json.tmp"), "w"), indent=1)
os.replace(os.path.join(o, "gpu.json.tmp"), os.path.join(o, "gpu.json"))
PY
fi
echo "gpu_device: $(( $(date +%s) - t_start )) s in all"
[ $bench_rc -eq 0 ] || rc=1
exit $rc
