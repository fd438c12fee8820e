#!/usr/bin/env bash
# Runs every test program and script given (or found), counts the lines
# "ok - ...", "not ok - ..." and "skip - ..." they print, and closes with
# "N passed, N failed, N skipped".  A program that exits non-zero without
# printing a "not ok" line counts as one failure (a crash, for instance).
#
# Usage: tests/run.sh [-v] BUILD_DIR [test ...]
#   BUILD_DIR holds tests/t_* unit binaries; without tests, all unit
#   binaries and all tests/cli/*/*.sh scripts run.
set -u
verbose=0
if [ "${1:-}" = "-v" ]; then verbose=1; shift; fi
build=${1:?usage: tests/run.sh [-v] BUILD_DIR [test ...]}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
export KG_TOP=$top
export KG_BIN=${KG_BIN:-$top/bin}
export KG_BUILD=$(cd "$build" && pwd)
if [ -z "${KG_SHARED_DATA+x}" ]; then
	if [ -f "$top/../shared/data/README.md" ]; then
		export KG_SHARED_DATA=$(cd "$top/../shared/data" && pwd)
	else
		export KG_SHARED_DATA=
	fi
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export LC_ALL=C

if [ $# -eq 0 ]; then
	set -- "$KG_BUILD"/tests/t_* "$top"/tests/cli/*/*.sh
fi

passed=0 failed=0 skipped=0
failures=() notoks=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/kgrun.XXXXXX")
trap 'rm -rf "$logdir"' EXIT
for t in "$@"; do
	[ -e "$t" ] || continue
	t=$(cd "$(dirname "$t")" && pwd)/$(basename "$t")
	name=${t#"$top"/}
	name=${name#"$KG_BUILD"/}
	work=$(mktemp -d "$logdir/work.XXXXXX")
	log=$work.log
	start=$(date +%s.%N)
	case "$t" in
	*.sh) (cd "$work" && TMPDIR=$work bash "$t") >"$log" 2>&1 ;;
	*)    (cd "$work" && TMPDIR=$work "$t") >"$log" 2>&1 ;;
	esac
	rc=$?
	secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e-s}')
	p=$(grep -c '^ok - ' "$log")
	f=$(grep -c '^not ok - ' "$log")
	s=$(grep -c '^skip - ' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc" >>"$log"
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '%-44s %4d ok %3d failed %3d skipped  %6ss\n' "$name" "$p" "$f" "$s" "$secs"
	grep '^skip - ' "$log" | sed 's/^/    /'
	if [ "$f" -gt 0 ] || [ "$verbose" -eq 1 ]; then
		if [ "$f" -gt 0 ]; then
			failures+=("$name")
			while IFS= read -r line; do
				notoks+=("$name: $line")
			done < <(grep '^not ok - ' "$log" | head -n 20)
		fi
		sed 's/^/    | /' "$log" | tail -n 60
	fi
	rm -rf "$work"
done
# The failing checks again at the end, where a truncated log still
# shows them.
if [ ${#failures[@]} -gt 0 ]; then
	printf '%s\n' "${notoks[@]}"
	echo "failed: ${failures[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
