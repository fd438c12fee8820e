#!/usr/bin/env bash
# Benchmark of kg-encode-attrs (not a test).  On enterprise graphs from
# build/aux/kg_gen_enterprise (1 million nodes, then the Ray paper's 2.8
# million): fit time and peak RSS, transform throughput (entities per
# second) for one shard and for two shards run as parallel processes (one
# thread each), merge time, and a check that the merged shards equal the
# single shard byte for byte.  The paper's figure (10,000 s for 2.8 million
# nodes on one worker, BERT on a GPU) is quoted, not measured; our text
# encoder is TF-IDF + truncated SVD on the CPU, so the comparison is one of
# pipelines, not of encoders.  Run from the repository root with bin/ and
# build/aux built (bench/run.sh does both); writes
# bench/results/attrs.json.  BENCH_ATTRS_NODES (default 1000000) and
# BENCH_ATTRS_FULL (default 2800000; 0 skips it) set the sizes.
set -eu
top=$(pwd)
bin=$top/bin
gen=$top/build/aux/kg_gen_enterprise
sizes="${BENCH_ATTRS_NODES:-1000000} ${BENCH_ATTRS_FULL:-2800000}"
work=$top/bench/work/attrs.$$
out=$top/bench/results/attrs.json
command -v jq >/dev/null || { echo "bench/attrs.sh: needs jq" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/attrs.sh: needs /usr/bin/time" >&2; exit 1; }
[ -x "$gen" ] || make -s build/aux/kg_gen_enterprise
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
ncpu=$(nproc --all)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
N="nice -n 10"
load0=$(cut -d' ' -f1-3 /proc/loadavg)

# measure LABEL NODES CMD...: run CMD under /usr/bin/time; append a JSON
# record with the command, wall seconds, CPU seconds (user + system) and
# peak RSS.
measure() {
	local label=$1 nodes=$2; shift 2
	local t=time.$label.txt e=err.$label.txt
	/usr/bin/time -f "%e %U %S %M" -o $t "$@" 2>$e >/dev/null || {
		cat $e >&2; return 1; }
	read -r secs user sys rss <$t
	jq -cn --arg lab "$label" --argjson nodes "$nodes" \
	    --arg cmd "$*" --argjson s "$secs" --argjson rss "$rss" \
	    --argjson cpu "$(awk -v u="$user" -v s="$sys" 'BEGIN{print u+s}')" \
	    '{"label": $lab, nodes: $nodes, command: $cmd, seconds: $s,
	      cpu_seconds: $cpu, peak_rss_kib: $rss}' >>"$runs"
	echo "bench/attrs.sh: $label ($nodes nodes): $secs s, cpu $user+$sys s, $rss KiB" >&2
}

for n in $sizes; do
	[ "$n" -gt 0 ] || continue
	d=g$n
	measure generate "$n" $N "$gen" -o $d -n "$n" -s 1
	measure ingest "$n" $N "$bin/kg-ingest" -q -o $d.ds \
	    --types $d/types.tsv --train $d/train.tsv --valid $d/valid.tsv \
	    --test $d/test.tsv
	rm -f $d/train.tsv $d/valid.tsv $d/test.tsv $d/types.tsv
	measure fit "$n" $N "$bin/kg-encode-attrs" fit -q -d $d.ds \
	    -s $d/schema.json -o $d.model
	measure transform_1_shard "$n" $N "$bin/kg-encode-attrs" transform \
	    -q -j 1 -d $d.ds -m $d.model -o $d.one
	# Two shards as two processes at once; the wall time covers both.
	start=$(date +%s.%N)
	measure transform_shard_0_of_2 "$n" $N "$bin/kg-encode-attrs" \
	    transform -q -j 1 -d $d.ds -m $d.model -o $d.s0 --shard 0/2 &
	p0=$!
	measure transform_shard_1_of_2 "$n" $N "$bin/kg-encode-attrs" \
	    transform -q -j 1 -d $d.ds -m $d.model -o $d.s1 --shard 1/2 &
	p1=$!
	wait $p0
	wait $p1
	wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.2f", e-s}')
	jq -cn --argjson nodes "$n" --argjson s "$wall" \
	    '{"label": "transform_2_shards_wall", nodes: $nodes, seconds: $s}' \
	    >>"$runs"
	measure merge_2_shards "$n" $N "$bin/kg-encode-attrs" merge -q \
	    -m $d.model -o $d.merged $d.s0 $d.s1
	same=true
	for f in $d.one/*.npy; do
		cmp -s "$f" "$d.merged/$(basename "$f")" || same=false
	done
	jq -cn --argjson nodes "$n" --argjson same "$same" \
	    --argjson edges "$(jq '.figures.triples | [.[]] | add // 0' \
	    $d.ds/manifest.json 2>/dev/null || echo 0)" \
	    --argjson bytes "$(du -sb $d | cut -f1)" \
	    '{"label": "check", nodes: $nodes, merged_equals_one_shard: $same,
	      edges: $edges, attribute_table_bytes: $bytes}' >>"$runs"
	rm -rf $d $d.ds $d.model $d.one $d.s0 $d.s1 $d.merged
done

jq -s --arg nproc "$ncpu" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --arg mem "$(awk '/MemTotal/ {print $2}' /proc/meminfo)" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg load "$load0" '
  def rec(l; n): map(select(."label" == l and .nodes == n)) | .[0];
  (map(.nodes) | unique) as $sizes |
  {
    benchmark: "kg-encode-attrs",
    date: $date,
    machine: { nproc: ($nproc | tonumber), cpu: $cpu,
               mem_kib: ($mem | tonumber), load_average: $load,
               note: "shared machine (load average before the run given); every process at nice 10, 1 thread" },
    paper: { seconds: 10000, nodes: 2800000,
             note: "Ray paper, attribute encoding on one worker with BERT on a GPU; quoted, not measured here" },
    sizes: [ $sizes[] as $n | {
      nodes: $n,
      edges: rec("check"; $n).edges,
      fit_seconds: rec("fit"; $n).seconds,
      fit_cpu_seconds: rec("fit"; $n).cpu_seconds,
      fit_peak_rss_kib: rec("fit"; $n).peak_rss_kib,
      transform_1_shard_seconds: rec("transform_1_shard"; $n).seconds,
      transform_1_shard_entities_per_second:
        ($n / rec("transform_1_shard"; $n).seconds),
      transform_1_shard_cpu_seconds: rec("transform_1_shard"; $n).cpu_seconds,
      transform_1_shard_peak_rss_kib: rec("transform_1_shard"; $n).peak_rss_kib,
      transform_2_shards_cpu_seconds: [rec("transform_shard_0_of_2"; $n).cpu_seconds,
        rec("transform_shard_1_of_2"; $n).cpu_seconds],
      transform_2_shards_wall_seconds: rec("transform_2_shards_wall"; $n).seconds,
      transform_2_shards_entities_per_second:
        ($n / rec("transform_2_shards_wall"; $n).seconds),
      speedup_2_vs_1_shard: (rec("transform_1_shard"; $n).seconds /
        rec("transform_2_shards_wall"; $n).seconds),
      merge_seconds: rec("merge_2_shards"; $n).seconds,
      fit_transform_merge_seconds: (rec("fit"; $n).seconds +
        rec("transform_2_shards_wall"; $n).seconds +
        rec("merge_2_shards"; $n).seconds),
      merged_equals_one_shard: rec("check"; $n).merged_equals_one_shard
    } ],
    runs: .
  }' "$runs" >"$out"
echo "bench/attrs.sh: wrote $out" >&2
