#!/usr/bin/env bash
# Benchmark of out-of-core training (issue 14; not a test).
#
# FB15k-237 from $KG_SHARED_DATA (default ../shared/data), TransE_l2 at
# DGL-KE-like settings (dim 200, gamma 19.9, lr 0.25, batch 1024, 256
# negatives, self-adversarial), BENCH_OOC_EPOCHS epochs (default 10), one
# thread per process: in memory (the baseline), out of core with 8
# random partitions and a buffer of 2 (and the same without the negative
# pool, PBG's negatives), and MPI buckets on 2 ranks (4 partitions) and 4
# ranks (8), with and without the pool.  Filtered test MRR, triples/s of training, peak RSS against
# C/P of the in-memory table + 200 MB.
#
# Beyond RAM: BENCH_OOC_BIG entities (default 100000000; 0 skips it) and
# as many triples, 1000 relations (build/aux/gen_triples into kg-ingest),
# 32 random partitions, ComplEx d=64, one epoch out of core with
# --mem_budget BENCH_OOC_BUDGET (default 4.1G: 4 partitions and one read
# ahead), then kg-eval --stream with 1000 sampled negatives.  It needs
# about 2.3 times the table (26 GB at 100M x 64) of free disk in
# bench/work: the dataset, the partitions, the partition files and the
# model.  (The generated graph is random: its MRR is chance.)  Peak
# RSS, swaps against their lower bound, bytes read and written, time.
# Everything runs niced; the load average is recorded with each run.
#
# Run from the repository root with bin/ and build/aux built; writes
# bench/results/out_of_core.json.
set -eu
top=$(pwd)
bin=$top/bin
aux=$top/build/aux
data=${KG_SHARED_DATA:-$top/../shared/data}
epochs=${BENCH_OOC_EPOCHS:-10}
big=${BENCH_OOC_BIG:-100000000}
budget=${BENCH_OOC_BUDGET:-4.1G}
work=${BENCH_OOC_WORK:-$top/bench/work/ooc.$$}
out=$top/bench/results/out_of_core.json
for t in jq mpirun /usr/bin/time; do
	command -v $t >/dev/null || { echo "bench/out_of_core.sh: needs $t" >&2; exit 1; }
