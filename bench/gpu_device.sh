#!/usr/bin/env bash
# Run on the lent GPU machine, from the repository root, with gpu-carry/
# carried (made here by `make gpu-carry`; see bench/gpu_carry.sh): build
# the CUDA backend and the GPU test program there with its nvcc and gcc
# (no mpicc, no Debian packages: headers and libraries from gpu-carry/),
# then `make test-gpu`.  Logs go to $OUT (or bench/work/gpu when unset):
# env.txt (GPU, driver, compilers), build.log, test-gpu.log, eval.txt
# (tests/gpu/gpu_eval.c's timings of filtered ranking, device and CPU),
# and gpu_buf.json: a table 10x the device's memory budget (FB15k-237 in 40
# partitions, carried in gpu-carry/data) through the partition buffer,
# positives/s beside the same table in GPU memory and the swaps against
# the BETA order's lower bound (tests/gpu/gpu_buf.c).  Within the
# device tool's 10 minutes: the build is about 100 C files and one .cu on
# 16 cores.  Without GNU make there (or with KG_NO_MAKE=1) it compiles
# by hand.
#
#   device run: bash bench/gpu_device.sh     carry: ["gpu-carry"]
set -u
cd "$(dirname "$0")/.."
out=${OUT:-bench/work/gpu}
mkdir -p "$out"
top=$PWD
carry=$top/gpu-carry
if [ ! -d "$carry/include" ]; then
	echo "gpu_device: gpu-carry/ is missing: run make gpu-carry here and carry it" |
	    tee "$out/build.log" >&2
	exit 1
fi
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
	git log -1 --format='commit %H %s' 2>/dev/null
} >"$out/env.txt" 2>&1
# cuBLAS: the toolkit's, or the pip wheel PyTorch brings.
pycublas=$(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$carry/lib:$cuda_home/lib64${pycublas:+:$pycublas}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
build=build-gpu
# The test programs need OpenBLAS, Jansson and xxHash (no MPI, METIS...:
# the archive members they pull in do not call them); every lib/ file
# still compiles, against the carried headers.
# Warnings stay warnings there: that machine's gcc may know new ones.
libs="-L$carry/lib -Wl,-rpath-link,$carry/lib -l:libopenblas.so.0 -l:libjansson.so.4 -l:libxxhash.so.0 -lm -fopenmp -L$cuda_home/lib64 -lcudart_static -lstdc++ -ldl -lrt -lpthread"
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
export KG_GPU_BUF_BENCH=$top/$out/gpu_buf.json
case "$out" in /*) KG_GPU_BUF_BENCH=$out/gpu_buf.json ;; esac
if [ $have_make -eq 1 ]; then
	make "${make_vars[@]}" test-gpu 2>&1 | tee "$out/test-gpu.log"
else
	tests/gpu/run.sh "$build" 2>&1 | tee "$out/test-gpu.log"
fi
rc=$?
# The filtered evaluation timings (issue 31's target: FB15k-237's test
# split, both sides, all entities, in 0.1 s): gpu_eval's "# eval" lines.
grep '^# eval ' "$out/test-gpu.log" | sed 's/^# eval //' >"$out/eval.txt"
echo "eval timings: $out/eval.txt"
cat "$out/eval.txt"
exit $rc
