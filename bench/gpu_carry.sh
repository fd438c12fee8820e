#!/usr/bin/env bash
# Gather what the lent GPU machine lacks into gpu-carry/ (ignored by git;
# name it in the device tool's carry).  That machine has nvcc 13, gcc and
# PyTorch (with its pip cuBLAS) but none of kgpipe's Debian packages, no
# MPI and no network; the tree and the carry travel in at most 64 MiB.
#
#   include/  the headers of the Debian packages lib/ includes (OpenBLAS,
#             Jansson, xxHash, zlib, METIS, libcsv, Open MPI's mpi.h), for
#             bench/gpu_device.sh's build of tests/gpu there;
#   runtime.tar.xz  (bin/, aux/ and lib/ below, xz-compressed: OpenBLAS
#             alone is 36 MB, 4 MB packed; `bench/gpu_carry.sh --unpack`
#             unpacks it there into gpu-carry.run/, ignored by git, with
#             python3's tarfile, and prints that folder):
#   bin/      kg-ingest, kg-train, kg-eval, kg-partition, kg-predict built
#             here with CUDA=1 (sm_90 + compute_90 PTX, cudart static)
#             in build-cuda/, debug info stripped; aux/kg_gen_enterprise
#             (the paper-scale graph) beside them;
#   lib/      the shared libraries the tools and the test programs load,
#             found with ldd, under their sonames: OpenBLAS and its
#             Fortran runtime, Jansson, xxHash, zlib, METIS, libcsv,
#             and Open MPI's libmpi with what it loads.  glibc's own
#             (libc, libm, libpthread, libdl, librt, ld-linux) and gcc's
#             runtime (libstdc++, libgcc_s, libgomp: that machine's gcc
#             has them, newer, and the test programs it builds there need
#             its libgomp, not ours) stay behind.  The tools call MPI_Init only
#             under mpirun (lib/dist/dist.c: kg_dist_launched), so one
#             process needs libmpi loadable, not its plugins or help
#             files, and no mpirun is carried.  cuBLAS (dlopened by the
#             CUDA backend, about 500 MB with cublasLt) is not carried:
#             the toolkit's /usr/local/cuda/lib64 or PyTorch's
#             nvidia-cublas wheel serves there;
#   data/     FB15k and FB15k-237 from ../shared/data (KG_SHARED_DATA),
#             gzipped as they are there (about 11 MB);
#   BUILD_INFO  the commit the tools were built from, whether the
#             worktree was dirty, and the cuBLAS soname they load.
#
# Run from the repository root after `make` and the CUDA build (make
# gpu-carry does all three).  Prints the carry's size; fails when the
# carry and the tracked tree together pass KG_CARRY_LIMIT_KB (default
# 60 MiB, under the device tool's 64).
set -eu
cd "$(dirname "$0")/.."
# --unpack [CARRY]: gpu-carry/runtime.tar.xz into CARRY.run/ (once: kept
# while its BUILD_INFO matches); prints that folder's absolute path.
if [ "${1:-}" = --unpack ]; then
	c=$(cd "${2:-gpu-carry}" && pwd) || exit 1
	r=$c.run
	if ! cmp -s "$c/BUILD_INFO" "$r/BUILD_INFO" 2>/dev/null; then
		rm -rf "$r"
		mkdir -p "$r" &&
		    python3 -c 'import sys, tarfile
tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$c/runtime.tar.xz" "$r" &&
		    cp "$c/BUILD_INFO" "$r/BUILD_INFO" ||
		    { echo "gpu_carry: cannot unpack $c/runtime.tar.xz" >&2; exit 1; }
	fi
	echo "$r"
	exit 0
fi
cbuild=${KG_CUDA_BUILD:-build-cuda}
tests=${KG_GPU_TESTS:-build/gpu/gpu_ops build/gpu/gpu_train build/gpu/gpu_buf build/gpu/gpu_eval build/gpu/gpu_gnn}
tools="$cbuild/bin/kg-ingest $cbuild/bin/kg-train $cbuild/bin/kg-eval
    $cbuild/bin/kg-partition $cbuild/bin/kg-predict
    $cbuild/aux/kg_gen_enterprise"
for prog in $tests $tools; do
	[ -x "$prog" ] || { echo "gpu_carry: $prog not built (run make gpu-carry)" >&2; exit 1; }
