#!/usr/bin/env bash
# Benchmark (not a test): kg-train's shallow training against this
# machine's fp32 peak (issue 30 item 3).  Writes bench/results/roofline.json:
#  - the peak measured two ways by build/bench/roofline (bench/roofline.c,
#    built by `make bench`): a loop of independent FMAs (AVX-512 and AVX2,
#    1 and 2 threads) and a square SGEMM through OpenBLAS (1 and 2 threads,
#    the OpenBLAS core kg-train itself ran with);
#  - kg-train's positives/s (one positive = one triple scored against its
#    chunk's candidates on one side, kg-train's own figure) at PBG's
#    FB15k-237 setting (examples/configs/pbg_fb15k237.json: ComplEx d=400,
#    chunks of 50 sharing 1000 uniform negatives plus in-batch ones,
#    row-wise Adagrad) and at DGL-KE's FB15k setting
#    (examples/configs/transe_l2_fb15k.json: TransE_l2 d=400, batch 1000,
#    200 negatives shared by chunks of 200, self-adversarial), a few hundred
#    steps each on 1 and 2 threads;
#  - the FLOPs one positive costs, counted from the shapes (the formula is
#    written into the JSON), hence GFLOP/s and the fraction of each peak;
#  - with perf (linux-perf) where it can sample here: the share of a
#    step's time in each phase (gather, negatives, scores, loss, backward,
#    scatter, optimiser, ...) and the part of it spent in OpenBLAS, from
#    DWARF call chains classified by bench/roofline_perf.py.
# The machine may be shared: the load average is recorded at start and
# end.  Run from the repository root after `make bench` (or make all
# build/bench/roofline); KG_SHARED_DATA overrides ../shared/data;
# KG_ROOFLINE_SCALE (default 1) scales the step counts.  About 3 minutes.
set -eu
top=$(pwd)
bin=$top/bin
rl=$top/build/bench/roofline
shared=${KG_SHARED_DATA:-$top/../shared/data}
work=$top/bench/work/roofline.$$
out=$top/bench/results/roofline.json
scale=${KG_ROOFLINE_SCALE:-1}
die() { echo "bench/roofline.sh: $*" >&2; exit 1; }
command -v jq >/dev/null || die "needs jq"
[ -x "$rl" ] || die "no $rl: run make bench (or make build/bench/roofline)"
[ -x "$bin/kg-train" ] || die "no $bin/kg-train: make all first"
for s in fb15k-237 fb15k; do
	[ -f "$shared/$s/train.txt.gz" ] || die "no $shared/$s"
done
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
start=$(date +%s)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
log() { echo "bench/roofline.sh: $*" >&2; }

for s in fb15k-237 fb15k; do
	"$bin/kg-ingest" -q -o "$s" --train "$shared/$s/train.txt.gz" \
	    --valid "$shared/$s/valid.txt.gz" --test "$shared/$s/test.txt.gz"
done

# kg-train at the two settings: train NAME DATASET CONFIG STEPS THREADS
# appends one JSON record to train.jsonl.
: >train.jsonl
train() {
	local name=$1 ds=$2 cfg=$3 steps=$4 t=$5 load
	load=$(cut -d' ' -f1 /proc/loadavg)
	"$bin/kg-train" -q --no_checkpoint --force --config "$top/$cfg" \
	    --num_thread "$t" --max_step "$steps" "$ds" "m_$name"
	jq -c --arg name "$name" --arg cfg "$cfg" --arg ds "$ds" \
	    --argjson t "$t" --arg load "$load" '{setting: $name,
	    config: $cfg, dataset: $ds, threads: $t,
	    steps: .figures.steps, train_seconds: .figures.train_seconds,
	    positives_per_second: .figures.triples_per_second,
	    backend: .figures.backend, load_before: ($load | tonumber),
	    model: .config.model, dim: .config.dim,
	    batch_size: .config.batch_size, chunk: .config.neg_chunk_size,
	    negatives: .config.neg_sample_size,
	    in_batch: .config.neg_in_batch, loss: .config.loss,
	    reg: .config.regularization_coef}' "m_$name/manifest.json" \
	    >>train.jsonl
	log "$name, $t thread(s): $(jq -r .figures.triples_per_second \
	    "m_$name/manifest.json" | cut -d. -f1) positives/s"
}
pbg_cfg=examples/configs/pbg_fb15k237.json
dgl_cfg=examples/configs/transe_l2_fb15k.json
for t in 2 1; do
	train pbg fb15k-237 $pbg_cfg $((150 * scale / t)) $t
	train dglke fb15k $dgl_cfg $((1500 * scale / t)) $t
