#!/usr/bin/env bash
# The text encoder at the Ray paper's scale (not a test; issue 37,
# "Scale"): the generated enterprise graph at KG_BENCH_NODES nodes
# (default 2,800,000) with every text attribute of the generator's schema
# (person.bio, product.description, document.body) switched to
# {"encoder": "transformer", "model": MODEL} (KG_TEXT_MODEL, default
# models/all-MiniLM-L6-v2), kg-encode-attrs fit, then the sharded
# transform (transform --shard i/N, N = KG_BENCH_SHARDS, default 64).
#
# KG_BENCH_RUN_SHARDS (default: all N) shards are run, spread over the
# entity range (shard floor(j N / k) for j < k: the entities are in
# type order, so the first shards alone would see one type), in each mode
# of KG_BENCH_MODES (default "2x1 1x2"): 2x1 runs them as 2 processes of
# 1 thread each (-j 1), 1x2 as 1 process of 2 threads (-j 2) after
# another; both modes run the same shards, whose outputs must be the same
# bytes.  When every shard ran, the last mode's shards are merged.
#
# Per shard: texts (values of the text attributes), distinct texts and
# tokens (the transform's own figures, checked against build/aux/
# text_tokens), encode seconds, GFLOP (bert.h's count) and GFLOP/s, the
# transform's wall seconds and peak RSS.  For the whole workload,
# build/aux/text_tokens tokenizes every distinct text without encoding:
# distinct texts, tokens and FLOPs once over all entities, and the tokens
# the N shards encode (each shard encodes its own distinct texts).
#
# The machine, in the same invocation: cblas_sgemm GFLOP/s at the
# encoder's shapes (M x 384 -> 1152, 384, 1536 and M x 1536 -> 384, with
# M the tokens of a batch of 32 mean texts and M = 4096; 1 thread, 2
# threads each running its own GEMM as the encoder's threads do, and one
# GEMM on 2 OpenBLAS threads; the best of 3 windows), and the peak rates
# of independent chains of AVX-512 fp32 FMA, bf16 dot products
# (_mm512_dpbf16_ps) and int8 dot products (_mm512_dpbusd_epi32, VNNI) on
# 1 and 2 threads.  "floor": the whole workload's FLOPs at those GEMM
# rates (and at the fp32 FMA peak) against the 2,500 s target;
# "projection": each mode's measured seconds per token times the tokens
# of all N shards, with the measured shards' share of those tokens.
#
# The machine is shared: uptime and the load average are recorded before
# and after each mode.  Work files go to KG_BENCH_WORK (default
# /work/tmp/text_scale.PID; about 0.6 KB a node, plus 9.6 KB an entity
# when every shard runs, for the shards and the merged features), removed
# at the end.  Writes KG_BENCH_OUT (default bench/results/text_scale.json).
# Run from the repository root with bin/ and build/aux/ built, niced:
#   KG_BENCH_RUN_SHARDS=2 nice bench/text_scale.sh
set -eu
top=$(pwd)
bin=$top/bin
gen=$top/build/aux/kg_gen_enterprise
counter=$top/build/aux/text_tokens
nodes=${KG_BENCH_NODES:-2800000}
nshards=${KG_BENCH_SHARDS:-64}
nrun=${KG_BENCH_RUN_SHARDS:-$nshards}
modes=${KG_BENCH_MODES:-2x1 1x2}
model=${KG_TEXT_MODEL:-models/all-MiniLM-L6-v2}
work=${KG_BENCH_WORK:-/work/tmp/text_scale.$$}
out=${KG_BENCH_OUT:-$top/bench/results/text_scale.json}
me=bench/text_scale.sh
case $model in /*) ;; *) model=$top/$model ;; esac
for c in jq python3 cc; do
	command -v $c >/dev/null || { echo "$me: needs $c" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "$me: needs /usr/bin/time" >&2; exit 1; }
for p in "$gen" "$counter" "$bin/kg-encode-attrs" "$bin/kg-ingest"; do
	[ -x "$p" ] || { echo "$me: build $p first (make)" >&2; exit 1; }
done
[ -f "$model/model.safetensors" ] ||
    { echo "$me: no model in $model (make text-model)" >&2; exit 1; }
if [ "$nrun" -lt 1 ] || [ "$nrun" -gt "$nshards" ]; then
	echo "$me: KG_BENCH_RUN_SHARDS must be 1 to $nshards" >&2
	exit 2
fi
for m in $modes; do
	case $m in 2x1|1x2) ;; *) echo "$me: unknown mode '$m'" >&2; exit 2 ;; esac
done
unset OMP_NUM_THREADS
mkdir -p "$work" "$(dirname "$out")"
df -h "$work" >&2
avail=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
need=$((nodes * 6 / 10))
[ "$nrun" -eq "$nshards" ] && need=$((need + nodes * 96 / 10))
need=$((need + nodes / nshards * nrun * 96 / 10))
if [ "$avail" -lt "$need" ]; then
	echo "$me: $work has $((avail / 1024)) MB free, needs about $((need / 1024)) MB" >&2
	exit 1
fi
trap 'rm -rf "$work"' EXIT
cd "$work"
stages=$work/stages.jsonl shards=$work/shards.jsonl modes_f=$work/modes.jsonl
: >"$stages"
: >"$shards"
: >"$modes_f"
load() { cut -d' ' -f1 /proc/loadavg; }

# stage NAME COMMAND...: run it, record its wall time and peak RSS.
stage() {
	local name=$1 l0
	shift
	l0=$(load)
	echo "text_scale: $name" >&2
	/usr/bin/time -f '%e %M' -o stage.txt "$@"
	read -r wall rss <stage.txt
	jq -c -n --arg s "$name" --argjson w "$wall" --argjson r "$rss" \
	    --argjson l0 "$l0" --argjson l1 "$(load)" \
	    '{stage: $s, wall_seconds: $w, peak_rss_kib: $r, load_before: $l0,
	      load_after: $l1}' >>"$stages"
}

# The GEMM rates at the encoder's shapes: gemm_probe M prints one JSON
# line per shape and way of threading.
cat >gemm_probe.c <<'EOF'
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
/* GFLOP/s of C[m, n] = A[m, k] W[n, k]' (the encoder's layout), best of
 * 3 windows of at least 0.25 s; each of nt threads runs its own GEMM on
 * 1 OpenBLAS thread, or (nt == 0) one GEMM runs on 2 OpenBLAS threads. */
