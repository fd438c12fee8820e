#!/usr/bin/env bash
# Benchmark of kg-ingest's RDF input (not a test).  One generated graph
# (build/aux/gen_triples, as bench/ingest.sh: BENCH_RDF_TRIPLES triples,
# default 5,000,000, over BENCH_RDF_ENTITIES entities, default 500,000,
# and 1,000 relations, skewed degrees) written four ways:
#   tsv      the generator's TSV (names like /m/0e220a8397b1dcdaf)
#   tsv-iri  TSV of the IRIs the N-Triples file holds
#   nt       N-Triples with IRIs of Wikidata's length or a little more:
#            <http://www.wikidata.org/entity/Q0e220a8397b1dcdaf> (49
#            bytes; Wikidata's items run to 41) and
#            <http://www.wikidata.org/prop/direct/P329>
#   ttl      Turtle of the same statements: @prefix wd:, wdt:, one
#            "wd:Q... wdt:P... wd:Q... ." a line
# BENCH_RDF_FORMATS (default "tsv nt tsv-iri ttl") names those written
# and run; tsv is always among them.  The issue's size, 100 million
# triples over 10 million entities (N-Triples about 15 GB, Turtle 5.5,
# TSV 5.1; peak RSS 2.6 GiB a run), is
#   BENCH_RDF_TRIPLES=100000000 BENCH_RDF_ENTITIES=10000000 \
#   BENCH_RDF_REPS=4 BENCH_RDF_FORMATS="tsv nt ttl" bench/ingest_rdf.sh
# (18 minutes on 2 shared cores, generating the files included).
# BENCH_RDF_BIN (default bin/) is the build measured.
# Each is ingested BENCH_RDF_REPS times (default 3), the formats
# alternating (tsv nt tsv-iri ttl, tsv nt ...); for each run: wall and
# CPU (user + system) seconds and peak RSS from /usr/bin/time, triples
# per second and MB of input per second, wall and per CPU second.  The
# summary takes each format's median run and the ratios to tsv.  With
# BENCH_RDF_BASE=DIR (a bin/ of another build), every run of a format is
# paired with one of DIR/kg-ingest on the same file (this build first in
# odd repetitions, second in even ones, so that an order effect cancels
# out with an even BENCH_RDF_REPS), its medians under
# "base" and the ratios of this build's to them under "vs_base".  Run from
# the repository root with bin/ and build/aux built; writes the entry of
# its size (BENCH_RDF_TRIPLES) under "sizes" in
# bench/results/ingest_rdf.json, keeping the other sizes' entries.
# With BENCH_RDF_COLD=1 each input is written out and dropped from the
# page cache before each run (POSIX_FADV_DONTNEED), so that every run
# reads its file from the disk, as a first ingest of a dump does; the
# entry is then "N_cold".  Without it a run finds the cache as the runs
# before left it: on a machine with less free memory than the files,
# the smaller ones (TSV, Turtle) stay cached and N-Triples does not.
# Generated files go to bench/work/ and
# are deleted at the end.  With BENCH_RDF_BASE the first repetition's
# outputs of the two builds (all but manifest.json) are compared:
# "vs_base"."same_outputs".
set -eu
top=$(pwd)
bin=${BENCH_RDF_BIN:-$top/bin}
gen=$top/build/aux/gen_triples
ntrip=${BENCH_RDF_TRIPLES:-5000000}
nent=${BENCH_RDF_ENTITIES:-500000}
reps=${BENCH_RDF_REPS:-3}
base=${BENCH_RDF_BASE:-}
formats=${BENCH_RDF_FORMATS:-tsv nt tsv-iri ttl}
case " $formats " in *" tsv "*) ;; *) formats="tsv $formats";; esac
[ -z "$base" ] || [ -x "$base/kg-ingest" ] ||
    { echo "bench/ingest_rdf.sh: no $base/kg-ingest" >&2; exit 1; }