done
core=$(jq -r .figures.backend m_pbg/manifest.json | sed 's/^cpu:openblas://')

# The peaks.
: >peaks.jsonl
for isa in avx512 avx2; do
	for t in 1 2; do
		"$rl" fma $isa $t 2 >>peaks.jsonl ||
		    echo "{\"kind\": \"fma\", \"isa\": \"$isa\", \"threads\": $t, \"gflops\": null, \"error\": \"this CPU lacks $isa\"}" >>peaks.jsonl
	done
done
for t in 1 2; do
	OPENBLAS_CORETYPE=$core "$rl" sgemm 4096 $t 3 >>peaks.jsonl
done

# Where the time goes: perf's DWARF call chains, 2 threads.
: >perf.jsonl
perf_note=null
profile() {
	local name=$1 ds=$2 cfg=$3 steps=$4
	perf record -q -o "perf_$name.data" -F 499 --call-graph dwarf,16384 \
	    -- "$bin/kg-train" -q --no_checkpoint --force --config "$top/$cfg" \
	    --num_thread 2 --max_step "$steps" "$ds" "p_$name" \
	    >/dev/null 2>"perf_$name.err" || return 1
	perf script -i "perf_$name.data" -F tid,ip,sym,dso 2>/dev/null |
	    python3 "$top/bench/roofline_perf.py" |
	    jq -c --arg n "$name" --argjson s "$steps" \
	    '{setting: $n, steps: $s, threads: 2} + .' >>perf.jsonl
}
if ! command -v perf >/dev/null; then
	perf_note='"perf is not installed (apt-get install linux-perf)"'
elif ! profile pbg fb15k-237 $pbg_cfg $((80 * scale)) ||
    ! profile dglke fb15k $dgl_cfg $((600 * scale)); then
	perf_note=$(tail -3 perf_*.err | jq -Rs '"perf could not sample here: " + .')
	: >perf.jsonl
fi