static double rate(int m, int k, int n, int nt) {
	double best = 0;
	openblas_set_num_threads(nt == 0 ? 2 : 1);
	for (int w = 0; w < 3; w++) {
		long calls = 0;
		double t0 = now(), t;
#pragma omp parallel num_threads(nt == 0 ? 1 : nt) reduction(+:calls)
		{
			float *a = malloc(sizeof(float) * m * k), *b = malloc(sizeof(float) * n * k), *c = malloc(sizeof(float) * m * n);
			for (long i = 0; i < (long)m * k; i++) a[i] = (float)(i % 7) * 0.01f;
			for (long i = 0; i < (long)n * k; i++) b[i] = (float)(i % 5) * 0.01f;
#pragma omp barrier
			double s = now();
			do { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a, k, b, k, 0, c, n); calls++; } while (now() - s < 0.25);
			if (c[1] < 0) calls = 0;
			free(a); free(b); free(c);
		}
		t = now() - t0;
		if (2.0 * m * n * k * calls / t / 1e9 > best) best = 2.0 * m * n * k * calls / t / 1e9;
	}
	return best;
}
int main(int argc, char **argv) {
	int m = atoi(argv[1]), shapes[4][2] = { { 384, 1152 }, { 384, 384 }, { 384, 1536 }, { 1536, 384 } };
	const char *way[3] = { "1_thread", "2_threads_own_gemm", "2_openblas_threads" };
	int nts[3] = { 1, 2, 0 };
	for (int s = 0; s < 4; s++)
		for (int w = 0; w < 3; w++)
			printf("{\"m\": %d, \"k\": %d, \"n\": %d, \"threads\": \"%s\", \"gflops\": %.1f}\n", m, shapes[s][0], shapes[s][1], way[w], rate(m, shapes[s][0], shapes[s][1], nts[w]));
	return 0;
}
EOF
# Peak rates of independent chains: fp32 FMA (32 FLOP an instruction),
# bf16 pairs (64 FLOP), u8 x s8 quadruples (128 operations; each chain's
# accumulator is also its u8 operand).  The operands are read from
# volatile variables, so the compiler cannot fold a chain at build time,
# and each chain's first lane reaches the sink through memcpy, not a cast
# that strict aliasing would let the compiler drop with the chain.
cat >peaks.c <<'EOF'
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
#define CH 16
#define LOOP(T, INIT, OP) { T acc[CH]; for (int c = 0; c < CH; c++) acc[c] = INIT; \
	for (long i = 0; i < it; i++) for (int c = 0; c < CH; c++) acc[c] = OP; \
	for (int c = 0; c < CH; c++) { float f; memcpy(&f, &acc[c], sizeof(f)); sink[omp_get_thread_num()] += f; } }
