#!/bin/sh
# make test-gpu: the CUDA backend's operations on a GPU against the CPU
# backend (tests/gpu/gpu_ops.c).  Where it cannot run (a build without
# the CUDA backend, or no GPU visible) it prints one line saying so and
# succeeds; otherwise every case's line and "N passed, N failed, N skipped",
# failing when a case fails.
#
# Usage: tests/gpu/run.sh BUILD_DIR
build=${1:?usage: tests/gpu/run.sh BUILD_DIR}
if ! grep -q '^KG_CUDA=1$' "$build/cuda.cfg" 2>/dev/null; then
	echo "test-gpu: skipped: built without the CUDA backend (CUDA=0, or nvcc not found)"
	exit 0
fi
out=$("$build/gpu/gpu_ops" 2>&1)
rc=$?
case "$out" in
"skip - gpu_ops: "*)
	if [ "$rc" -eq 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ]; then
		echo "test-gpu: skipped: ${out#skip - gpu_ops: }"
		exit 0
	fi ;;
esac
printf '%s\n' "$out"
p=$(printf '%s\n' "$out" | grep -c '^ok - ')
f=$(printf '%s\n' "$out" | grep -c '^not ok - ')
s=$(printf '%s\n' "$out" | grep -c '^skip - ')
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
	echo "not ok - gpu_ops exited with status $rc"
	f=1
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