done
[ -d "$data/fb15k-237" ] || { echo "bench/out_of_core.sh: no $data/fb15k-237" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
load() { cut -d' ' -f1-3 /proc/loadavg; }

# run LABEL DATASET MODEL EVAL_ARGS -- CMD...: time CMD (peak RSS over
# its processes: the largest rank's), read the manifest's figures,
# evaluate, append a JSON object to runs.jsonl.
run() {
	local label=$1 ds=$2 model=$3 eargs=$4; shift 5
	local l0 secs rss m
	l0=$(load)
	/usr/bin/time -f "%e %M" -o time.txt nice -n 10 "$@" 2>err.txt >/dev/null ||
	    { cat err.txt >&2; return 1; }
	read -r secs rss <time.txt
	m=$(nice -n 10 "$bin/kg-eval" -q --threads 2 $eargs "$ds" "$model" |
	    jq '.metrics.both.mrr')
	jq -c -n --arg lab "$label" --arg cmd "$*" --argjson secs "$secs" \
	    --argjson rss "$rss" --argjson mrr "$m" --arg l0 "$l0" \
	    --arg l1 "$(load)" --slurpfile man "$model/manifest.json" '
	    $man[0] as $m | ($m.config.dim) as $d | {
		label: $lab, command: $cmd,
		entities: $m.config.n_entities, dim: $d,
		table_bytes: ($m.config.n_entities * ($d + 1) * 4),
		partitions: ($m.figures.nparts // 1),
		buffer_capacity: ($m.figures.buffer_capacity // null),
		ranks: ($m.figures.ranks // 1),
		epochs: $m.figures.epochs,
		train_seconds: $m.figures.train_seconds,
		wall_seconds: $secs,
		triples_per_second: $m.figures.triples_per_second,
		peak_rss_kib: ([$m.figures.peak_rss_kib_per_rank[]?] + [$rss] | max),
		swaps: ($m.figures.swaps // null),
		swaps_lower_bound: ($m.figures.swaps_lower_bound // null),
		partition_bytes: ($m.figures.partition_bytes // null),
		bytes_read: ($m.figures.bytes_read // null),
		bytes_written: ($m.figures.bytes_written // null),
		mrr: $mrr, load_average_before: $l0, load_average_after: $l1 }' \
	    >>"$runs"
	tail -n 1 "$runs" >&2
}

d=$data/fb15k-237
"$bin/kg-ingest" -q -o fb --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz"
"$bin/kg-partition" -q -m random -p 4 -s 1 -o fb-p4 fb
"$bin/kg-partition" -q -m random -p 8 -s 1 -o fb-p8 fb
hp="-q --model_name TransE_l2 --hidden_dim 200 --gamma 19.9 --lr 0.25
    --batch_size 1024 --neg_sample_size 256 -adv --epochs $epochs --seed 1
    --num_thread 1 --no_checkpoint"
run "FB15k-237 in memory" fb mem "" -- "$bin/kg-train" $hp fb mem
run "FB15k-237 out of core, P=8, C=2" fb ooc "" -- "$bin/kg-train" $hp \
    --partitions fb-p8 --buffer_capacity 2 fb ooc
run "FB15k-237 out of core, P=8, C=2, negatives in the bucket (--neg_pool 0)" \
    fb ooc0 "" -- "$bin/kg-train" $hp --partitions fb-p8 --buffer_capacity 2 \
    --neg_pool 0 fb ooc0
run "FB15k-237 MPI buckets, 2 ranks, P=4" fb r2 "" -- mpirun -np 2 \
    "$bin/kg-train" $hp --partitions fb-p4 fb r2
run "FB15k-237 MPI buckets, 4 ranks, P=8 (oversubscribed: 4 ranks on $(nproc) cores)" \
    fb r4 "" -- mpirun --oversubscribe -np 4 "$bin/kg-train" $hp \
    --partitions fb-p8 fb r4
run "FB15k-237 MPI buckets, 2 ranks, P=4, --neg_pool 0" fb r2p0 "" -- \
    mpirun -np 2 "$bin/kg-train" $hp --partitions fb-p4 --neg_pool 0 fb r2p0
run "FB15k-237 MPI buckets, 4 ranks, P=8, --neg_pool 0 (oversubscribed)" fb \
    r4p0 "" -- mpirun --oversubscribe -np 4 "$bin/kg-train" $hp \
    --partitions fb-p8 --neg_pool 0 fb r4p0

if [ "$big" -gt 0 ]; then
	# Dataset and partitions (~0.27 of the table), the partition files
	# and the model (one table each), and some room.
	need=$(( big * 65 * 4 * 23 / 10 / 1000 / 1000 / 1000 ))
	have=$(df -BG --output=avail . | tail -1 | tr -dc 0-9)
	if [ "$have" -lt "$need" ]; then
		echo "bench/out_of_core.sh: $have GB free, the $big-entity run needs $need GB; skipped" >&2
	else
		nice -n 10 "$aux/gen_triples" -n "$big" -e "$big" -r 1000 |
		    nice -n 10 "$bin/kg-ingest" -q --split 0.998,0.001,0.001 \
		    --seed 1 -o big -
		nice -n 10 "$bin/kg-partition" -q -m random -p 32 -s 1 -o big-p32 big
		run "$big entities, d=64, out of core, P=32, --mem_budget $budget (1 epoch)" \
		    big bigm "--stream --neg-sample 1000 --raw" -- \
		    "$bin/kg-train" -q --model_name ComplEx --hidden_dim 64 \
		    --epochs 1 --seed 1 --num_thread 2 --no_checkpoint \
		    --partitions big-p32 --mem_budget "$budget" --swap_dir . \
		    big bigm
		rm -rf big big-p32 bigm
	fi
fi

jq -s --arg date "$(date -u +%FT%TZ)" --arg nproc "$(nproc)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --arg mem "$(free -g | awk '/Mem:/ {print $2}')" '
	(.[0]) as $mem_run | {
	benchmark: "out_of_core", date: $date, nproc: ($nproc | tonumber),
	cpu: $cpu, ram_gib: ($mem | tonumber), runs: .,
	against_in_memory: [ .[1:][] | select(.entities == $mem_run.entities) | {
	    label: .label, mrr_minus_in_memory: (.mrr - $mem_run.mrr),
	    throughput_share: (.triples_per_second / $mem_run.triples_per_second),
	    peak_rss_kib, rss_target_kib: (if .buffer_capacity then
	    ((.buffer_capacity / .partitions) * $mem_run.table_bytes / 1024 +
	    200 * 1024) else null end) } ],
	io_against_lower_bound: [ .[] | select(.swaps != null and
	    .swaps_lower_bound > 0) | { label: .label,
	    bytes_moved: (.bytes_read + .bytes_written),
	    lower_bound_bytes: (2 * .swaps_lower_bound * .partition_bytes),
	    ratio: ((.bytes_read + .bytes_written) / (2 * .swaps_lower_bound *
	    .partition_bytes)) } ],
	published_per_core: {
	    note: "quoted, not run here",
	    marius_freebase86m: "Marius (Mohoney et al., OSDI 2021), Freebase86m, d=100: 393k triples/s on one machine with one V100 GPU (the GPU does the maths; no per-CPU-core figure is given)",
	    pbg_freebase86m: "PyTorch-BigGraph on the same data, as Marius reports it: 99k triples/s",
	    source: "issue 14 quoting the Marius paper; not measured here"
	} }' "$runs" >"$out"
echo "bench/out_of_core.sh: wrote $out" >&2
