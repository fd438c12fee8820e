#!/usr/bin/env bash
# Runs the benchmarks (not tests): every bench/*.sh, or the ones named,
# from the repository root with bin/ built.  Each writes JSON under
# bench/results/.  Example: bench/run.sh ingest eval
set -u
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
mkdir -p bench/results bench/work
if [ $# -eq 0 ]; then
	# gpu_carry and gpu_device prepare and run the GPU checks on a lent
	# machine (make gpu-carry, make test-gpu): no benchmarks.  peers
	# installs the peers from PyPI and races them for half an hour or
	# more: only when named (bench/run.sh peers).
	set -- $(ls bench/*.sh | grep -v '/run.sh$\|/gpu_carry.sh$\|/gpu_device.sh$\|/peers.sh$' |
	    sed 's,bench/,,; s,\.sh$,,')
fi
rc=0
for b in "$@"; do
	echo "== bench/$b.sh" >&2
	start=$(date +%s)
	if ! bash "bench/$b.sh"; then
		echo "bench/$b.sh failed" >&2
		rc=1
	fi
	echo "== bench/$b.sh: $(( $(date +%s) - start )) s" >&2
done
exit $rc