work=$top/bench/work/ingest_rdf.$$
out=$top/bench/results/ingest_rdf.json
[ -x /usr/bin/time ] || { echo "bench/ingest_rdf.sh: needs /usr/bin/time" >&2; exit 1; }
[ -x "$gen" ] || make -s build/aux/gen_triples
[ -x "$bin/kg-ingest" ] || make -s bin/kg-ingest
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
same_base=true
: >"$runs"
cut -d' ' -f1-3 /proc/loadavg >loadavg_start

has() { case " $formats " in *" $1 "*) return 0;; esac; return 1; }
"$gen" -n "$ntrip" -e "$nent" -r 1000 -s 1 g.tsv
! has tsv-iri ||
awk -F'\t' -v OFS='\t' '{ print "http://www.wikidata.org/entity/Q" substr($1, 4),
    "http://www.wikidata.org/prop/direct/P" substr($2, 6),
    "http://www.wikidata.org/entity/Q" substr($3, 4) }' g.tsv >g-iri.tsv
! has nt ||
awk -F'\t' '{ print "<http://www.wikidata.org/entity/Q" substr($1, 4) "> <http://www.wikidata.org/prop/direct/P" substr($2, 6) "> <http://www.wikidata.org/entity/Q" substr($3, 4) "> ." }' g.tsv >g.nt
! has ttl ||
{ echo '@prefix wd: <http://www.wikidata.org/entity/> .'
  echo '@prefix wdt: <http://www.wikidata.org/prop/direct/> .'
  awk -F'\t' '{ print "wd:Q" substr($1, 4) " wdt:P" substr($2, 6) " wd:Q" substr($3, 4) " ." }' g.tsv
} >g.ttl
declare -A file=([tsv]=g.tsv [tsv-iri]=g-iri.tsv [nt]=g.nt [ttl]=g.ttl)

for i in $(seq "$reps"); do
	for fmt in $formats; do
	order="new ${base:+base}"
	[ -z "$base" ] || [ $((i % 2)) -eq 1 ] || order="base new"
	for build in $order; do
		f=${file[$fmt]}
		b=$bin
		[ "$build" = new ] || b=$base
		rm -rf out
		[ "${BENCH_RDF_COLD:-0}" = 0 ] || python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$f"
		/usr/bin/time -f "%e %U %S %M" -o time.txt nice -n 10 \
		    "$b/kg-ingest" -q -o out "$f" 2>err.txt ||
		    { cat err.txt >&2; exit 1; }
		python3 - "$fmt" "$f" "$ntrip" "$i" "$build" >>"$runs" <<'PY'
import json, os, sys
fmt, path, n, rep = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
build = sys.argv[5]
wall, user, sys_, rss = open("time.txt").read().split()[-4:]
m = json.load(open("out/manifest.json"))["figures"]
cpu = float(user) + float(sys_)
mb = os.path.getsize(path) / 1e6
r = {"format": fmt, "build": build, "rep": rep, "input_mb": mb, "wall_seconds": float(wall),
     "cpu_seconds": cpu, "user_seconds": float(user), "system_seconds": float(sys_),
     "peak_rss_kib": int(rss),
     "triples": m["triples"]["train"], "entities": m["entities"],
     "relations": m["relations"], "read_seconds": m["read_seconds"],
     "read_cpu_seconds": m["read_cpu_seconds"]}
r["triples_per_second"] = n / r["wall_seconds"]
r["triples_per_cpu_second"] = n / cpu
r["mb_per_second"] = mb / r["wall_seconds"]
r["mb_per_cpu_second"] = mb / cpu
print(json.dumps(r))
PY
		tail -1 "$runs" | python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print("bench/ingest_rdf.sh: %-8s %-4s rep %d %7.2f s wall %6.2f s cpu %9.0f triples/cpu-s %6.1f MB/cpu-s %7d KiB" % (
    r["format"], r["build"], r["rep"], r["wall_seconds"], r["cpu_seconds"],
    r["triples_per_cpu_second"], r["mb_per_cpu_second"], r["peak_rss_kib"]))' >&2
		if [ "$i" -eq 1 ]; then
			rm -f out/manifest.json
			if [ "$build" = new ]; then
				cp out/train.npy "train.$fmt.npy"
				rm -rf "new.$fmt"
				mv out "new.$fmt"
			else
				diff -r -q out "new.$fmt" >/dev/null ||
				    same_base=false
			fi
		fi
	done
	done