volatile float sink[64];
int main(void) {
	const char *name[3] = { "fp32_fma", "bf16_dpbf16_ps", "int8_dpbusd" };
	double per[3] = { 32, 64, 128 };
	long it = 100000000;
	volatile float xv = 1e-7f; volatile short yv = 0x3f80; volatile char zv = 1;
	__m512 x = _mm512_set1_ps(xv); __m512bh y = (__m512bh)_mm512_set1_epi16(yv); __m512i z = _mm512_set1_epi8(zv);
	for (int k = 0; k < 3; k++) for (int nt = 1; nt <= 2; nt++) {
		double t = now();
#pragma omp parallel num_threads(nt)
		{ if (k == 0) LOOP(__m512, x, _mm512_fmadd_ps(x, x, acc[c])) else if (k == 1) LOOP(__m512, x, _mm512_dpbf16_ps(acc[c], y, y)) else LOOP(__m512i, z, _mm512_dpbusd_epi32(acc[c], acc[c], z)) }
		t = now() - t;
		printf("{\"kind\": \"%s\", \"threads\": %d, \"chains\": %d, \"seconds\": %.3f, \"g_per_s\": %.1f}\n", name[k], nt, CH, t, per[k] * CH * it * nt / t / 1e9);
	}
	return 0;
}
EOF
cc -O2 -fopenmp -o gemm_probe gemm_probe.c -lopenblas
cc -O3 -funroll-loops -fopenmp -mavx512f -mavx512bf16 -mavx512vnni -mavx512bw -o peaks peaks.c

uptime_start=$(uptime)
stage generate "$gen" -o data -n "$nodes" -s 1 2>gen.txt
d=data
stage ingest "$bin/kg-ingest" -q -o ds --types $d/types.tsv \
    --train $d/train.tsv --valid $d/valid.tsv --test $d/test.tsv
jq --arg m "$model" '.attributes |= with_entries(if .value.kind == "text"
    then .value = {kind: "text", encoder: "transformer", model: $m}
    else . end)' $d/schema.json >$d/schema_transformer.json
stage encode_fit "$bin/kg-encode-attrs" fit -q -d ds \
    -s $d/schema_transformer.json -o am
stage count_tokens sh -c "'$counter' ds $d/schema_transformer.json $nshards >counts.json"
mean_tok=$(jq '.total.tokens / .total.distinct_texts' counts.json)
batch_m=$(python3 -c "print(round(32 * $mean_tok))")
echo "text_scale: the machine's rates" >&2
{ ./gemm_probe "$batch_m"; ./gemm_probe 4096; } >gemm.jsonl
./peaks >peaks.jsonl

list=$(python3 -c "print(' '.join(str(j * $nshards // $nrun) for j in range($nrun)))")
# one_shard I THREADS DIR: transform shard I/N into DIR, record it.
one_shard() {
	local i=$1 j=$2 dir=$3 mode=$4
	/usr/bin/time -f '%e %M' -o "$dir.time" "$bin/kg-encode-attrs" \
	    transform -q -j "$j" -d ds -m am -o "$dir" --shard "$i/$nshards"
	read -r wall rss <"$dir.time"
	jq -c --arg mode "$mode" --argjson i "$i" --argjson w "$wall" \
	    --argjson r "$rss" --slurpfile c counts.json '
	    [.figures.attributes | to_entries[] | select(.value.tokens != null)
	     | .value] as $t | ($c[0].shards[$i]) as $k |
	    {mode: $mode, shard: $i, range: .config.range,
	     texts: $k.texts,
	     distinct_texts: ([$t[].distinct_texts] | add),
	     tokens: ([$t[].tokens] | add),
	     encode_seconds: ([$t[].encode_seconds] | add),
	     gflop: ([$t[].gflops] | add),
	     gflop_per_s: (([$t[].gflops] | add) /
	         ([$t[].encode_seconds] | add)),
	     thread_seconds: {gemm: ([$t[].thread_seconds.gemm] | add),
	         attention: ([$t[].thread_seconds.attention] | add),
	         other: ([$t[].thread_seconds.other] | add)},
	     transform_seconds: .figures.seconds, wall_seconds: $w,
	     peak_rss_kib: $r,
	     counts_match_text_tokens: (([$t[].distinct_texts] | add) ==
	         $k.distinct_texts and ([$t[].tokens] | add) == $k.tokens)}' \
	    "$dir/manifest.json" >>"$shards"
}

