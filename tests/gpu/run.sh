#!/bin/sh
# make test-gpu: the CUDA backend on a GPU: its operations against the CPU
# backend (tests/gpu/gpu_ops.c), the device trainer end to end on UMLS
# against the CPU trainer (tests/gpu/gpu_train.c), the partition buffer
# on FB15k-237 against the whole table (tests/gpu/gpu_buf.c, when the
# shared data is there), the device ranker's filtered ranks on
# FB15k-237 (UMLS without it) against the CPU evaluator's
# (tests/gpu/gpu_eval.c), GNN training's device step against the CPU
# backend's (tests/gpu/gpu_gnn.c), and the BERT encoder's device path
# against the CPU backend's (tests/gpu/gpu_text.c).  Prints every case's line and "N
# passed, N failed, N skipped", failing when a case fails.
#
# Where no GPU is expected it may skip: a build without the CUDA backend,
# or a backend that does not open, prints one line saying why and
# succeeds.  A GPU is expected when KG_GPU_REQUIRE is set (to anything
# but "" or "0"; bench/gpu_device.sh sets it) or when nvidia-smi lists
# one; then the same cases fail instead (the programs print "not ok":
# tests/gpu/gpu_open.h), so that a GPU machine's run cannot pass having
# tested nothing.
#
# KG_GPU_LIBPATH, when set, goes before LD_LIBRARY_PATH for the test
# programs alone (bench/gpu_device.sh: the carried libraries, cuBLAS).
#
# Usage: tests/gpu/run.sh BUILD_DIR
build=${1:?usage: tests/gpu/run.sh BUILD_DIR}
case "${KG_GPU_REQUIRE:-0}" in
""|0) need= ;;
*) need="KG_GPU_REQUIRE is set" ;;
esac
if [ -z "$need" ] && nvidia-smi -L 2>/dev/null | grep -q '^GPU [0-9]'; then
	need="nvidia-smi lists a GPU"
fi
if ! grep -q '^KG_CUDA=1$' "$build/cuda.cfg" 2>/dev/null; then
	why="built without the CUDA backend (CUDA=0, or nvcc not found)"
	if [ -n "$need" ]; then
		echo "not ok - test-gpu: $why, but $need"
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
	echo "test-gpu: skipped: $why"
	exit 0
fi
[ -n "$need" ] && KG_GPU_REQUIRE=1 && export KG_GPU_REQUIRE
build=$(cd "$build" && pwd) || exit 1
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
lp=${KG_GPU_LIBPATH:+$KG_GPU_LIBPATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}
p=0 f=0 s=0
for prog in gpu_ops gpu_train gpu_buf gpu_eval gpu_gnn gpu_text; do
	if [ -n "$lp" ]; then
		out=$(LD_LIBRARY_PATH=$lp KG_TOP=$top "$build/gpu/$prog" 2>&1)
	else
		out=$(KG_TOP=$top "$build/gpu/$prog" 2>&1)
	fi
	rc=$?
	case "$out" in
	"skip - $prog: "*)
		if [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
			if [ -z "$need" ]; then
				echo "test-gpu: skipped: ${out#skip - "$prog": }"
				exit 0
			fi
			out="not ok - $prog skipped, but $need: ${out#skip - "$prog": }"
		fi ;;
	esac
	printf '%s\n' "$out"
	p=$((p + $(printf '%s\n' "$out" | grep -c '^ok - ')))
	nf=$(printf '%s\n' "$out" | grep -c '^not ok - ')
	s=$((s + $(printf '%s\n' "$out" | grep -c '^skip - ')))
	if [ "$rc" -ne 0 ] && [ "$nf" -eq 0 ]; then
		echo "not ok - $prog exited with status $rc"
		nf=1
	fi
	f=$((f + nf))
done
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
