#!/usr/bin/env bash
# Benchmark: a graph of Freebase86m's size on this machine (issue 40; not
# a test).
#
# build/aux/gen_freebase writes a synthetic graph of Freebase86m's shape
# (86,054,151 entities, 14,824 relations, 304,727,650 / 16,929,318 /
# 16,929,308 edges at scale 1; power-law degrees, planted clusters so
# that MRR measures learning) straight as a dataset, at each scale of
# BENCH_FB_RUNS, a list of SCALE:WHAT with WHAT one of
#   epoch    generate, partition, one epoch, sampled evaluation
#   epochs=N the same with N epochs
#   steps=N  generate, partition, the first N steps of an epoch
#   prep     generate and partition only
# (default "0.01:epoch 0.05:epoch 0.45:steps=300 1:prep"; the 10 epochs of
# bench/results/freebase86m_10epochs.json: BENCH_FB_RUNS=0.01:epochs=10
# BENCH_FB_OUT=bench/results/freebase86m_10epochs.json).  Every stage
# runs under /usr/bin/time -v: seconds, CPU seconds (user + system: what a
# stage costs whatever else runs), peak RSS, blocks read and
# written (ru_inblock / ru_oublock, 512 bytes each: what reached the disk,
# page-cache hits not counted), the load average and the free disk before
# and after, and the exact command go into bench/results/freebase86m.json.
#
# Partitioning: 16 random partitions (kg-partition -m random, as PBG and
# Marius split Freebase86m: METIS on 86M nodes needs more memory than
# this machine has).  Training: Marius's Freebase86m settings where
# kgpipe has them: ComplEx d=100, batches of 50,000 positives in chunks
# of 5,000 sharing 1,000 negatives, half of them degree-based
# (--neg_sampler mixed), row-wise Adagrad (the default --ent_optimizer)
# at lr 0.1, 2 threads, out of core over the 16 partitions with
# --mem_budget BENCH_FB_BUDGET (default 11.4G) times the scale: 4
# partitions (a quarter of the table) and one read ahead at every scale,
# the rest of memory left to the page cache; --swap_dir on the work disk.
# Evaluation: Marius's protocol as kgpipe offers it: test edges ranked
# unfiltered (--raw) against 1,000 sampled negatives, once uniform, once
# degree-based (kg-eval draws one kind per run; Marius ranks against the
# union of both), reading rows from disk (--stream).
#
# Disk: before each scale it computes what the scale needs (the dataset,
# the partitions, the partition files of the table and its Adagrad state,
# and the model written at the end: float32 rows and state) and refuses
# the scale, recording the numbers, when that is more than the free disk
# less BENCH_FB_RESERVE (default 2 GB) or more than BENCH_FB_DISK_CAP
# (default 40 GB, the share of the disk this benchmark may take); a
# refused training still runs its generate and partition stages when
# those fit.  Everything is removed after each scale.
# FREEBASE_DISK_DTYPE (float32, the default, or float16) is kg-train's
# --disk_dtype: float16 partition files hold 2 bytes a row value (and 4
# of Adagrad state), the model stays float32, so at scale 1 the need
# drops from 80.5 GB to 63.3 GB (the partition files from 34.8 GB to
# 17.6 GB).
#
# Run from the repository root with bin/ and build/aux built; work files
# in BENCH_FB_WORK (default bench/work/fb.PID), results in BENCH_FB_OUT
# (default bench/results/freebase86m.json).
set -eu
top=$(pwd)
bin=$top/bin
gen=$top/build/aux/gen_freebase
runs_spec=${BENCH_FB_RUNS:-0.01:epoch 0.05:epoch 0.45:steps=300 1:prep}
budget_gb=${BENCH_FB_BUDGET:-11.4}
reserve=${BENCH_FB_RESERVE:-2000000000}
cap=${BENCH_FB_DISK_CAP:-40000000000}
parts=16
work=${BENCH_FB_WORK:-$top/bench/work/fb.$$}
out=${BENCH_FB_OUT:-$top/bench/results/freebase86m.json}
# Both are used after the cd into the work directory: relative ones are
# taken from where the script was started.
case $work in /*) ;; *) work=$top/$work ;; esac
case $out in /*) ;; *) out=$top/$out ;; esac
dtype=${FREEBASE_DISK_DTYPE:-float32}
case $dtype in
float32) vbytes=4 ;;
float16) vbytes=2 ;;
*) echo "bench/freebase.sh: FREEBASE_DISK_DTYPE must be float32 or float16" >&2
	exit 1 ;;
esac
for t in jq /usr/bin/time; do
	command -v $t >/dev/null || { echo "bench/freebase.sh: needs $t" >&2; exit 1; }
done
[ -x "$gen" ] || { echo "bench/freebase.sh: no $gen (make all)" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
load() { cut -d' ' -f1-3 /proc/loadavg; }
free_bytes() { df -B1 --output=avail . | tail -1 | tr -dc 0-9; }

# The bytes a scale needs on disk: the dataset (12 bytes an edge, about
# 12 a name), the partitions (16 bytes a train edge, 12 an entity), the
# partition files (100 values of $vbytes bytes and one float32 Adagrad
# value a row) and the model (float32 rows and state).  Prints "dataset
# partitions files model".
need_bytes() {
	jq -n --argjson s "$1" --argjson v "$vbytes" '
	    (86054151 * $s | round) as $n | (338586276 * $s | round) as $e |
	    (304727650 * $s | round) as $t |
	    "\($e * 12 + $n * 12) \($t * 16 + $n * 12) \($n * (100 * $v + 4)) \($n * 101 * 4)"' -r
}

# stage SCALE NAME EXTRA_JSON -- CMD...: run CMD under time -v and
# append one JSON object to runs.jsonl.
stage() {
	local scale=$1 name=$2 extra=$3; shift 4
	local l0 f0 t0 t1 rc=0
	l0=$(load); f0=$(free_bytes); t0=$(date +%s.%N)
	/usr/bin/time -v -o time.txt "$@" >stdout.txt 2>err.txt || rc=$?
	t1=$(date +%s.%N)
	[ $rc -eq 0 ] || cat err.txt >&2
	jq -c -n --arg scale "$scale" --arg name "$name" --arg cmd "$*" \
	    --argjson rc $rc --arg t0 "$t0" --arg t1 "$t1" --arg l0 "$l0" \
	    --arg l1 "$(load)" --arg f0 "$f0" --arg f1 "$(free_bytes)" \
	    --arg rss "$(awk -F': ' '/Maximum resident/ {print $2}' time.txt)" \
	    --arg in "$(awk -F': ' '/File system inputs/ {print $2}' time.txt)" \
	    --arg outb "$(awk -F': ' '/File system outputs/ {print $2}' time.txt)" \
	    --arg user "$(awk -F': ' '/User time/ {print $2}' time.txt)" \
	    --arg sys "$(awk -F': ' '/System time/ {print $2}' time.txt)" \
	    --argjson extra "$extra" '{
		scale: ($scale | tonumber), stage: $name, command: $cmd,
		exit: $rc, seconds: (($t1 | tonumber) - ($t0 | tonumber)),
		peak_rss_kib: ($rss | tonumber),
		cpu_seconds: (($user | tonumber) + ($sys | tonumber)),
		disk_read_bytes: (($in | tonumber) * 512),
		disk_written_bytes: (($outb | tonumber) * 512),
		load_average_before: $l0, load_average_after: $l1,
		free_disk_before: ($f0 | tonumber),
		free_disk_after: ($f1 | tonumber) } + $extra' >>"$runs"
	tail -n 1 "$runs" >&2
	return $rc
}

refuse() {
	jq -c -n --argjson s "$1" --arg what "$2" --argjson need "$3" \
	    --argjson free "$4" --argjson cap "$cap" --argjson res "$reserve" '{
		scale: $s, stage: "refused", what: $what, need_bytes: $need,
		free_disk: $free, disk_cap: $cap, reserve: $res,
		message: "\($what) needs \($need / 1e9 | . * 10 | round / 10) GB; \($free / 1e9 | . * 10 | round / 10) GB free (less a \($res / 1e9) GB reserve), cap \($cap / 1e9) GB" }' |
	    tee -a "$runs" >&2
}

hp="-q --model_name ComplEx --hidden_dim 100 --batch_size 50000
    --neg_sample_size 1000 --neg_chunk_size 5000 --neg_sampler mixed
    --lr 0.1 --ent_optimizer adagrad --num_thread 2 --seed 1 --no_checkpoint
    --disk_dtype $dtype"
for spec in $runs_spec; do
	s=${spec%%:*} what=${spec#*:}
	read -r dsb pb fb tb <<<"$(need_bytes "$s")"
	have=$(free_bytes)
	limit=$(( have - reserve < cap ? have - reserve : cap ))
	prep=$(( dsb + pb ))
	full=$(( prep + fb + tb ))
	train=1
	[ "$what" = prep ] && train=0
	if [ $prep -gt $limit ]; then
		refuse "$s" "generating and partitioning scale $s" $prep $have
		continue
	fi
	# Also for prep: the numbers that keep the training from running.
	if [ $full -gt $limit ]; then
		refuse "$s" "training scale $s ($dtype partition files of $fb bytes, a model of $tb)" \
		    $full $have
		train=0
	fi
	stage "$s" generate '{}' -- "$gen" --scale "$s" -o ds
	stage "$s" partition '{}' -- "$bin/kg-partition" -q -m random -p $parts \
	    -s 1 -o part ds
	jq -c --argjson s "$s" '{ scale: $s, stage: "sizes",
	    figures: .figures }' ds/manifest.json >>"$runs"
	jq -c -n --argjson s "$s" --arg ds "$(du -sb ds | cut -f1)" \
	    --arg p "$(du -sb part | cut -f1)" '{ scale: $s, stage: "disk",
	    dataset_bytes: ($ds | tonumber), partition_bytes: ($p | tonumber) }' \
	    >>"$runs"
	if [ $train = 1 ]; then
		budget=$(jq -n --argjson s "$s" --argjson b "$budget_gb" \
		    '$b * $s * 1e9 | floor')
		limit_args="--epochs 1"
		case $what in
		steps=*) limit_args="--max_step ${what#steps=}" ;;
		epochs=*) limit_args="--epochs ${what#epochs=}" ;;
		esac
		mkdir -p swap
		stage "$s" train '{}' -- "$bin/kg-train" $hp --partitions part \
		    --mem_budget "$budget" --swap_dir swap $limit_args ds model
		jq -c --argjson s "$s" --argjson cpu "$(tail -n 1 "$runs" |
		    jq .cpu_seconds)" '{ scale: $s, stage: "train_figures",
		    cpu_seconds: $cpu, figures: .figures }' model/manifest.json \
		    >>"$runs"
		if [ "${what#steps=}" = "$what" ]; then
			for mode in uniform degree; do
				stage "$s" "eval_$mode" '{}' -- "$bin/kg-eval" -q \
				    --raw --stream --neg-sample 1000 --neg-mode $mode \
				    --threads 2 -o "eval_$mode.json" ds model
				jq -c --argjson s "$s" --arg m "$mode" '{ scale: $s,
				    stage: "eval_\($m)_metrics",
				    metrics: .metrics.both }' "eval_$mode.json" >>"$runs"
			done
		fi
	fi
	rm -rf ds part model swap eval_uniform.json eval_degree.json
done

jq -s --arg date "$(date -u +%FT%TZ)" --arg nproc "$(nproc)" \
    --arg commit "$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --arg mem "$(free -g | awk '/Mem:/ {print $2}')" \
    --arg spec "$runs_spec" --arg dtype "$dtype" '{
	benchmark: "freebase86m", date: $date, commit: $commit,
	nproc: ($nproc | tonumber), cpu: $cpu, ram_gib: ($mem | tonumber),
	runs_spec: $spec, disk_dtype: $dtype, runs: .,
	projected_full_epoch: [ .[] | select(.stage == "train_figures") | {
	    scale, triples_per_second: .figures.triples_per_second,
	    steps: .figures.steps, train_seconds: .figures.train_seconds,
	    swaps: .figures.swaps, swaps_lower_bound: .figures.swaps_lower_bound,
	    trained_triples: (.figures.triples_per_second *
		.figures.train_seconds | round),
	    triples_per_cpu_second: (.figures.triples_per_second *
		.figures.train_seconds / .cpu_seconds),
	    projected_epoch_seconds_at_scale_1:
		(304727650 / .figures.triples_per_second),
	    projected_epoch_seconds_at_scale_1_if_2_cores_at_cpu_rate:
		(304727650 / (2 * .figures.triples_per_second *
		.figures.train_seconds / .cpu_seconds)),
	    projected_10_epochs_seconds_at_scale_1:
		(10 * 304727650 / .figures.triples_per_second) } ] }' \
    "$runs" >"$out.tmp"
mv "$out.tmp" "$out"
echo "bench/freebase.sh: wrote $out" >&2
