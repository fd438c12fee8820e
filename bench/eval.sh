#!/usr/bin/env bash
# Benchmark of kg-eval (not a test): seconds to rank every FB15k-237 test
# triple (20,466, head and tail) against all 14,541 entities, filtered by
# train + valid + test, for TransE_l2 and DistMult with random embeddings
# of dimension 200 and 400, on 1 and 2 threads.  Baseline in the same
# invocation: the same run with OpenBLAS forced to its generic SSE3
# kernels (OPENBLAS_CORETYPE=Prescott), which is what OpenBLAS picks by
# itself on virtual machines that hide the CPU model; kg-eval then
# re-executes itself with fitting kernels.  Also one sampled run
# (1,000 uniform negatives).  PyKEEN's full filtered ranking of the same
# test set takes 170-235 s on this machine class (quoted in the task, not
# measured here).  Run from the repository root with bin/ and build/aux
# built (bench/run.sh does both); writes bench/results/eval.json.
set -eu
top=$(pwd)
bin=$top/bin
mkmodel=$top/build/aux/eval_mkmodel
data=${KG_SHARED_DATA:-$top/../shared/data}/fb15k-237
work=$top/bench/work/eval.$$
out=$top/bench/results/eval.json
command -v jq >/dev/null || { echo "bench/eval.sh: needs jq" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/eval.sh: needs /usr/bin/time" >&2; exit 1; }
[ -x "$mkmodel" ] || make -s build/aux/eval_mkmodel
[ -f "$data/train.txt.gz" ] || { echo "bench/eval.sh: no $data" >&2; exit 1; }
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

"$bin/kg-ingest" -q -o fb --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"

# measure LABEL ENV CMD...: run CMD (with ENV, "-" for none) under
# /usr/bin/time and append a record with kg-eval's own ranking time, the
# wall time and the CPU time (user + system).  On a shared machine the
# wall time of one thread is its CPU time divided by the share it got.
measure() {
	local label=$1 env=$2; shift 2
	if [ "$env" = - ]; then
		/usr/bin/time -f "%e %M %U %S" -o time.txt "$@" >report.json
	else
		env "$env" /usr/bin/time -f "%e %M %U %S" -o time.txt "$@" \
		    >report.json
	fi
	read -r secs rss usr sys <time.txt
	jq -c --arg lab "$label" --arg env "$env" \
	    --arg cmd "${*//$top\//}" --argjson secs "$secs" \
	    --argjson rss "$rss" --argjson cpu "$(awk -v u="$usr" -v s="$sys" \
	    'BEGIN { print u + s }')" \
	    '{"label": $lab, env: $env, command: $cmd, wall_seconds: $secs,
	      cpu_seconds: $cpu,
	      peak_rss_kib: $rss, rank_seconds: .seconds_rank,
	      threads: .threads, model: .model, dim: .dim,
	      protocol: .protocol, queries: (.n_triples * 2),
	      mrr: .metrics.both.mrr}' report.json >>"$runs"
	echo "bench/eval.sh: $label: rank $(jq .seconds_rank report.json) s," \
	    "wall $secs s, cpu $usr + $sys s" >&2
}

for model in TransE_l2 DistMult; do
	for dim in 200 400; do
		"$mkmodel" --seed 1 fb "m_${model}_$dim" "$model" "$dim"
		for t in 1 2; do
			measure "$model dim $dim, $t thread(s)" - \
			    nice -n 10 "$bin/kg-eval" -q --threads "$t" fb \
			    "m_${model}_$dim"
		done
	done
done
measure "TransE_l2 dim 200, 1 thread, generic OpenBLAS kernels (baseline)" \
    OPENBLAS_CORETYPE=Prescott nice -n 10 "$bin/kg-eval" -q --threads 1 fb \
    m_TransE_l2_200
measure "TransE_l2 dim 200, 1 thread, sampled 1000 uniform negatives" - \
    nice -n 10 "$bin/kg-eval" -q --threads 1 --neg-sample 1000 fb \
    m_TransE_l2_200

jq -s --arg nproc "$(nproc --all)" --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --arg load0 "$load_start" '
    (map(select(."label" | test("baseline"))) | .[0]) as $b |
    $b.rank_seconds as $base | $b.cpu_seconds as $base_cpu |
    {benchmark: "kg-eval full filtered ranking, FB15k-237 test (20,466 triples x 2 directions x 14,541 entities)",
     machine: {nproc: ($nproc | tonumber), cpu: $cpu,
        load_average_at_start: $load0, load_average_at_end: $load,
        note: "machine shared with other jobs; see the load averages"},
     date: $date,
     baseline: "same binary with OPENBLAS_CORETYPE=Prescott (generic kernels)",
     pykeen_reference_seconds: "170-235 (quoted in the task, not measured here)",
     runs: map(. + (if .protocol == "full" and .dim == 200 and
         .model == "TransE_l2" then {speedup_vs_baseline: ($base / .rank_seconds),
         cpu_speedup_vs_baseline: ($base_cpu / .cpu_seconds)} else {} end))}' \
    "$runs" >"$out"
echo "bench/eval.sh: wrote ${out#"$top"/}" >&2
