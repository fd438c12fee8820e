#!/usr/bin/env bash
# Benchmark of kg-partition and kg-expand (not a test).  For FB15k-237,
# WN18RR (from $KG_SHARED_DATA, default ../shared/data) and a generated
# graph of 10 million training triples (build/aux/gen_graph): wall time
# and peak RSS of kg-partition (metis, random) and kg-expand (k = 1, 2, and
# k = 2 with fan-out caps 25,10), with balance, edge cut and replication
# factors for P = 2, 4, 8.  Run from the repository root with bin/ built
# (bench/run.sh does both); writes bench/results/partition.json.
# BENCH_GEN_EDGES overrides the size of the generated graph.
set -eu
top=$(pwd)
bin=$top/bin
gen=$top/build/aux/gen_graph
data=${KG_SHARED_DATA:-$top/../shared/data}
edges=${BENCH_GEN_EDGES:-10000000}
work=$top/bench/work/partition.$$
out=$top/bench/results/partition.json
command -v jq >/dev/null || { echo "bench/partition.sh: needs jq" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/partition.sh: needs /usr/bin/time" >&2; exit 1; }
[ -x "$gen" ] || make -s build/aux/gen_graph
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
load0=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$runs"

# measure LABEL DATASET P CMD...: run CMD under /usr/bin/time, append a
# JSON record with the command, seconds, peak RSS and, if the command
# wrote OUTDIR (the argument after -o), the figures of its manifest.
measure() {
	local label=$1 ds=$2 p=$3; shift 3
	local o="" prev="" a
	for a in "$@"; do
		[ "$prev" = "-o" ] && o=$a
		prev=$a
	done
	/usr/bin/time -f "%e %M" -o time.txt "$@" 2>err.txt >/dev/null || {
		cat err.txt >&2; return 1; }
	read -r secs rss <time.txt
	local figs='{}'
	[ -n "$o" ] && [ -f "$o/manifest.json" ] && figs=$(jq -c '.figures |
	    del(.bucket_sizes, .nodes_per_part, .edges_per_part,
	        .seeds_per_part, .core_edges_per_part)' "$o/manifest.json")
	jq -nc --arg step "$label" --arg ds "$ds" --argjson p "$p" \
	    --arg cmd "${*//$top\//}" --argjson secs "$secs" --argjson rss "$rss" \
	    --argjson figs "$figs" \
	    '{dataset: $ds, step: $step, parts: $p, command: $cmd,
	      seconds: $secs, peak_rss_kib: $rss, figures: $figs}' >>"$runs"
	echo "bench/partition.sh: $ds P=$p $label: ${secs} s, ${rss} KiB" >&2
}

datasets=()
for name in fb15k-237 wn18rr; do
	if [ -f "$data/$name/train.txt.gz" ]; then
		"$bin/kg-ingest" -q -o "$name" --train "$data/$name/train.txt.gz" \
		    --valid "$data/$name/valid.txt.gz" --test "$data/$name/test.txt.gz"
		datasets+=("$name")
	else
		echo "bench/partition.sh: no $data/$name; skipped" >&2
	fi
done
gname=gen-$edges
"$gen" -n $((edges / 10)) -m "$edges" -r 100 -c 1000 -l 0.8 -v 1000 -t 1000 \
    -s 1 -o "$gname"
datasets+=("$gname")

for ds in "${datasets[@]}"; do
	for p in 2 4 8; do
		measure partition-metis "$ds" $p "$bin/kg-partition" -q -p $p -m metis -o pm "$ds"
		measure partition-random "$ds" $p "$bin/kg-partition" -q -p $p -m random -o pr "$ds"
		measure partition-metis-vertex-cut "$ds" $p "$bin/kg-partition" -q -p $p -m metis -e vertex-cut -o pv "$ds"
		for k in 1 2; do
			measure "expand-k$k" "$ds" $p "$bin/kg-expand" -q -k $k -p pm -o x "$ds"
			rm -rf x
		done
		measure expand-k2-fanout-25-10 "$ds" $p "$bin/kg-expand" -q -k 2 -c 25,10 -p pm -o x "$ds"
		measure expand-k2-random-parts "$ds" $p "$bin/kg-expand" -q -k 2 -p pr -o xr "$ds"
		rm -rf x xr pm pr pv
	done
done

# Ratios against baselines measured in this same run: METIS cut over the
# random cut, and capped over uncapped replication.
jq -s --arg nproc "$(nproc --all)" --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --arg mem "$(awk '/MemTotal/ {print $2 " kB"}' /proc/meminfo)" \
    --arg load0 "$load0" --arg load1 "$(cut -d' ' -f1-3 /proc/loadavg)" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg gen "$gname" \
    --arg gencmd "build/aux/gen_graph -n $((edges / 10)) -m $edges -r 100 -c 1000 -l 0.8 -v 1000 -t 1000 -s 1" '
    def find($d; $p; $s): map(select(.dataset == $d and .parts == $p and .step == $s))[0];
    . as $runs |
    {
      benchmark: "partition",
      date: $date,
      machine: {nproc: ($nproc | tonumber), cpu: $cpu, memory: $mem,
                loadavg_at_start: $load0, loadavg_at_end: $load1},
      generated_graph: {name: $gen, command: $gencmd},
      runs: $runs,
      summary: [ $runs | map({dataset, parts}) | unique[] as $k |
        ($runs | find($k.dataset; $k.parts; "partition-metis")) as $m |
        ($runs | find($k.dataset; $k.parts; "partition-random")) as $r |
        ($runs | find($k.dataset; $k.parts; "expand-k1")) as $x1 |
        ($runs | find($k.dataset; $k.parts; "expand-k2")) as $x2 |
        ($runs | find($k.dataset; $k.parts; "expand-k2-fanout-25-10")) as $xc |
        ($runs | find($k.dataset; $k.parts; "expand-k2-random-parts")) as $xr |
        {dataset: $k.dataset, parts: $k.parts,
         metis_node_balance: $m.figures.node_balance,
         metis_cut_fraction: (1 - $m.figures.inside_fraction),
         random_cut_fraction: (1 - $r.figures.inside_fraction),
         metis_over_random_cut: ($m.figures.edge_cut / $r.figures.edge_cut),
         metis_seconds: $m.seconds, random_seconds: $r.seconds,
         replication_k1: {nodes: $x1.figures.node_replication, edges: $x1.figures.edge_replication},
         replication_k2: {nodes: $x2.figures.node_replication, edges: $x2.figures.edge_replication},
         replication_k2_fanout_25_10: {nodes: $xc.figures.node_replication, edges: $xc.figures.edge_replication},
         replication_k2_random_parts: {nodes: $xr.figures.node_replication, edges: $xr.figures.edge_replication},
         expand_seconds: {k1: $x1.seconds, k2: $x2.seconds, k2_fanout: $xc.seconds}}]
    }' "$runs" >"$out"
echo "bench/partition.sh: wrote $out" >&2