done
same=true
for fmt in $formats; do
	cmp -s train.tsv.npy "train.$fmt.npy" || same=false
done

python3 - "$runs" "$out" "$ntrip" "$nent" "$reps" "$same" "$base" "$same_base" "$formats" "$(cat loadavg_start)" "${BENCH_RDF_COLD:-0}" <<'PY'
import json, os, platform, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
FORMATS = sys.argv[9].split()
COLD = sys.argv[11] != "0"
KEYS = ("wall_seconds", "cpu_seconds", "user_seconds", "system_seconds",
        "peak_rss_kib", "triples_per_second",
        "triples_per_cpu_second", "mb_per_second", "mb_per_cpu_second")
def summarize(build):
    summary = {}
    for fmt in FORMATS:
        rs = [r for r in runs if r["format"] == fmt and r["build"] == build]
        med = lambda k: statistics.median(r[k] for r in rs)
        summary[fmt] = {k: med(k) for k in KEYS}
        summary[fmt]["input_mb"] = rs[0]["input_mb"]
        summary[fmt]["entities"] = rs[0]["entities"]
    for fmt in FORMATS:
        if fmt == "tsv":
            continue
        s, t = summary[fmt], summary["tsv"]
        s["vs_tsv_triples_per_cpu_second"] = s["triples_per_cpu_second"] / t["triples_per_cpu_second"]
        s["vs_tsv_triples_per_second"] = s["triples_per_second"] / t["triples_per_second"]
        s["vs_tsv_peak_rss"] = s["peak_rss_kib"] / t["peak_rss_kib"]
    return summary
summary = summarize("new")
if sys.argv[7]:
    summary["base"] = summarize("base")
    summary["base"]["bin"] = sys.argv[7]
    summary["vs_base"] = {fmt: {k: summary[fmt][k] / summary["base"][fmt][k]
        for k in ("triples_per_cpu_second", "triples_per_second", "peak_rss_kib")}
        for fmt in FORMATS}
    summary["vs_base"]["same_outputs"] = sys.argv[8] == "true"
entry = {
    "machine": {"nproc": os.cpu_count(),
                "loadavg_at_start": [float(x) for x in sys.argv[10].split()],
                "loadavg_at_end": os.getloadavg(),
                "model": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                               if l.startswith("model name")), None)},
    "generated": {"triples": int(sys.argv[3]), "entities": int(sys.argv[4]),
                  "relations": 1000,
                  "command": "build/aux/gen_triples -n N -e E -r 1000 -s 1, then awk (bench/ingest_rdf.sh)"},
    "repetitions": int(sys.argv[5]),
    "page_cache": ("each input dropped from it before each run" if COLD else
                   "as the runs before left it"),
    "same_train_npy_in_every_format": sys.argv[6] == "true",
    "notes": "Medians of the runs, the formats alternating.  Wall rates suffer "
             "when other jobs share the machine (it was shared: see the load "
             "average); per CPU second is the per-core rate.",
    "summary": summary,
    "runs": runs,
}
try:
    doc = json.load(open(sys.argv[2]))
except (OSError, ValueError):
    doc = {}
if "sizes" not in doc:
    doc = {"benchmark": "kg-ingest RDF input", "sizes": {}}
doc["sizes"][str(int(sys.argv[3])) + ("_cold" if COLD else "")] = entry
json.dump(doc, open(sys.argv[2], "w"), indent=2)
print(json.dumps(summary, indent=2))
PY
