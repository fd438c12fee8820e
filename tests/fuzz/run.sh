#!/bin/sh
# Runs the libFuzzer harnesses that `make fuzz` built: for each target,
# first the saved crashers of tests/fuzz/crashers/<target>/ once each (a
# fixed bug must stay fixed), then SECONDS of fuzzing over a working
# corpus in BUILD/corpus/<target>/ seeded from tests/fuzz/corpus/<target>/
# (the repository's seeds are never written).  Prints one line per target
# (executions, coverage, corpus size, the verdict) and, for a finding, the
# saved input and the sanitizer's report; exits 1 if any target found
# something.
#
# Usage: tests/fuzz/run.sh BUILD SECONDS target...
set -u
build=${1:?usage: tests/fuzz/run.sh BUILD SECONDS target...}
secs=${2:?usage: tests/fuzz/run.sh BUILD SECONDS target...}
shift 2
here=$(cd "$(dirname "$0")" && pwd)
# The harnesses write their inputs to files: keep those in memory.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm
	export TMPDIR
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

status=0
for t in "$@"; do
	bin=$build/fuzz_$t
	seeds=$here/corpus/$t
	work=$build/corpus/$t
	art=$build/artifacts/$t
	log=$build/log/$t.log
	mkdir -p "$work" "$art" "$build/log"
	dict=
	[ -f "$here/$t.dict" ] && dict=-dict=$here/$t.dict

	# Known crashers: each must now run clean.
	if [ -d "$here/crashers/$t" ] &&
	    [ -n "$(ls -A "$here/crashers/$t" 2>/dev/null)" ]; then
		if "$bin" $dict "$here/crashers/$t"/* >"$log.crashers" 2>&1; then
			echo "$t: saved crashers run clean"
		else
			echo "$t: a saved crasher still fails (log: $log.crashers)"
			grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: |.*runtime error)' \
			    "$log.crashers" | head -n 5 | sed 's/^/    /'
			status=1
		fi
	fi

	"$bin" $dict -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="$art/" \
	    "$work" "$seeds" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	if [ "$rc" -eq 0 ]; then
		verdict=clean
	else
		verdict="FOUND SOMETHING (exit $rc, log: $log)"
		status=1
	fi
	echo "$t: ${runs:-?} runs in $secs s, cov ${cov:-?} ft ${ft:-?}," \
	    "corpus ${corp:-?}, peak RSS ${rss:-?} MB: $verdict"
	if [ "$rc" -ne 0 ]; then
		grep -E '^(==[0-9]+==ERROR|SUMMARY|fuzz: |.*runtime error|artifact_prefix|Test unit written)' \
		    "$log" | head -n 8 | sed 's/^/    /'
	fi
done
exit $status
