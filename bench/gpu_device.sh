#!/usr/bin/env bash
# What a session lent a GPU runs there, from the repository root with
# gpu-carry/ carried:
#
#   device run:  bash bench/gpu_device.sh       carry: ["gpu-carry"]
#                timeout_s: 600 (it keeps itself within KG_DEVICE_BUDGET;
#                two calls, below, until one is known to fit)
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
#  1. the preflight, the run's first lines on stdout and in env.txt: the
#     GPU and driver (nvidia-smi), the toolkit found (nvcc, CUDA_HOME),
#     whether libcudart_static.a is in CUDA_HOME/lib64 where the build
#     links it, and where cuBLAS (libcublas.so.N, the major version the
#     carried tools were built against, from BUILD_INFO) is: the
#     toolkit's lib64 or PyTorch's nvidia-cublas wheel; then the machine
#     (compilers, cores, the carried tools' commit) in env.txt;
#  2. the build check: the CUDA backend and the test programs of tests/gpu
#     compiled there with its nvcc and gcc against the carried headers and
#     libraries (no mpicc: the archive members the test programs pull in
#     do not call MPI), build.log;
#  3. make test-gpu (tests/gpu/run.sh) with KG_GPU_REQUIRE=1, so that a
#     backend that does not open fails every program instead of skipping
#     (tests/gpu/gpu_open.h), test-gpu.log, within KG_GPU_TEST_TIMEOUT
#     seconds (default 300); eval.txt (tests/gpu/gpu_eval.c's filtered-
#     ranking timings, device and CPU, without the process's loading) and
#     gpu_buf.json (tests/gpu/gpu_buf.c: a table 10x the budget through
#     the partition buffer);
#  4. bench/gpu.sh with the carried tools: every figure of the issue, GPU
#     and the same machine's CPU cores, into gpu.json (the test programs'
#     timings and result under "test_gpu") and gpu.log, in the seconds
#     left of KG_DEVICE_BUDGET (default 560): no stage starts after
#     KG_GPU_DEADLINE (default: 120 s before the end) and no run goes on
#     past KG_GPU_HARD (default: 10 s before the end).
# The tests come first: a benchmark of a backend that computes wrongly
# measures nothing.  Whether the whole fits one call (600 s at most) has
# not been measured on a GPU yet; the safe plan is two calls, each well
# inside 600 s:
#   call 1: KG_GPU_SKIP_BENCH=1 bash bench/gpu_device.sh    (steps 1-3)
#   call 2: KG_GPU_SKIP_TESTS=1 bash bench/gpu_device.sh    (steps 1, 4)
# and one call (steps 1-4) once call 1's time is known.  The status is
# nonzero when the build, a test or a benchmark run failed.
#
# LD_LIBRARY_PATH (the carried libraries, the toolkit's lib64, the
# wheel's cuBLAS) is set on the carried kg-* tools and the test programs
# alone (bench/gpu.sh's tool, tests/gpu/run.sh's KG_GPU_LIBPATH), never
# exported to that machine's gcc, nvcc, make or python3.
# KG_GPU_DRY=1 (here, without a GPU) runs step 4 as bench/gpu.sh
# --dry-run into bench/work/gpu-dry, without KG_GPU_REQUIRE, and step 3
# then says in one line that it skipped.
# Without GNU make there (or with KG_NO_MAKE=1) step 2 compiles by hand.
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
cuda_home=$(cd "$(dirname "${nvcc:-/nonexistent/bin/nvcc}")/.." 2>/dev/null && pwd)
[ -n "${KG_GPU_DRY:-}" ] || export KG_GPU_REQUIRE=1
elapsed() { echo $(( $(date +%s) - t_start )); }

# 1. The preflight: what the build and the tools will find.  cuBLAS's
# major version: the one the carried tools were built against, else
# this toolkit's.
soname=$(awk '$1 == "cublas" { print $2 }' "$carry/BUILD_INFO")
if [ -z "$soname" ] && [ -f "$cuda_home/include/cublas_api.h" ]; then
	soname=libcublas.so.$(awk '$2 == "CUBLAS_VER_MAJOR" { print $3; exit }' \
	    "$cuda_home/include/cublas_api.h")
