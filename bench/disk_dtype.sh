#!/usr/bin/env bash
# Benchmark of kg-train --disk_dtype float16 against float32 (issue 40's
# "fp16 tables ... measured MRR beside fp32 on FB15k-237"; not a test).
#
# FB15k-237 from $KG_SHARED_DATA (default ../shared/data), 4 random
# partitions (kg-partition -m random -s 1), out of core with
# --buffer_capacity 2, 2 threads, seed 1, no checkpoints, at the
# project's recipes (bench/train_accuracy_configs.sh): TransE (TransE_l2
# d=400) for BENCH_DD_TRANSE_EPOCHS epochs (default 20) and ComplEx-N3
# (d=2000, 1-vs-all) for BENCH_DD_COMPLEX_EPOCHS (default 2; about 200 s
# an epoch on 2 cores) instead of the recipes' 200 and 100
# (BENCH_DD_MODELS: a subset of "TransE ComplEx-N3").  For each
# model float32 then float16, the same seed, one run each: filtered test
# MRR (both sides, realistic ties: kg-eval's defaults), train seconds,
# the tool's bytes read and written (the partition files' bytes moved),
# the blocks that reached the disk and peak RSS (/usr/bin/time -v), and
# the largest difference of the two models' entity rows.  Everything
# runs niced; the load average is recorded with each run.
#
# Run from the repository root with bin/ built; writes BENCH_DD_OUT
# (default bench/results/disk_dtype.json).
set -eu
top=$(pwd)
bin=$top/bin
data=${KG_SHARED_DATA:-$top/../shared/data}
te=${BENCH_DD_TRANSE_EPOCHS:-20}
ce=${BENCH_DD_COMPLEX_EPOCHS:-2}
models=${BENCH_DD_MODELS:-TransE ComplEx-N3}
work=${BENCH_DD_WORK:-$top/bench/work/dd.$$}
out=${BENCH_DD_OUT:-$top/bench/results/disk_dtype.json}
for t in jq /usr/bin/time; do
	command -v $t >/dev/null || { echo "bench/disk_dtype.sh: needs $t" >&2; exit 1; }
done
/usr/bin/python3 -c "import numpy" 2>/dev/null ||
    { echo "bench/disk_dtype.sh: needs /usr/bin/python3 with numpy" >&2; exit 1; }
[ -d "$data/fb15k-237" ] || { echo "bench/disk_dtype.sh: no $data/fb15k-237" >&2; exit 1; }
source "$top/bench/train_accuracy_configs.sh"
export OPENBLAS_NUM_THREADS=1
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
load() { cut -d' ' -f1-3 /proc/loadavg; }
d=$data/fb15k-237
nice -n 10 "$bin/kg-ingest" -q -o ds --train "$d/train.txt.gz" \
    --valid "$d/valid.txt.gz" --test "$d/test.txt.gz"
nice -n 10 "$bin/kg-partition" -q -m random -p 4 -s 1 -o p4 ds
mkdir swap

# run MODEL EPOCHS DTYPE: train, evaluate, append one JSON object.
run() {
	local model=$1 epochs=$2 dtype=$3 m=$1-$3 l0 mrr
	local -a cfg
	read -ra cfg <<<"$(config fb15k-237 "$model")"
	l0=$(load)
	/usr/bin/time -v -o time.txt nice -n 10 "$bin/kg-train" -q \
	    "${cfg[@]:2}" --epochs "$epochs" --seed 1 --num_thread 2 \
	    --no_checkpoint --partitions p4 --buffer_capacity 2 \
	    --swap_dir swap --disk_dtype "$dtype" ds "$m" 2>err.txt ||
	    { cat err.txt >&2; return 1; }
	mrr=$(nice -n 10 "$bin/kg-eval" -q --threads 2 ds "$m" |
	    jq '.metrics.both.mrr')
	jq -c -n --arg model "$model" --arg dtype "$dtype" \
	    --argjson epochs "$epochs" --argjson mrr "$mrr" --arg l0 "$l0" \
	    --arg l1 "$(load)" --arg cmd "kg-train -q ${cfg[*]:2} --epochs $epochs --seed 1 --num_thread 2 --no_checkpoint --partitions p4 --buffer_capacity 2 --swap_dir swap --disk_dtype $dtype ds $m" \
	    --arg rss "$(awk -F': ' '/Maximum resident/ {print $2}' time.txt)" \
	    --arg in "$(awk -F': ' '/File system inputs/ {print $2}' time.txt)" \
	    --arg outb "$(awk -F': ' '/File system outputs/ {print $2}' time.txt)" \
	    --slurpfile man "$m/manifest.json" '$man[0].figures as $f | {
		model: $model, disk_dtype: $dtype, epochs: $epochs,
		command: $cmd, test_mrr: $mrr,
		train_seconds: $f.train_seconds,
		triples_per_second: $f.triples_per_second,
		swaps: $f.swaps, bytes_read: $f.bytes_read,
		bytes_written: $f.bytes_written,
		io_wait_seconds: $f.io_wait_seconds,
		disk_read_bytes: (($in | tonumber) * 512),
		disk_written_bytes: (($outb | tonumber) * 512),
		peak_rss_kib: ($rss | tonumber),
		load_average_before: $l0, load_average_after: $l1 }' >>"$runs"
	tail -n 1 "$runs" >&2
}

for model in $models; do
	case $model in
	TransE) set -- TransE "$te" ;;
	ComplEx-N3) set -- ComplEx-N3 "$ce" ;;
	*) echo "bench/disk_dtype.sh: no model $model" >&2; exit 1 ;;
	esac
	run "$1" "$2" float32
	run "$1" "$2" float16
	/usr/bin/python3 - "$1" >>"$runs" <<'EOF'
import json, sys
import numpy as np
m = sys.argv[1]
a = np.load(m + "-float32/entities.npy")
b = np.load(m + "-float16/entities.npy")
exact = bool((b.astype(np.float16).astype(np.float32) == b).all())
print(json.dumps({"model": m, "compare": "float16 vs float32 entities",
    "max_abs_difference": float(np.abs(a - b).max()),
    "max_abs_value": float(np.abs(a).max()),
    "float16_rows_exactly_binary16": exact}))
EOF
	rm -rf "$1"-float32 "$1"-float16
done

jq -s --arg date "$(date -u +%FT%TZ)" --arg nproc "$(nproc)" \
    --arg commit "$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" '{
	benchmark: "disk_dtype", date: $date, commit: $commit,
	nproc: ($nproc | tonumber), cpu: $cpu,
	note: "one run per model and dtype on a machine shared with other work (see the load averages); epochs far below the recipes",
	runs: [ .[] | select(.disk_dtype) ],
	compare: [ .[] | select(.compare) ],
	ratios: [ group_by(.model)[] | map(select(.disk_dtype)) |
	    select(length == 2) | (map({ (.disk_dtype): . }) | add) as $r | {
		model: $r.float32.model,
		mrr_float16_minus_float32: ($r.float16.test_mrr - $r.float32.test_mrr),
		bytes_written_ratio: ($r.float16.bytes_written / $r.float32.bytes_written),
		bytes_read_ratio: ($r.float16.bytes_read / $r.float32.bytes_read),
		train_seconds_ratio: ($r.float16.train_seconds / $r.float32.train_seconds),
		peak_rss_ratio: ($r.float16.peak_rss_kib / $r.float32.peak_rss_kib) } ] }' \
    "$runs" >"$out.tmp"
mv "$out.tmp" "$out"
echo "bench/disk_dtype.sh: wrote $out" >&2
