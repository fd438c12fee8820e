#!/bin/sh
# make test-gpu: the CUDA backend on a GPU: its operations against the CPU
# backend (tests/gpu/gpu_ops.c), the device trainer end to end on UMLS
# against the CPU trainer (tests/gpu/gpu_train.c), the partition buffer
# on FB15k-237 against the whole table (tests/gpu/gpu_buf.c, when the
# shared data is there), the device ranker's filtered ranks on
# FB15k-237 (UMLS without it) against the CPU evaluator's
# (tests/gpu/gpu_eval.c), and GNN training's device step against the CPU
# backend's (tests/gpu/gpu_gnn.c).  Where they cannot run
# (a build without the CUDA backend, or no GPU visible) it prints one
# line saying so and succeeds; otherwise every case's line and "N passed,
# N failed, N skipped", failing when a case fails.
#
# Usage: tests/gpu/run.sh BUILD_DIR
build=${1:?usage: tests/gpu/run.sh BUILD_DIR}
if ! grep -q '^KG_CUDA=1$' "$build/cuda.cfg" 2>/dev/null; then
	echo "test-gpu: skipped: built without the CUDA backend (CUDA=0, or nvcc not found)"
	exit 0
fi
build=$(cd "$build" && pwd) || exit 1
top=$(cd "$(dirname "$0")/../.." && pwd) || exit 1
p=0 f=0 s=0
for prog in gpu_ops gpu_train gpu_buf gpu_eval gpu_gnn; do
	out=$(KG_TOP=$top "$build/gpu/$prog" 2>&1)
	rc=$?
	case "$out" in
	"skip - $prog: "*)
		if [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
			echo "test-gpu: skipped: ${out#skip - "$prog": }"
			exit 0
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