fi
pycublas=$(python3 -c 'import glob, os, nvidia
print(next((os.path.dirname(f) for p in nvidia.__path__ for f in sorted(glob.glob(
    os.path.join(p, "**", "libcublas.so.*"), recursive=True))), ""))' 2>/dev/null || true)
cublas=
for d in "$cuda_home/lib64" $pycublas; do
	[ -n "$d" ] && [ -e "$d/${soname:-libcublas.so}" ] && { cublas=$d/$soname; break; }
done
libpath=$rt/lib${cuda_home:+:$cuda_home/lib64}${pycublas:+:$pycublas}
{
	if command -v nvidia-smi >/dev/null; then
		echo "gpu_device: GPU and driver: $(nvidia-smi --query-gpu=name,driver_version,memory.total \
		    --format=csv,noheader 2>&1 | head -1)"
	else
		echo "gpu_device: GPU and driver: MISSING: no nvidia-smi"
	fi
	if [ -n "$nvcc" ]; then
		echo "gpu_device: toolkit: $nvcc, $("$nvcc" --version 2>&1 | tail -1), CUDA_HOME $cuda_home"
	else
		echo "gpu_device: toolkit: MISSING: no nvcc on PATH nor in /usr/local/cuda/bin"
	fi
	if [ -f "$cuda_home/lib64/libcudart_static.a" ]; then
		echo "gpu_device: libcudart_static: $cuda_home/lib64/libcudart_static.a, where the build links it"
	else
		echo "gpu_device: libcudart_static: MISSING from ${cuda_home:-?}/lib64: the build's -lcudart_static will fail"
	fi
	if [ -n "$cublas" ]; then
		echo "gpu_device: cuBLAS: $cublas, on the tools' library path"
	else
		echo "gpu_device: cuBLAS: MISSING: no ${soname:-libcublas.so.N} in ${cuda_home:-?}/lib64 nor in PyTorch's nvidia wheel: every GPU run will fail"
	fi
	echo "gpu_device: KG_GPU_REQUIRE=${KG_GPU_REQUIRE:-unset}; budget $budget s"
} | tee "$out/env.txt"
{
	date -u
	uname -a
	gcc --version | head -1
	command -v make || echo "no make"
	nproc
	git log -1 --format='tree commit %H %s' 2>/dev/null
	echo "carried tools:"
	cat "$carry/BUILD_INFO"
} >>"$out/env.txt" 2>&1

# 2. The build check.  The test programs need OpenBLAS, Jansson and
# xxHash (no MPI, METIS...: the archive members they pull in do not call
# them); every lib/ file still compiles, against the carried headers.
# Warnings stay warnings there: that machine's gcc may know new ones.
build=build-gpu
libs="-L$rt/lib -Wl,-rpath-link,$rt/lib -l:libopenblas.so.0 -l:libjansson.so.4 -l:libxxhash.so.0 -lm -fopenmp -L$cuda_home/lib64 -lcudart_static -lstdc++ -ldl -lrt -lpthread"
make_vars=(CC=gcc CUDA=1 CUDA_HOME="$cuda_home" NVCC="$nvcc" NVCC_WERROR=
    BUILD=$build PKG_CFLAGS="-I$carry/include" LDLIBS="$libs")

# Without GNU make: the same compilations by hand.
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
	for p in gpu_ops gpu_train gpu_buf gpu_eval gpu_gnn; do
		gcc $KG_CFLAGS -o "$build/gpu/$p" "tests/gpu/$p.c" \
		    "$build/libkg.a" $libs || return 1
	done
}

rc=0
if [ -z "${KG_GPU_SKIP_TESTS:-}" ]; then
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
	brc=$?
	if [ $brc -ne 0 ]; then
		echo "gpu_device: build failed after $(( $(date +%s) - start )) s; see build.log" |
		    tee -a "$out/build.log" >&2
		tail -20 "$out/build.log" >&2
		rc=1
	else
		echo "gpu_device: build: $(( $(date +%s) - start )) s" | tee -a "$out/env.txt"
	fi
