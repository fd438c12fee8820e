#!/usr/bin/env bash
# Runs every test program and script given (or found), counts the TAP
# lines they print ("ok - ...", "not ok - ...", "ok - ... # SKIP why";
# the older "skip - ..." counts as a skip too), and closes with
# "N passed, N failed, N skipped".  Each test must print its plan, one
# line "1..N" (first or last, as TAP allows); a test without a plan, or
# whose checks do not add up to its plan, counts one more failure, so a
# check that vanishes (a crashed python block, a helper that exited
# early) cannot pass unseen.  A program that exits non-zero without
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
	all=$(grep -Ec '^ok( |$)' "$log")
	s=$(grep -Eic '^ok( .*)?# *skip' "$log")
	old_s=$(grep -c '^skip - ' "$log")
	p=$((all - s)) s=$((s + old_s))
	f=$(grep -Ec '^not ok( |$)' "$log")
	plans=$(grep -E '^1\.\.[0-9]+' "$log")
	nplans=$(grep -Ec '^1\.\.[0-9]+' "$log")
	f0=$f
	if [ "$nplans" -ne 1 ]; then
		f=$((f + 1))
		echo "not ok - $name printed $nplans plan lines (1..N), wanted one" >>"$log"
	else
		planned=$(sed -E 's/^1\.\.([0-9]+).*/\1/' <<<"$plans")
		if [ "$planned" -ne $((p + s + f)) ]; then
			f=$((f + 1))
			echo "not ok - $name planned $planned checks, printed $((p + s + f0))" >>"$log"
		fi
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		echo "not ok - $name exited with status $rc" >>"$log"
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '%-44s %4d ok %3d failed %3d skipped  %6ss\n' "$name" "$p" "$f" "$s" "$secs"
	grep -Ei '^(ok( .*)?# *skip|skip - )' "$log" | sed 's/^/    /'
	if [ "$f" -gt 0 ] || [ "$verbose" -eq 1 ]; then
		if [ "$f" -gt 0 ]; then
			failures+=("$name")
			while IFS= read -r line; do
				notoks+=("$name: $line")
			done < <(grep -E '^not ok( |$)' "$log" | head -n 20)
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
