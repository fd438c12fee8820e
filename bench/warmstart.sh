#!/usr/bin/env bash
# Benchmark of warm starts (not a test), issue 39's protocol on FB15k-237
# at the project's time-to-accuracy recipe for TransE
# (examples/configs/tta/fb15k-237-transe.json: TransE_l1, d = 400,
# self-adversarial logistic loss, element-wise Adagrad lr 0.01; it reached
# its bar, test MRR 0.309, after 34 epochs).
#
# "yesterday" = the train triples of a seeded random 90% of the entities
# (both ends known), "today" = all of train (kg-ingest --extend).
#   a  A retrain from scratch on today (EPOCHS epochs, default 34: the
#      recipe's measured epochs) against yesterday's model (EPOCHS epochs
#      on yesterday) carried over (kg-train --init_from) and fine-tuned
#      for each of FT (default "4 8") epochs, alternating retrain and warm
#      runs REPS times (default 2); each of RESET_FT (default 6; empty:
#      none) epochs also with --reset_optimizer (Adagrad sums started
#      afresh); --freeze_old for the last FT; and --epochs 0 with
#      --init_new neighbours and random.
#   b  Ten days of 1% deltas: the new entities in ten seeded slices of
#      about 1% of the entities each; day k's train holds every triple
#      whose ends are known by day k (day 10: all of train), made by
#      kg-ingest --extend from day k-1, and its model is day k-1's
#      fine-tuned for DAY_FT epochs (default 1) with DAY_FLAGS added
#      (e.g. --reset_optimizer).  After day 10 against
#      the retrain of a (the same train, valid and test triples).
#   c  LitWD1K, R-GCN over node attributes (examples/configs/rgcn_ray.json
#      with --features, GNN_EPOCHS epochs, default 30), yesterday and
#      today as above: the encoders fitted on yesterday's dataset and
#      today's features transformed with them (kg-encode-attrs transform
#      over the extended dataset), so the widths agree; --epochs 0 from
#      yesterday's model (inductive: the encoder over the new nodes'
#      attributes and edges) and GNN_FT epochs of fine-tuning (default
#      5), with and without --freeze_old (the encoder, old learned rows
#      kept; relations and new rows train), against a retrain on today.
# Test MRR (kg-eval: filtered by all splits, every entity a candidate,
# both sides, realistic ties) overall and on the test triples that touch a
# new entity.  The seconds are kg-train's train_seconds (the epochs, not
# loading); b also gives the wall time of its ten updates, ingest
# included.  PARTS (default "a b c") picks the parts; THREADS (default 2).
# usage: bench/warmstart.sh [out.json]   (KG_SHARED_DATA, KG_BIN, EPOCHS, FT, REPS,
#        RESET_FT, DAY_FT, DAY_FLAGS, GNN_EPOCHS, GNN_FT, THREADS, PARTS)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/bench/results/warmstart.json}
shared=${KG_SHARED_DATA:-$top/../../shared/data}
[ -d "$shared/fb15k-237" ] || shared=/work/shared/data
cfg=$top/examples/configs/tta/fb15k-237-transe.json
E=${EPOCHS:-34}
FTS=${FT:-4 8}
RFTS=${RESET_FT-6}
T=${THREADS:-2}
DF=${DAY_FT:-1}
DFL=${DAY_FLAGS:-}
PARTS=${PARTS:-a b c}
GE=${GNN_EPOCHS:-30}
GF=${GNN_FT:-5}
B=${KG_BIN:-$top/bin}
load0=$(cut -d" " -f1-3 /proc/loadavg)
w=$(mktemp -d "${TMPDIR:-/tmp}/kg-warm.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"
# prepare DATA: in the current directory, yesterday's dataset dsy and
# today's dst (and dst.n) from DATA's splits.
prepare() {
	local data=$1
	gzip -dc "$data/train.txt.gz" >train.tsv
	gzip -dc "$data/valid.txt.gz" >valid.tsv
	gzip -dc "$data/test.txt.gz" >test.tsv
	# A seeded 10% of the entities are new today, in a seeded order.
	awk -F'\t' '{ print $1; print $3 }' train.tsv | sort -u |
	    awk 'BEGIN { srand(7) } rand() < 0.1 { print rand() "\t" $0 }' |
	    sort -k1,1 | cut -f2 >fresh.txt
	known fresh.txt <train.tsv >yesterday.tsv
	awk -F'\t' 'NR == FNR { f[$1] = 1; next } ($1 in f) || ($3 in f)' \
	    fresh.txt test.tsv >test_new.tsv
	# Valid and the other test triples as valid, so that the filter is the
	# same (a triple given twice would be dropped from the later split).
	known fresh.txt <test.tsv | cat valid.tsv - >valid_and_test.tsv
	$B/kg-ingest -q -o dsy --train yesterday.tsv
	ext dsy dst train.tsv
}
# ext OLD NEW TRAIN: today's two views of the same IDs: NEW (test) and
# NEW.n (the new-entity test triples as test, filtered by all).
ext() {
	$B/kg-ingest -q --extend "$1" -o "$2" --train "$3" --valid valid.tsv \
	    --test test.tsv --unseen drop
	$B/kg-ingest -q --extend "$1" -o "$2.n" --train "$3" \
	    --valid valid_and_test.tsv --test test_new.tsv --unseen drop
	cmp -s "$2/entities.tsv" "$2.n/entities.tsv"
}
# known NEWFILE <triples: the triples with no end in NEWFILE.
known() {
	awk -F'\t' 'FILENAME == ARGV[1] { f[$1] = 1; next }
	    !($1 in f) && !($3 in f)' "$1" -
}
t="$B/kg-train -q --num_thread $T --seed 1 --config $cfg --no_checkpoint"
secs() { jq '.figures.train_seconds // 0' "$1/manifest.json"; }
ev() { $B/kg-eval -q --threads "$T" "$1" "$2" | jq -c '.metrics.both'; }
# run NAME DATASET CMD...: train, evaluate on DATASET and DATASET.n.
run() {
	local name=$1 ds=$2; shift 2
	local t0 t1
	t0=$(date +%s.%N)
	"$@" "$ds" "$name"
	t1=$(date +%s.%N)
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$(ev "$ds" "$name")" \
	    "$(ev "$ds.n" "$name")" "$(secs "$name")" \
	    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$*" \
	    >>results.tsv
	tail -n 1 results.tsv >&2
}
has() { [[ " $PARTS " == *" $1 "* ]]; }
mkdir fb lit
if has a || has b; then
	cd fb
	prepare "$shared/fb15k-237"
	: >results.tsv
	$t --epochs "$E" dsy yesterday
	cd ..
fi
cd fb
if has a; then
	for i in $(seq "${REPS:-2}"); do
		run retrain_$i dst $t --epochs "$E"
		for f in $FTS; do
			run warm_ft${f}_$i dst $t --epochs "$f" --init_from yesterday
		done
		for f in $RFTS; do
			run warm_reset_ft${f}_$i dst $t --epochs "$f" \
			    --init_from yesterday --reset_optimizer
		done
	done
	last=${FTS##* }
	run frozen_ft$last dst $t --epochs "$last" --init_from yesterday \
	    --freeze_old
	run zero_neighbours dst $t --epochs 0 --init_from yesterday
	run zero_random dst $t --epochs 0 --init_from yesterday --init_new random
fi
if has b; then
	n=$(wc -l <fresh.txt)
	prev=dsy model=yesterday
	t0=$(date +%s.%N)
	for k in $(seq 10); do
		# Entities still new after day k: slices k+1..10.
		awk -v n="$n" -v k="$k" 'NR > int(n * k / 10)' fresh.txt >left.txt
		known left.txt <train.tsv >day$k.tsv
		if [ "$k" -lt 10 ]; then
			$B/kg-ingest -q --extend "$prev" -o day$k --train day$k.tsv
			$t --epochs "$DF" --init_from "$model" $DFL day$k m_day$k
		else
			ext "$prev" day10 day10.tsv
			run m_day10 day10 $t --epochs "$DF" --init_from "$model" $DFL
		fi
		prev=day$k model=m_day$k
	done
	t1=$(date +%s.%N)
	cmp -s day10.tsv train.tsv
	s=0
	for k in $(seq 9); do s=$(awk -v a="$s" -v b="$(secs m_day$k)" \
	    'BEGIN { print a + b }'); done
	printf 'days\t%s\t%s\n' "$(awk -v a="$s" -v b="$(secs m_day10)" \
	    'BEGIN { print a + b }')" "$(awk -v a="$t0" -v b="$t1" \
	    'BEGIN { print b - a }')" >days.tsv
fi
cd ..
if has c; then
	cd lit
	prepare "$shared/litwd1k"
	: >results.tsv
	gt="$B/kg-train -q --num_thread $T --seed 1 --no_checkpoint"
	gt="$gt --config $top/examples/configs/rgcn_ray.json --epochs $GE"
	# The project's schema, every table skipping the entities of the
	# tables that yesterday's dataset lacks (the numeric table names
	# only dataset entities, and the fit sees yesterday's).
	jq '.tables[] |= . + {"unknown_entities": "skip"}' \
	    "$top/examples/schemas/litwd1k.json" >schema.json
	sch=schema.json
	# Yesterday's encoders; today's features through them.
	$B/kg-encode-attrs fit -q -d dsy -s "$sch" \
	    --tables-dir "$shared/litwd1k/attrs" -o enc 2>fit.err ||
	    { cat fit.err >&2; exit 1; }
	$B/kg-encode-attrs transform -q -d dsy -m enc -o sy
	$B/kg-encode-attrs merge -q -m enc -o featy sy
	$B/kg-encode-attrs transform -q -d dst -m enc -o st
	$B/kg-encode-attrs merge -q -m enc -o featt st
	$gt --features featy dsy gyesterday
	run gnn_retrain dst $gt --features featt
	run gnn_zero_inductive dst $gt --features featt --init_from gyesterday \
	    --epochs 0
	run gnn_warm_ft$GF dst $gt --features featt --init_from gyesterday \
	    --epochs "$GF"
	run gnn_frozen_ft$GF dst $gt --features featt --init_from gyesterday \
	    --epochs "$GF" --freeze_old
	cd ..
fi
cat fb/results.tsv lit/results.tsv >&2 2>/dev/null || true
cd fb
lines() { cat "$1" 2>/dev/null | wc -l; }	# 0 for a part not run
python3 - "$out" "$E" "$FTS" "$T" "$DF" "$(lines fresh.txt)" \
    "$(lines test_new.tsv)" "$(lines yesterday.tsv)" "$(lines train.tsv)" \
    "$(secs yesterday 2>/dev/null || true)" "$(cut -d' ' -f1-3 /proc/loadavg)" \
    "$top" "$GE" "$(lines ../lit/fresh.txt)" "$(lines ../lit/test_new.tsv)" \
    "$RFTS" "$load0" <<'PY'
import json, os, statistics, sys, time
(out, E, FTS, T, DF, nfresh, ntestnew, ny, nt, ysecs, load,
 top, GE, lfresh, ltestnew, RFTS, load0) = sys.argv[1:]
def read(path):
    runs = {}
    if not os.path.exists(path):
        return runs
    for line in open(path):
        name, all_, new, secs, wall, cmd = line.rstrip("\n").split("\t")
        a, n = json.loads(all_), json.loads(new)
        runs[name] = {"test_mrr": a["mrr"],
                      "test_mrr_new_entity_triples": n["mrr"],
                      "train_seconds": float(secs), "wall_seconds": float(wall),
                      "command": cmd.replace(top + "/", "").replace(
                          os.environ.get("KG_BIN", top + "/bin"), "bin"),
                      "all": a, "new": n}
    return runs
def num(x, f=int):
    return f(x) if x.strip() else None
runs = read("results.tsv")
lit = read("../lit/results.tsv")
def med(prefix, key):
    v = [x[key] for k, x in runs.items() if k.rsplit("_", 1)[0] == prefix]
    return statistics.median(v) if v else None
keys = ("test_mrr", "test_mrr_new_entity_triples", "train_seconds")
kinds = (["retrain"] + ["warm_ft" + f for f in FTS.split()] +
         ["warm_reset_ft" + f for f in RFTS.split()])
medians = {k: {key: med(k, key) for key in keys} for k in kinds
           if med(k, "test_mrr") is not None}
res = {
    "benchmark": "warm start against a retrain (bench/warmstart.sh)",
    "issue": 39,
    "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "dataset": "fb15k-237",
    "recipe": "examples/configs/tta/fb15k-237-transe.json (TransE_l1, "
              "d=400), %s epochs for yesterday and the retrain" % E,
    "threads": int(T),
    "machine": "%d cores; load average (1, 5, 15 min) at the start %s, at "
               "the end %s" % (os.cpu_count(), load0, load),
    "new_entities": num(nfresh), "yesterday_train_triples": num(ny),
    "today_train_triples": num(nt), "test_triples_new_entity": num(ntestnew),
    "yesterday_train_seconds": num(ysecs, float),
    "eval": "kg-eval: filtered (train, valid, test), all entities, both "
            "sides, realistic ties; new-entity MRR over the test triples "
            "with an end among the new entities",
    "runs": runs, "medians": medians,
}
r = medians.get("retrain")
if r:
    res["warm_vs_retrain"] = {
        k: {"mrr_minus_retrain": v["test_mrr"] - r["test_mrr"],
            "seconds_over_retrain": v["train_seconds"] / r["train_seconds"]}
        for k, v in medians.items() if k != "retrain"}
if os.path.exists("days.tsv"):
    _, tsecs, wall = open("days.tsv").read().split()
    d = runs["m_day10"]
    res["ten_days"] = {
        "protocol": "ten daily deltas of about 1%% of the entities each "
                    "(%d new entities in ten slices), each day kg-ingest "
                    "--extend from the day before and kg-train --init_from "
                    "the day before's model, %s epoch(s) of fine-tuning; "
                    "day 10's train, valid and test are today's, so a's "
                    "retrain is the retrain on day 10" % (num(nfresh), DF),
        "day10_test_mrr": d["test_mrr"],
        "day10_test_mrr_new_entity_triples": d["test_mrr_new_entity_triples"],
        "ten_updates_train_seconds": float(tsecs),
        "ten_updates_wall_seconds_with_ingest": float(wall),
    }
    if r:
        res["ten_days"]["retrain_day10_test_mrr"] = r["test_mrr"]
        res["ten_days"]["retrain_train_seconds"] = r["train_seconds"]
if lit:
    res["rgcn_litwd1k"] = {
        "protocol": "LitWD1K, the same split of yesterday and today (%s new "
                    "entities, %s test triples touching one); R-GCN over "
                    "node attributes (examples/configs/rgcn_ray.json "
                    "--features, %s epochs for yesterday and the retrain), "
                    "the encoders fitted on yesterday's dataset and today's "
                    "features transformed with them" % (lfresh, ltestnew, GE),
        "runs": lit,
    }
json.dump(res, open(out, "w"), indent=1, sort_keys=True)
PY
