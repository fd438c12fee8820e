#!/usr/bin/env bash
# Benchmark of kg-train's throughput (not a test), on FB15k-237 (272,115
# train triples, 14,541 entities):
#  - DGL-KE's settings: hidden dim 400, batch 1000, 200 chunked negatives
#    shared by chunks of 200 positives, self-adversarial logistic loss,
#    TransE_l2 and ComplEx, on 1 and 2 threads;
#  - PBG's setting: ComplEx, d = 200, chunks of 1000 positives sharing 1000
#    uniform negatives, softmax loss (PBG adds the chunk's own entities
#    as further negatives; kg-train does not);
#  - baseline in the same invocation: ComplEx at DGL-KE's settings with
#    OpenBLAS forced to its generic SSE3 kernels (OPENBLAS_CORETYPE=
#    Prescott), what OpenBLAS 0.3.21 picks by itself on this VM.
# Throughput is kg-train's own figure (positives trained / seconds in the
# training loop, from the model manifest), per core = / threads.  FLOP
# per positive counts the three GEMMs of a chunk only (6 N d: scores,
# query and candidate gradients); the share of peak uses the nominal
# peak of one core (clock from lscpu x 64 FLOP/cycle for two AVX-512 FMA
# units, 32 without AVX-512).  The machine is shared: load average and
# CPU seconds are recorded with every run.  Run from the repository root
# with bin/ built; writes bench/results/train_speed.json.  Step counts
# can be scaled with KG_BENCH_STEPS (default 300 DGL-KE steps).
set -eu
top=$(pwd)
bin=$top/bin
data=${KG_SHARED_DATA:-$top/../shared/data}/fb15k-237
work=$top/bench/work/train_speed.$$
out=$top/bench/results/train_speed.json
steps=${KG_BENCH_STEPS:-300}
command -v jq >/dev/null || { echo "bench/train_speed.sh: needs jq" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/train_speed.sh: needs /usr/bin/time" >&2; exit 1; }
[ -f "$data/train.txt.gz" ] || { echo "bench/train_speed.sh: no $data" >&2; exit 1; }
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"

mhz=$(lscpu | awk -F: '/^CPU max MHz|^CPU MHz/ { gsub(/ /, "", $2); print $2; exit }')
[ -n "$mhz" ] || mhz=$(awk -F: '/cpu MHz/ { gsub(/ /, "", $2); print $2; exit }' /proc/cpuinfo)
if grep -qw avx512f /proc/cpuinfo; then fpc=64; else fpc=32; fi
peak=$(awk -v m="$mhz" -v f="$fpc" 'BEGIN { printf "%.1f", m * f / 1000 }')

"$bin/kg-ingest" -q -o fb --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"

# measure LABEL THREADS FLOP_PER_TRIPLE ENV ARGS...: train with ARGS and
# append one JSON record.
measure() {
	local label=$1 threads=$2 flop=$3 env=$4; shift 4
	local load cmd
	load=$(cut -d' ' -f1 /proc/loadavg)
	cmd="kg-train -q --no_checkpoint --force --num_thread $threads $* fb m"
	if [ "$env" = - ]; then
		/usr/bin/time -f "%e %U %S %M" -o time.txt nice -n 10 \
		    "$bin/kg-train" -q --no_checkpoint --force \
		    --num_thread "$threads" "$@" fb m
	else
		env "$env" /usr/bin/time -f "%e %U %S %M" -o time.txt \
		    nice -n 10 "$bin/kg-train" -q --no_checkpoint --force \
		    --num_thread "$threads" "$@" fb m
	fi
	read -r wall usr sys rss <time.txt
	jq -c --arg lab "$label" --arg env "$env" --arg cmd "$cmd" \
	    --argjson threads "$threads" --argjson flop "$flop" \
	    --argjson wall "$wall" --argjson cpu "$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')" \
	    --argjson rss "$rss" --argjson peak "$peak" --arg load "$load" \
	    '{"label": $lab, env: $env, command: $cmd, threads: $threads,
	      model: .config.model, dim: .config.dim,
	      batch_size: .config.batch_size,
	      neg_sample_size: .config.neg_sample_size,
	      neg_chunk_size: .config.neg_chunk_size, loss: .config.loss,
	      steps: .figures.steps,
	      triples: (.figures.triples_per_second * .figures.train_seconds | round),
	      train_seconds: .figures.train_seconds,
	      triples_per_second: .figures.triples_per_second,
	      triples_per_second_per_core: (.figures.triples_per_second / $threads),
	      process_wall_seconds: $wall, process_cpu_seconds: $cpu,
	      triples_per_cpu_second: ((.figures.triples_per_second * .figures.train_seconds) / $cpu),
	      flop_per_triple: $flop,
	      gflops: (.figures.triples_per_second * $flop / 1e9),
	      share_of_peak: (.figures.triples_per_second * $flop / 1e9 / ($peak * $threads)),
	      peak_rss_kib: $rss, load_average_before: ($load | tonumber)}' \
	    m/manifest.json >>"$runs"
	echo "bench/train_speed.sh: $label: $(jq -r .figures.triples_per_second m/manifest.json | cut -d. -f1) triples/s" >&2
}