load1=$(cut -d' ' -f1-3 /proc/loadavg)
jq -n --slurpfile tr train.jsonl --slurpfile pk peaks.jsonl \
    --slurpfile pf perf.jsonl --argjson perf_note "$perf_note" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --arg commit "$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --arg dirty "$(git -C "$top" status --porcelain -uno 2>/dev/null | head -1)" \
    --arg cpu "$(lscpu | sed -n 's/^Model name: *//p' | head -1)" \
    --arg flags "$(grep -m1 -o 'avx512f\|avx512_bf16\|avx512_vnni\|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')" \
    --arg nproc "$(nproc --all)" --arg load0 "$load0" --arg load1 "$load1" \
    --argjson secs "$(( $(date +%s) - start ))" '
  def peak(k; isa; t): [$pk[] | select(.kind == k and (isa == null or .isa == isa) and .threads == t) | .gflops][0];
  # FLOPs of one positive, from the shapes of its chunk (d floats a row,
  # nc candidates, chunks of ch positives, neg uniform negatives).
  def flop:
    .dim as $d | .chunk as $ch |
    ((.negatives) + (if .in_batch then .chunk else 0 end)) as $nc |
    (if .reg > 0 then 15 * $d else 0 end) as $reg |
    if .model == "ComplEx" then {
      formula: "ComplEx, softmax, row-wise Adagrad; d floats a row (d/2 complex), nc = negatives (+ chunk when in-batch) candidates: forward 2 d nc (scores GEMM) + 2 d (positive score) + 3 d (query h o r); loss 5 (nc + 1) (softmax); backward 4 d nc (dQ = G C, dC = G^T Q) + 4 d (positive) + 6 d (query); optimiser (2 + negatives / chunk) 5 d (scatter add and row Adagrad of the fixed, positive and the chunk share of the negative rows) + 5 d (relation row, element-wise Adagrad); regulariser 15 d when its coefficient > 0",
      gemm: (6 * $d * $nc),
      forward: (2 * $d * $nc + 5 * $d), loss: (5 * ($nc + 1)),
      backward: (4 * $d * $nc + 10 * $d),
      optimiser: ((2 + .negatives / $ch) * 5 * $d + 5 * $d),
      regulariser: $reg}
    else {
      formula: "TransE_l2, self-adversarial logistic, row-wise Adagrad; d floats a row, nc candidates shared by chunks of ch: forward d (query h + r) + 2 d nc (q.c GEMM) + 2 d (|q|^2) + 2 d nc / ch (|c|^2, shared) + 4 nc (combine, clamp, sqrt, gamma) + 3 d (positive distance); loss 8 nc (adversarial weights, log-sigmoid); backward 4 d nc (W C and W^T Q) + 2 d nc / ch + 2 d + 2 nc (W = G / dist) + 6 d (positive and query); optimiser (2 + nc / ch) 5 d + 5 d; regulariser 15 d when its coefficient > 0",
      gemm: (6 * $d * $nc),
      forward: (2 * $d * $nc + 6 * $d + 2 * $d * $nc / $ch + 4 * $nc),
      loss: (8 * $nc),
      backward: (4 * $d * $nc + 2 * $d * $nc / $ch + 8 * $d + 2 * $nc),
      optimiser: ((2 + $nc / $ch) * 5 * $d + 5 * $d),
      regulariser: $reg}
    end | .candidates = $nc
    | .total = (.forward + .loss + .backward + .optimiser + .regulariser);
  {benchmark: "roofline", date: $date, commit: $commit,
   worktree_dirty: ($dirty != ""), seconds: $secs,
   machine: {cpu: $cpu, nproc: ($nproc | tonumber), flags: $flags,
             load_average_start: $load0, load_average_end: $load1},
   peak_gflops: {
     fma_avx512: {"1": peak("fma"; "avx512"; 1), "2": peak("fma"; "avx512"; 2)},
     fma_avx2: {"1": peak("fma"; "avx2"; 1), "2": peak("fma"; "avx2"; 2)},
     sgemm_4096: {"1": peak("sgemm"; null; 1), "2": peak("sgemm"; null; 2)},
     note: "fma: 16 (AVX-512) or 12 (AVX2) independent FMA chains a thread, 2 FLOP a lane; sgemm: the best of 3 calls of a 4096 x 4096 x 4096 cblas_sgemm (2 n^3 FLOP) on OpenBLAS threads, with the OpenBLAS core kg-train ran with",
     runs: $pk},
   settings: [$tr[] | (flop) as $f | . + {flop_per_positive: $f,
     gflops: (.positives_per_second * $f.total / 1e9),
     fraction_of_fma_avx512_peak: (if peak("fma"; "avx512"; .threads) then .positives_per_second * $f.total / 1e9 / peak("fma"; "avx512"; .threads) else null end),
     fraction_of_fma_avx2_peak: (.positives_per_second * $f.total / 1e9 / peak("fma"; "avx2"; .threads)),
     fraction_of_sgemm_peak: (.positives_per_second * $f.total / 1e9 / peak("sgemm"; null; .threads))}],
   perf_breakdown: (if ($pf | length) > 0 then {
     method: "perf record -F 499 --call-graph dwarf on kg-train, 2 threads; each sample classed by the function kg_train_chunk called on the way to it (bench/roofline_perf.py); share = of the samples in training (setup and writing the model left out); share_in_openblas = the part of the same samples whose leaf is in OpenBLAS",
     runs: $pf} else null end),
   perf_note: $perf_note}' >"$out"
log "wrote $out ($(( $(date +%s) - start )) s)"
