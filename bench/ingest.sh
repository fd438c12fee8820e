#!/usr/bin/env bash
# Benchmark of kg-ingest (not a test).  Inputs: FB15k-237's published
# splits (gzip, from $KG_SHARED_DATA, skipped when absent) and files from
# build/aux/gen_triples: 20 million triples over 2 million entities and
# 1,000 relations with skewed degrees (the dictionary far larger than the
# caches), and 20 million triples over 15,000 entities (a dictionary that
# fits them).  For each: lines per second (wall and per CPU second, from
# the manifest) and peak RSS (/usr/bin/time), best of BENCH_INGEST_REPS
# runs, next to two baselines run in the same invocation: "wc -l" (the
# cost of reading the bytes) and an awk script that does the same
# numbering (the classic shell way).  Run from the repository root with
# bin/ and build/aux built (bench/run.sh does both); writes
# bench/results/ingest.json.  Generated files go to bench/work/ and are
# deleted at the end.  BENCH_INGEST_TRIPLES (default 20000000) and
# BENCH_INGEST_ENTITIES (default 2000000) set the large case.
set -eu
top=$(pwd)
bin=$top/bin
gen=$top/build/aux/gen_triples
ntrip=${BENCH_INGEST_TRIPLES:-20000000}
nent=${BENCH_INGEST_ENTITIES:-2000000}
reps=${BENCH_INGEST_REPS:-3}
work=$top/bench/work/ingest.$$
out=$top/bench/results/ingest.json
[ -x /usr/bin/time ] || { echo "bench/ingest.sh: needs /usr/bin/time" >&2; exit 1; }
[ -x "$gen" ] || make -s build/aux/gen_triples
[ -x "$bin/kg-ingest" ] || make -s bin/kg-ingest
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
N="nice -n 10"
awk=$(command -v mawk || command -v awk)

# record LABEL CASE LINES CMD...: run CMD under /usr/bin/time, append a
# JSON line with the command, wall and CPU seconds, peak RSS, and the
# kg-ingest manifest figures when the command wrote ./out.
record() {
	local label=$1 case=$2 lines=$3; shift 3
	rm -rf out
	/usr/bin/time -f "%e %U %S %M" -o time.txt "$@" >/dev/null 2>err.txt || {
		cat err.txt >&2; return 1; }
	python3 - "$label" "$case" "$lines" "$*" >>"$runs" <<'PY'
import json, os, sys
label, case, lines, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
wall, user, sys_, rss = open("time.txt").read().split()[-4:]
r = {"label": label, "case": case, "command": cmd, "lines": lines,
     "wall_seconds": float(wall), "cpu_seconds": float(user) + float(sys_),
     "peak_rss_kib": int(rss)}
r["lines_per_second"] = lines / r["wall_seconds"] if r["wall_seconds"] else None
r["lines_per_cpu_second"] = lines / r["cpu_seconds"] if r["cpu_seconds"] else None
if os.path.exists("out/manifest.json"):
    f = json.load(open("out/manifest.json"))["figures"]
    r["manifest"] = {k: f[k] for k in ("entities", "relations", "triples",
        "seconds", "read_seconds", "write_seconds", "lines_per_second",
        "read_lines_per_second", "cpu_seconds", "read_cpu_seconds",
        "peak_rss_kib", "duplicates", "dropped")}
    r["read_lines_per_cpu_second"] = f["lines"] / f["read_cpu_seconds"] \
        if f["read_cpu_seconds"] else None
print(json.dumps(r))
PY
	tail -1 "$runs" | python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print("bench/ingest.sh: %-26s %-10s %7.2f s wall %7.2f s cpu %10.0f lines/s %10.0f lines/cpu-s %8d KiB" % (
    r["label"], r["case"], r["wall_seconds"], r["cpu_seconds"],
    r["lines_per_second"] or 0, r["lines_per_cpu_second"] or 0, r["peak_rss_kib"]))' >&2
}

# The awk baseline: the same dense numbering in first-seen order, IDs
# printed as text.
cat >number.awk <<'EOF'
BEGIN { FS = "\t" }
{
	if (!($1 in e)) e[$1] = ne++
	if (!($2 in r)) r[$2] = nr++
	if (!($3 in e)) e[$3] = ne++
	print e[$1], r[$2], e[$3]
}
EOF