done
if ! grep -q '^KG_CUDA=1$' "$cbuild/cuda.cfg" 2>/dev/null; then
	echo "gpu_carry: $cbuild was built without the CUDA backend" >&2
	exit 1
fi
rm -rf gpu-carry.tmp
mkdir -p gpu-carry.tmp/include gpu-carry.tmp/lib gpu-carry.tmp/bin \
    gpu-carry.tmp/aux
# Each header by its path on this machine, as the compiler finds it.
for h in cblas.h openblas_config.h jansson.h jansson_config.h xxhash.h \
    zlib.h zconf.h metis.h csv.h mpi.h mpi_portable_platform.h; do
	p=$(echo "#include <$h>" | mpicc $(pkg-config --cflags openblas \
	    jansson libxxhash zlib) -E -H -x c - 2>&1 >/dev/null |
	    awk -v h="/$h" '$1 == "." && substr($2, length($2) - length(h) + 1) == h { print $2; exit }')
	if [ -z "$p" ]; then
		echo "gpu_carry: cannot find $h" >&2
		exit 1
	fi
	cp "$p" gpu-carry.tmp/include/
done
# The tools, without their debug info (a third of their size).
for prog in $tools; do
	case "$prog" in */aux/*) d=aux ;; *) d=bin ;; esac
	strip --strip-debug -o "gpu-carry.tmp/$d/${prog##*/}" "$prog"
done
# The libraries ldd resolves, less glibc's and the C++ runtime; copied
# under their sonames.
for prog in $tests $tools; do ldd "$prog"; done |
    awk '$2 == "=>" && $3 ~ /^\// && !seen[$1]++ { print $1, $3 }' |
while read -r soname path; do
	case "$soname" in
	libc.so*|libm.so*|libgcc_s.so*|libstdc++.so*|libgomp.so*|\
	libpthread.so*|libdl.so*|librt.so*|ld-linux*) continue ;;
	esac
	cp -L "$path" "gpu-carry.tmp/lib/$soname"
	strip --strip-unneeded "gpu-carry.tmp/lib/$soname" 2>/dev/null || true
done
data=${KG_SHARED_DATA:-../shared/data}
for s in fb15k fb15k-237; do
	if [ -f "$data/$s/train.txt.gz" ]; then
		mkdir -p "gpu-carry.tmp/data/$s"
		cp "$data/$s"/{train,valid,test}.txt.gz "gpu-carry.tmp/data/$s/"
	else
		echo "gpu_carry: no $data/$s: bench/gpu.sh will skip its figures" >&2
	fi
done
{
	echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)"
	if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
		echo "dirty 1"
	else
		echo "dirty 0"
	fi
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
	echo "nvcc $(nvcc --version 2>/dev/null | tail -1)"
	# The cuBLAS the tools dlopen (lib/compute/cuda: CUBLAS_VER_MAJOR).
	echo "cublas libcublas.so.$(awk '$2 == "CUBLAS_VER_MAJOR" { print $3; exit }' \
	    "${CUDA_HOME:-/usr/local/cuda}/include/cublas_api.h" 2>/dev/null)"
} >gpu-carry.tmp/BUILD_INFO
tar -C gpu-carry.tmp -cf - bin aux lib | xz -6 -T1 >gpu-carry.tmp/runtime.tar.xz
rm -rf gpu-carry.tmp/bin gpu-carry.tmp/aux gpu-carry.tmp/lib
rm -rf gpu-carry gpu-carry.run
mv gpu-carry.tmp gpu-carry
carry_kb=$(du -sk gpu-carry | cut -f1)
tree_kb=$(git ls-files -z | du -ck --files0-from=- 2>/dev/null | tail -1 | cut -f1)
limit_kb=${KG_CARRY_LIMIT_KB:-61440}
echo "gpu-carry: $carry_kb KiB, tracked tree $tree_kb KiB, together $((carry_kb + tree_kb)) KiB of the device tool's 65536"
du -sk gpu-carry/* | sort -k2
if [ $((carry_kb + tree_kb)) -gt "$limit_kb" ]; then
	echo "gpu_carry: carry and tree pass $limit_kb KiB" >&2
	exit 1
fi
