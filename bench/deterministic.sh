#!/usr/bin/env bash
# Benchmark (not a test): the speed cost of kg-train --deterministic
# (issue 32, item 17).  FB15k-237 (../shared/data, or KG_SHARED_DATA),
# ComplEx d=200, batch 1024, 256 negatives, KG_BENCH_STEPS batches
# (default 200) from the same seed, on 1 and 2 threads, with and without
# --deterministic; each of the four runs KG_BENCH_REPEATS times (default
# 2), the order rotated each round, and the fastest kept (the machine is
# shared).  Records the training seconds and triples per second from the
# training log, the process's CPU seconds (user + system, the dataset's
# ingest excluded; with OMP_WAIT_POLICY=passive a thread waiting at a
# round's barrier sleeps, so they count the work, not the waiting: the
# steadier figure on a loaded machine), and whether the two deterministic
# runs wrote the same
# entities.npy (and the two Hogwild runs, which need not).  Writes
# bench/results/deterministic.json.
set -eu
top=$(pwd)
bin=$top/bin
shared=${KG_SHARED_DATA:-$top/../shared/data}
data=$shared/fb15k-237
work=$top/bench/work/deterministic.$$
out=$top/bench/results/deterministic.json
steps=${KG_BENCH_STEPS:-200}
repeats=${KG_BENCH_REPEATS:-2}
command -v jq >/dev/null || { echo "bench/deterministic.sh: needs jq" >&2; exit 1; }
[ -f "$data/train.txt.gz" ] || { echo "bench/deterministic.sh: no $data" >&2; exit 1; }
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin/kg-ingest" -q -o ds --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
base="--model_name ComplEx --hidden_dim 200 --batch_size 1024
    --neg_sample_size 256 --lr 0.1 --seed 1 --max_step $steps -q --force"
runs=runs.jsonl
: >"$runs"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
configs="1:0 2:0 1:1 2:1"
for ((k = 0; k < repeats; k++)); do
	set -- $configs
	for c in "$@"; do
		t=${c%:*} det=${c#*:}
		flag=$([ "$det" = 1 ] && echo --deterministic || true)
		echo "bench/deterministic.sh: round $k, $t threads, deterministic $det" >&2
		/usr/bin/time -f '%U %S' -o cpu.txt \
		    "$bin/kg-train" $base --num_thread "$t" $flag ds "m$t.$det"
		cpu=$(awk '{ print $1 + $2 }' cpu.txt)
		jq -c --argjson t "$t" --argjson det "$det" --argjson k "$k" \
		    --argjson cpu "$cpu" -s '
		    {threads: $t, deterministic: ($det == 1), round: $k,
		     cpu_seconds_process: $cpu,
		     seconds: (map(.seconds) | add),
		     triples: (map(.triples_per_second * .seconds) | add)}
		    | .triples_per_second = (.triples / .seconds)' \
		    "m$t.$det/train_log.jsonl" >>"$runs"
		md5sum <"m$t.$det/entities.npy" | cut -c1-32 >"m$t.$det.sum"
	done
	configs="${configs#* } ${configs%% *}"	# rotate the order
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
same_det=$(cmp -s m1.1.sum m2.1.sum && echo true || echo false)
same_hog=$(cmp -s m1.0.sum m2.0.sum && echo true || echo false)
jq -s --arg steps "$steps" --argjson sd "$same_det" --argjson sh "$same_hog" \
    --arg cpu "$(nproc) cores" --arg when "$(date -u +%FT%TZ)" \
    --arg load "$load0 at the start, $load1 at the end" '
    def best(t; d): map(select(.threads == t and .deterministic == d))
        | min_by(.seconds);
    {benchmark: "kg-train --deterministic against Hogwild",
     dataset: "FB15k-237", model: "ComplEx", dim: 200, batch_size: 1024,
     neg_sample_size: 256, batches: ($steps | tonumber), machine: $cpu,
     date: $when, load_average: $load, note: "fastest of the repeats; the machine is shared with other jobs",
     runs: .,
     best: [ (1, 2) as $t | (false, true) as $d | best($t; $d)
         | {threads, deterministic, seconds, triples_per_second} ],
     least_cpu: [ (1, 2) as $t | (false, true) as $d
         | map(select(.threads == $t and .deterministic == $d))
         | min_by(.cpu_seconds_process)
         | {threads, deterministic, cpu_seconds_process} ],
     deterministic_1_and_2_threads_identical: $sd,
     hogwild_1_and_2_threads_identical: $sh}
    | .slowdown = {
        "1_thread": ((.best[] | select(.threads == 1 and .deterministic) | .seconds) /
                     (.best[] | select(.threads == 1 and (.deterministic | not)) | .seconds)),
        "2_threads": ((.best[] | select(.threads == 2 and .deterministic) | .seconds) /
                      (.best[] | select(.threads == 2 and (.deterministic | not)) | .seconds))}
    ' "$runs" >"$out.tmp"
mv "$out.tmp" "$out"
jq '{best, least_cpu, slowdown, deterministic_1_and_2_threads_identical}' "$out"