bench_case() {
	local case=$1 lines=$2; shift 2
	local i
	for i in $(seq "$reps"); do
		record "kg-ingest" "$case" "$lines" $N "$bin/kg-ingest" -q -o out "$@"
	done
}

# FB15k-237: gzip input, split files.
fb=${KG_SHARED_DATA:-$top/../shared/data}/fb15k-237
if [ -f "$fb/train.txt.gz" ]; then
	lines=$(gzip -dc "$fb/train.txt.gz" "$fb/valid.txt.gz" "$fb/test.txt.gz" | wc -l)
	record "baseline: gzip -dc | wc -l" fb15k-237 "$lines" $N sh -c \
	    "gzip -dc '$fb/train.txt.gz' '$fb/valid.txt.gz' '$fb/test.txt.gz' | wc -l"
	record "baseline: awk numbering" fb15k-237 "$lines" $N sh -c \
	    "gzip -dc '$fb/train.txt.gz' '$fb/valid.txt.gz' '$fb/test.txt.gz' | $awk -f number.awk"
	bench_case fb15k-237 "$lines" --train "$fb/train.txt.gz" \
	    --valid "$fb/valid.txt.gz" --test "$fb/test.txt.gz"
else
	echo "bench/ingest.sh: no FB15k-237 under KG_SHARED_DATA; skipped" >&2
fi

# Generated TSV: a large dictionary, then a small one.
$N "$gen" -n "$ntrip" -e "$nent" -r 1000 -s 1 big.tsv
$N "$gen" -n "$ntrip" -e 15000 -r 237 -s 2 small.tsv
for case in big small; do
	record "baseline: wc -l" "$case" "$ntrip" $N wc -l $case.tsv
	record "baseline: awk numbering" "$case" "$ntrip" $N $awk -f number.awk $case.tsv
	bench_case "$case" "$ntrip" $case.tsv
done
record "kg-ingest --split --dedup" big "$ntrip" $N "$bin/kg-ingest" -q -o out \
    --split 0.8,0.1,0.1 --seed 1 --dedup big.tsv
rm -f big.tsv small.tsv

python3 - "$runs" "$out" "$ntrip" "$nent" "$reps" "$awk" <<'PY'
import json, os, platform, subprocess, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
best = {}
for r in runs:
    if r["label"] != "kg-ingest":
        continue
    b = best.get(r["case"])
    if b is None or r["wall_seconds"] < b["wall_seconds"]:
        best[r["case"]] = r
summary = {}
for case, b in best.items():
    base = {r["label"]: r for r in runs if r["case"] == case and r["label"].startswith("baseline")}
    awk_run = base.get("baseline: awk numbering")
    summary[case] = {
        "lines": b["lines"],
        "entities": b["manifest"]["entities"],
        "relations": b["manifest"]["relations"],
        "best_wall_seconds": b["wall_seconds"],
        "lines_per_second": b["lines_per_second"],
        "read_lines_per_second": b["manifest"]["read_lines_per_second"],
        "lines_per_cpu_second": b["lines_per_cpu_second"],
        "read_lines_per_cpu_second": b["read_lines_per_cpu_second"],
        "peak_rss_kib": b["peak_rss_kib"],
        "speedup_vs_awk_wall": awk_run["wall_seconds"] / b["wall_seconds"]
            if awk_run and b["wall_seconds"] else None,
        "speedup_vs_awk_cpu": awk_run["cpu_seconds"] / b["cpu_seconds"]
            if awk_run and b["cpu_seconds"] else None,
    }
load = os.getloadavg()
doc = {
    "benchmark": "kg-ingest",
    "machine": {"nproc": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
                "loadavg_at_end": load,
                "model": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                               if l.startswith("model name")), None)},
    "generated": {"triples": int(sys.argv[3]), "entities": int(sys.argv[4]),
                  "command": "build/aux/gen_triples -n N -e E -r R -s S"},
    "repetitions": int(sys.argv[5]),
    "awk": sys.argv[6],
    "notes": "Wall rates suffer when other jobs share the machine; lines per CPU "
             "second is the per-core rate.  read_* figures leave out writing the "
             "output (arrays, dictionaries, fsync).",
    "summary": summary,
    "runs": runs,
}
json.dump(doc, open(sys.argv[2], "w"), indent=2)
print(json.dumps(summary, indent=2))
PY
