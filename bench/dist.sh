#!/usr/bin/env bash
# Benchmark of distributed training (not a test).  FB15k-237 from
# $KG_SHARED_DATA (default ../shared/data), TransE_l2 at DGL-KE-like
# settings (dim 200, gamma 19.9, lr 0.25, batch 1024, 256 negatives,
# self-adversarial), one OpenMP thread per process: the plain single
# process without partitions (the baseline), kg-train --partitions with
# 1 and 2 ranks on 4 random partitions and 4 ranks on 8 (oversubscribed
# on this 2-core machine, labelled so), and --dist ssgd with 2 ranks.  For
# each: seconds per epoch, filtered test MRR (kg-eval, itself run with 2
# ranks), bytes sent per epoch (counted in lib/dist), peak RSS per rank
# and the entity rows a rank held at once.  Run from the repository root
# with bin/ built; writes bench/results/dist.json.  BENCH_DIST_EPOCHS
# overrides the epoch count (default 3).
set -eu
top=$(pwd)
bin=$top/bin
data=${KG_SHARED_DATA:-$top/../shared/data}
epochs=${BENCH_DIST_EPOCHS:-3}
work=$top/bench/work/dist.$$
out=$top/bench/results/dist.json
command -v jq >/dev/null || { echo "bench/dist.sh: needs jq" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "bench/dist.sh: needs mpirun" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/dist.sh: needs /usr/bin/time" >&2; exit 1; }
[ -d "$data/fb15k-237" ] || { echo "bench/dist.sh: no $data/fb15k-237" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OPENBLAS_NUM_THREADS=1
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
d=$data/fb15k-237
"$bin/kg-ingest" -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz"
"$bin/kg-partition" -q -m random -p 4 -o p4 ds
"$bin/kg-partition" -q -m random -p 8 -o p8 ds
runs=$work/runs.jsonl
: >"$runs"

mrr() {
	mpirun -np 2 "$bin/kg-eval" -q --threads 1 ds "$1" | jq '.metrics.both.mrr'
}

# run LABEL RANKS PARTS MODEL_DIR CMD...
run() {
	local label=$1 ranks=$2 parts=$3 model=$4; shift 4
	/usr/bin/time -f "%e %M" -o time.txt "$@" 2>err.txt >/dev/null || {
		cat err.txt >&2; return 1; }
	local secs rss m
	read -r secs rss <time.txt
	m=$(mrr "$model")
	jq -c -n --arg lab "$label" --argjson ranks "$ranks" \
	    --argjson parts "$parts" --arg cmd "$*" --argjson secs "$secs" \
	    --argjson rss "$rss" --argjson mrr "$m" --argjson epochs "$epochs" \
	    --slurpfile man "$model/manifest.json" '{
		"label": $lab, ranks: $ranks, partitions: $parts, command: $cmd,
		wall_seconds: $secs, epochs: $epochs,
		seconds_per_epoch: (($man[0].figures.train_seconds // $secs) / $epochs),
		test_mrr: $mrr,
		bytes_sent_total: $man[0].figures.bytes_sent,
		bytes_sent_per_epoch: (if $man[0].figures.bytes_sent then $man[0].figures.bytes_sent / $epochs else null end),
		peak_rss_kib_per_rank: ($man[0].figures.peak_rss_kib_per_rank //
		    [$rss]),
		peak_rss_kib_max_process: $rss,
		partition_bytes_held_max_per_rank:
		    $man[0].figures.partition_bytes_held_max_per_rank,
		entity_table_bytes: $man[0].figures.entity_table_bytes }' >>"$runs"
	tail -n 1 "$runs" >&2
}

hp="-q --model_name TransE_l2 --hidden_dim 200 --gamma 19.9 --lr 0.25
    --batch_size 1024 --neg_sample_size 256 -adv --epochs $epochs --seed 1
    --num_thread 1 --no_checkpoint"
run "plain kg-train, no partitions" 1 1 base nice -n 10 "$bin/kg-train" $hp \
    ds base
run "1 rank, 4 partitions" 1 4 r1 nice -n 10 mpirun -np 1 "$bin/kg-train" \
    $hp --partitions p4 ds r1
run "2 ranks, 4 partitions" 2 4 r2 nice -n 10 mpirun -np 2 "$bin/kg-train" \
    $hp --partitions p4 ds r2
run "4 ranks, 8 partitions (oversubscribed: 4 ranks on $(nproc --all) cores)" 4 8 r4 \
    nice -n 10 mpirun --oversubscribe -np 4 "$bin/kg-train" $hp \
    --partitions p8 ds r4
run "2 ranks, --dist ssgd" 2 1 s2 nice -n 10 mpirun -np 2 "$bin/kg-train" \
    $hp --dist ssgd ds s2

# What two processes get from this machine right now (other load
# included): one plain epoch alone, then two at once.  2 / (pair / alone)
# bounds the speed-up 2 ranks can show here.
one="-q --model_name TransE_l2 --hidden_dim 200 --gamma 19.9 --lr 0.25
    --batch_size 1024 --neg_sample_size 256 -adv --epochs 1 --seed 1
    --num_thread 1 --no_checkpoint --force"
t0=$(date +%s.%N)
nice -n 10 "$bin/kg-train" $one ds alone
t1=$(date +%s.%N)
nice -n 10 "$bin/kg-train" $one ds pair1 & nice -n 10 "$bin/kg-train" $one ds pair2
wait
t2=$(date +%s.%N)
probe=$(awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "{\"one_epoch_alone_seconds\": %.2f, \"two_epochs_at_once_seconds\": %.2f, \"speedup_ceiling_for_2\": %.2f}", b - a, c - b, 2 * (b - a) / (c - b) }')

jq -s --arg nproc "$(nproc --all)" --argjson probe "$probe" --arg date "$(date -u +%FT%TZ)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" '{
	benchmark: "dist", date: $date, nproc: ($nproc | tonumber), cpu: $cpu,
	dataset: "FB15k-237", threads_per_process: 1,
	load_average: "'"$(cut -d' ' -f1-3 /proc/loadavg)"'",
	contention_probe: $probe,
	runs: .,
	memory_vs_plain: (. as $r | [ $r[1:][] | { "label": .label,
	    max_rank_rss_over_plain: ((.peak_rss_kib_per_rank | max) /
	    ($r[0].peak_rss_kib_max_process)),
	    entity_rows_held_over_whole_table:
	    (if .partition_bytes_held_max_per_rank then
	    (.partition_bytes_held_max_per_rank | max) / .entity_table_bytes
	    else null end) } ])
}' "$runs" >"$out"
echo "bench/dist.sh: wrote $out" >&2