last=
for mode in $modes; do
	l0=$(load)
	up0=$(uptime)
	t0=$(date +%s.%N)
	echo "text_scale: shards $list of $nshards, mode $mode" >&2
	if [ "$mode" = 2x1 ]; then
		set -- $list
		while [ $# -gt 0 ]; do
			one_shard "$1" 1 "s$mode.$1" $mode &
			a=$!
			b=
			if [ $# -gt 1 ]; then
				one_shard "$2" 1 "s$mode.$2" $mode &
				b=$!
				shift
			fi
			shift
			wait $a
			[ -z "$b" ] || wait $b
		done
	else
		for i in $list; do
			one_shard "$i" 2 "s$mode.$i" $mode
		done
	fi
	t1=$(date +%s.%N)
	jq -c -n --arg mode "$mode" --argjson l0 "$l0" --argjson l1 "$(load)" \
	    --arg up0 "$up0" --arg up1 "$(uptime)" \
	    --argjson w "$(python3 -c "print(round($t1 - $t0, 2))")" \
	    '{mode: $mode, processes: ($mode[0:1] | tonumber),
	      threads_per_process: ($mode[2:3] | tonumber), wall_seconds: $w,
	      load_before: $l0, load_after: $l1, uptime_before: $up0,
	      uptime_after: $up1}' >>"$modes_f"
	# The same shards in another mode give the same bytes.
	if [ -n "$last" ]; then
		same=true
		for i in $list; do
			for f in "s$last.$i"/*.npy; do
				cmp -s "$f" "s$mode.$i/${f##*/}" || same=false
			done
		done
		echo "{\"modes\": [\"$last\", \"$mode\"], \"same_bytes\": $same}" >same.json
		[ "$nrun" -eq "$nshards" ] && rm -rf s"$last".*
	fi
	last=$mode
done
merge=null
if [ "$nrun" -eq "$nshards" ]; then
	stage encode_merge "$bin/kg-encode-attrs" merge -q -m am -o feat \
	    $(for i in $list; do echo "s$last.$i"; done)
	merge=$(jq -c '{entities: .figures.entities, files: (.files | length)}' \
	    feat/manifest.json 2>/dev/null || echo '{}')
fi
[ -f same.json ] || echo null >same.json

# The command as it ran: the settings given, and nice when niced.
cmdline=
for v in KG_BENCH_NODES KG_BENCH_SHARDS KG_BENCH_RUN_SHARDS KG_BENCH_MODES \
    KG_TEXT_MODEL KG_BENCH_WORK KG_BENCH_OUT; do
	eval "x=\${$v-}"
	[ -n "$x" ] && cmdline="$cmdline$v=$x "
done
[ "$(nice)" -gt 0 ] && cmdline="${cmdline}nice -n $(nice) "
cmdline="${cmdline}bench/text_scale.sh"
python3 - "$out" counts.json gemm.jsonl peaks.jsonl "$stages" "$shards" \
    "$modes_f" same.json "$nodes" "$nshards" "$nrun" "$batch_m" \
    "$uptime_start" "$(uptime)" "$(tail -1 gen.txt)" "$merge" \
    "$(git -C "$top" rev-parse --short HEAD)" "$model" "$cmdline" <<'PY'
import json, sys, time
(out, counts, gemm, peaks, stages, shards, modes, same, nodes, nshards,
 nrun, batch_m, up0, up1, graph, merge, commit, model,
 cmdline) = sys.argv[1:20]
rd = lambda p: [json.loads(l) for l in open(p) if l.strip()]
c = json.load(open(counts))
gemm, peaks, stages, shards, modes = (rd(gemm), rd(peaks), rd(stages),
                                      rd(shards), rd(modes))
nshards, nrun, batch_m = int(nshards), int(nrun), int(batch_m)
a0 = c["attributes"][0]
h, inter, layers = a0["hidden"], a0["inter"], a0["n_layers"]
# GEMM FLOPs a token per shape (k, n): QKV, output, FFN in, FFN out.
per_tok = {(h, 3 * h): 2 * h * 3 * h, (h, h): 2 * h * h,
           (h, inter): 2 * h * inter, (inter, h): 2 * inter * h}
tot = c["total"]
target = 2500.0
sharded_tokens = sum(s["tokens"] for s in c["shards"])
sharded_flops = sum(s["flops"] for s in c["shards"])