dgl="--hidden_dim 400 --batch_size 1000 --neg_sample_size 200 --neg_chunk_size 200 -adv --gamma 12 --lr 0.1 --max_step $steps --epochs 1000"
dgl_flop=$((6 * 200 * 400))
for model in TransE_l2 ComplEx; do
	for t in 1 2; do
		measure "DGL-KE settings, $model, $t thread(s)" "$t" "$dgl_flop" - \
		    --model_name "$model" $dgl
	done
done
measure "baseline: ComplEx, DGL-KE settings, 1 thread, generic BLAS kernels" \
    1 "$dgl_flop" OPENBLAS_CORETYPE=Prescott --model_name ComplEx $dgl
pbg="--model_name ComplEx --hidden_dim 200 --loss softmax --batch_size 5000 --neg_chunk_size 1000 --neg_sample_size 1000 --neg_sampler uniform --lr 0.1 --max_step $(( (steps + 14) / 15 )) --epochs 1000"
pbg_flop=$((6 * 1000 * 200))
for t in 1 2; do
	measure "PBG settings, ComplEx d=200, $t thread(s)" "$t" "$pbg_flop" - $pbg
done

jq -s --arg nproc "$(nproc --all)" --arg cpu "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
    --arg mhz "$mhz" --argjson peak "$peak" --argjson fpc "$fpc" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    '{benchmark: "train_speed", date: $date,
      machine: {nproc: ($nproc | tonumber), cpu: $cpu, mhz: ($mhz | tonumber),
                flop_per_cycle_assumed: $fpc, peak_gflops_per_core: $peak},
      dataset: "fb15k-237 (272115 train triples)",
      targets: {dgl_ke_triples_per_second_per_core: 50000,
                pbg_reference_triples_per_second: "6400-8900 (quoted in the task, not measured here)",
                pbg_goal: "5x"},
      runs: .,
      ratios: {
        complex_1_thread_vs_generic_blas: ((.[] | select(.label == "DGL-KE settings, ComplEx, 1 thread(s)") | .triples_per_second) /
                                         (.[] | select(.label | startswith("baseline")) | .triples_per_second)),
        complex_2_vs_1_threads: ((.[] | select(.label == "DGL-KE settings, ComplEx, 2 thread(s)") | .triples_per_second) /
                                 (.[] | select(.label == "DGL-KE settings, ComplEx, 1 thread(s)") | .triples_per_second)),
        transe_2_vs_1_threads: ((.[] | select(.label == "DGL-KE settings, TransE_l2, 2 thread(s)") | .triples_per_second) /
                                (.[] | select(.label == "DGL-KE settings, TransE_l2, 1 thread(s)") | .triples_per_second)),
        pbg_1_thread_vs_pbg_low_end: ((.[] | select(.label == "PBG settings, ComplEx d=200, 1 thread(s)") | .triples_per_second) / 6400)}}' \
    "$runs" >"$out"
echo "bench/train_speed.sh: wrote $out" >&2