fi

# 3. make test-gpu, the library path on the test programs alone.
if [ -z "${KG_GPU_SKIP_TESTS:-}" ] && [ $rc -eq 0 ]; then
	# FB15k-237 for tests/gpu/gpu_buf.c, when gpu-carry/ brought it.
	[ -f "$carry/data/fb15k-237/train.txt.gz" ] &&
	    export KG_SHARED_DATA=$carry/data
	export KG_GPU_BUF_BENCH=$out/gpu_buf.json
	tlimit=${KG_GPU_TEST_TIMEOUT:-300}
	left=$((budget - $(elapsed) - 10))
	[ "$left" -lt "$tlimit" ] && tlimit=$left
	start=$(date +%s)
	if [ "$tlimit" -lt 30 ]; then
		echo "gpu_device: no time left for make test-gpu ($tlimit s)" |
		    tee "$out/test-gpu.log"
		rc=1
	elif [ -n "${KG_GPU_DRY:-}" ]; then
		echo "gpu_device: make test-gpu skipped: a dry run (KG_GPU_DRY)" |
		    tee "$out/test-gpu.log"
	else
		set -o pipefail
		if [ $have_make -eq 1 ]; then
			KG_GPU_LIBPATH=$libpath timeout "$tlimit" \
			    make "${make_vars[@]}" test-gpu 2>&1 | tee "$out/test-gpu.log"
		else
			KG_GPU_LIBPATH=$libpath timeout "$tlimit" \
			    tests/gpu/run.sh "$build" 2>&1 | tee "$out/test-gpu.log"
		fi
		trc=$?
		set +o pipefail
		[ $trc -eq 124 ] && echo "gpu_device: make test-gpu stopped after $tlimit s" |
		    tee -a "$out/test-gpu.log"
		[ $trc -eq 0 ] || rc=1
	fi
	echo "gpu_device: test-gpu: status $rc, $(( $(date +%s) - start )) s" |
	    tee -a "$out/env.txt"
	# The filtered evaluation timings: gpu_eval's "# eval" lines.
	grep '^# eval ' "$out/test-gpu.log" | sed 's/^# eval //' >"$out/eval.txt"
	echo "eval timings: $out/eval.txt"
	cat "$out/eval.txt"
fi

# 4. The figures, with the carried tools, in the time left.
if [ -z "${KG_GPU_SKIP_BENCH:-}" ]; then
	left=$((budget - $(elapsed)))
	hard=${KG_GPU_HARD:-$((left - 10))}
	deadline=${KG_GPU_DEADLINE:-$((hard - 120))}
	[ "$deadline" -lt 0 ] && deadline=0
	echo "gpu_device: bench/gpu.sh: $left s left, no stage after $deadline s, no run past $hard s" |
	    tee -a "$out/env.txt"
	KG_GPU_OUT=$out KG_GPU_DEADLINE=$deadline KG_GPU_HARD=$hard \
	    bash bench/gpu.sh ${KG_GPU_DRY:+--dry-run}
	bench_rc=$?
	echo "gpu_device: bench/gpu.sh: status $bench_rc, $(elapsed) s since the start" |
	    tee -a "$out/env.txt"
	[ $bench_rc -eq 0 ] || rc=1
fi
# Into gpu.json: the test programs' timings and result.
if [ -f "$out/gpu.json" ] && [ -f "$out/test-gpu.log" ]; then
	python3 - "$out" <<'PY'
import json, os, sys
o = sys.argv[1]
j = json.load(open(os.path.join(o, "gpu.json")))
try:
    t = {"eval_timings": [l.rstrip("\n") for l in open(os.path.join(o, "eval.txt"))]}
except OSError:
    t = {"eval_timings": []}
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
echo "gpu_device: status $rc, $(elapsed) s in all"
exit $rc
