#!/usr/bin/env bash
# Gather what the lent GPU machine lacks for bench/gpu_device.sh into
# gpu-carry/ (ignored by git; name it in the device tool's carry): the
# headers of the Debian packages lib/ includes (OpenBLAS, Jansson, xxHash,
# zlib, METIS, libcsv, Open MPI's mpi.h) and the shared libraries the
# GPU test programs load, found with ldd (OpenBLAS and what it needs;
# Jansson and xxHash, which the trainer's checkpoint code pulls into
# gpu_train), FB15k-237 from the shared data when it is there
# (tests/gpu/gpu_buf.c and gpu_eval.c; about 3.5 MB).
# That machine has nvcc and gcc but none of these packages.  Run from
# the repository root after `make` (make gpu-carry does both).
set -eu
cd "$(dirname "$0")/.."
progs=${*:-build/gpu/gpu_ops build/gpu/gpu_train build/gpu/gpu_buf build/gpu/gpu_eval}
for prog in $progs; do
	[ -x "$prog" ] || { echo "gpu_carry: $prog not built (run make)" >&2; exit 1; }
done
rm -rf gpu-carry.tmp
mkdir -p gpu-carry.tmp/include gpu-carry.tmp/lib
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
# The libraries ldd resolves, less the C and C++ runtimes every machine
# has; copied under their sonames.
for prog in $progs; do ldd "$prog"; done |
    awk '$2 == "=>" && $3 ~ /^\// && !seen[$1]++ { print $1, $3 }' |
while read -r soname path; do
	case "$soname" in
	libc.so*|libm.so*|libgcc_s.so*|libstdc++.so*|libpthread.so*|\
	libdl.so*|librt.so*|ld-linux*) continue ;;
	esac
	cp -L "$path" "gpu-carry.tmp/lib/$soname"
done
data=${KG_SHARED_DATA:-../shared/data}
if [ -f "$data/fb15k-237/train.txt.gz" ]; then
	mkdir -p gpu-carry.tmp/data/fb15k-237
	cp "$data"/fb15k-237/{train,valid,test}.txt.gz \
	    gpu-carry.tmp/data/fb15k-237/
fi
rm -rf gpu-carry
mv gpu-carry.tmp gpu-carry
du -sh gpu-carry
ls gpu-carry/lib