def floor(m, threads):
    """Seconds for the whole workload's FLOPs at the GEMM rates of m rows
    (attention's FLOPs at the best of those rates)."""
    r = {(g["k"], g["n"]): g["gflops"] * 1e9 for g in gemm
         if g["m"] == m and g["threads"] == threads}
    t = sum(layers * tot["tokens"] * f / r[s] for s, f in per_tok.items())
    t += (tot["flops"] - tot["gemm_flops"]) / max(r.values())
    return {"m": m, "threads": threads, "seconds": round(t, 1),
            "mix_gflops": round(tot["flops"] / t / 1e9, 1),
            "over_target": round(t / target, 3)}

floors = [floor(m, th) for m in (batch_m, 4096)
          for th in ("1_thread", "2_threads_own_gemm", "2_openblas_threads")]
pk = {(p["kind"], p["threads"]): p["g_per_s"] for p in peaks}
fma2 = pk[("fp32_fma", 2)]
floor_fma = tot["flops"] / (fma2 * 1e9)
proj = []
for m in modes:
    ms = [s for s in shards if s["mode"] == m["mode"]]
    tk = sum(s["tokens"] for s in ms)
    spt = m["wall_seconds"] / tk
    proj.append({"mode": m["mode"], "measured_shards": [s["shard"] for s in ms],
                 "measured_tokens": tk,
                 "share_of_sharded_tokens": round(tk / sharded_tokens, 4),
                 "seconds_per_million_tokens": round(spt * 1e6, 2),
                 "gflop_per_s": round(sum(s["gflop"] for s in ms) /
                                      m["wall_seconds"], 1),
                 "projected_seconds_all_shards": round(spt * sharded_tokens),
                 "projected_seconds_distinct_once": round(spt * tot["tokens"]),
                 "projected_over_target": round(spt * sharded_tokens / target, 2)})
best = min(proj, key=lambda p: p["seconds_per_million_tokens"]) if proj else None
res = {
    "benchmark": "text_scale",
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "commit": commit,
    "command": cmdline,
    "model": model, "graph": graph, "nodes": int(nodes),
    "target_seconds": target,
    "machine": {"nproc": 2,
                "cpu": open("/proc/cpuinfo").read().split("model name")[1]
                .split(":")[1].split("\n")[0].strip(),
                "uptime_start": up0, "uptime_end": up1,
                "note": "shared with other sessions' jobs while it ran"},
    "workload": {"text_attributes": [{k: a[k] for k in ("name", "texts",
                  "distinct_texts", "tokens", "flops")} for a in c["attributes"]],
                 "texts": tot["texts"], "distinct_texts": tot["distinct_texts"],
                 "tokens": tot["tokens"], "flops": tot["flops"],
                 "gemm_flops": tot["gemm_flops"],
                 "mean_tokens_per_text": round(tot["tokens"] / tot["distinct_texts"], 2),
                 "shards": nshards,
                 "sharded_distinct_texts": sum(s["distinct_texts"] for s in c["shards"]),
                 "sharded_tokens": sharded_tokens, "sharded_flops": sharded_flops,
                 "counted_by": "build/aux/text_tokens (tokenize only)"},
    "stages": stages, "modes": modes, "shards": shards,
    "modes_same_bytes": json.load(open(same)),
    "faster_mode": best["mode"] if best else None,
    "merge": json.loads(merge),
    "gemm_rates": gemm, "batch_rows": batch_m,
    "peaks": peaks,
    "peak_ratios_2_threads": {
        "bf16_over_fp32": round(pk[("bf16_dpbf16_ps", 2)] / fma2, 2),
        "int8_over_fp32": round(pk[("int8_dpbusd", 2)] / fma2, 2)},
    "floor": {"what": "the whole workload's FLOPs (every distinct text once, bert.h's count: 2 x GEMM parameters x tokens plus attention) at the measured cblas_sgemm rates of each shape",
              "flops": tot["flops"], "at_gemm_rates": floors,
              "at_fp32_fma_peak_2_threads_seconds": round(floor_fma, 1),
              "at_bf16_peak_2_threads_seconds": round(tot["flops"] / (pk[("bf16_dpbf16_ps", 2)] * 1e9), 1),
              "at_int8_peak_2_threads_seconds": round(tot["flops"] / (pk[("int8_dpbusd", 2)] * 1e9), 1)},
    "projection": {"what": "a projection, not a measurement: each mode's wall seconds per token on the measured shards times the tokens of all the shards (and of every distinct text once)",
                   "modes": proj},
}
json.dump(res, open(out, "w"), indent=1)
open(out, "a").write("\n")
PY
echo "text_scale: wrote $out" >&2
