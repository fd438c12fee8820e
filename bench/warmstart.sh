#!/bin/sh
# Benchmark of warm starts (not a test): FB15k-237, "yesterday" = the
# train triples of a random 90% of the entities, "today" = all of train
# (kg-ingest --extend).  A retrain from scratch on today against
# yesterday's model carried over (kg-train --init_from) and fine-tuned
# for a quarter of the retrain's epochs, the same with --freeze_old (only
# the new rows and the relations train); and --epochs 0 with
# --init_new neighbours and random.  Test MRR (kg-eval, filtered, all
# entities, realistic ties) overall and on the test triples that touch a
# new entity.  The TransE_l2 recipe of bench/train_accuracy_configs.sh,
# cut to EPOCHS epochs (default 8) so that it stays short.
# The retrain and the warm start alternate REPS times (medians reported).
# usage: bench/warmstart.sh [out.json]   (KG_SHARED_DATA, EPOCHS, THREADS, REPS)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/bench/results/warmstart.json}
data=${KG_SHARED_DATA:-$top/../../shared/data}/fb15k-237
[ -d "$data" ] || data=/work/shared/data/fb15k-237
E=${EPOCHS:-8}
FT=$(( (E + 3) / 4 ))
T=${THREADS:-2}
B=$top/bin
w=$(mktemp -d "${TMPDIR:-/tmp}/kg-warm.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"
gzip -dc "$data/train.txt.gz" >train.tsv
gzip -dc "$data/valid.txt.gz" >valid.tsv
gzip -dc "$data/test.txt.gz" >test.tsv
# A seeded 10% of the entities are new today.
awk -F'\t' '{ print $1; print $3 }' train.tsv | sort -u |
    awk 'BEGIN { srand(7) } rand() < 0.1' >fresh.txt
awk -F'\t' 'NR == FNR { f[$1] = 1; next } !($1 in f) && !($3 in f)' \
    fresh.txt train.tsv >yesterday.tsv
awk -F'\t' 'NR == FNR { f[$1] = 1; next } ($1 in f) || ($3 in f)' \
    fresh.txt test.tsv >test_new.tsv
# Valid and the other test triples as valid, so that the filter is the
# same (a triple given twice would be dropped from the later split).
awk -F'\t' 'NR == FNR { f[$1] = 1; next } !($1 in f) && !($3 in f)' \
    fresh.txt test.tsv | cat valid.tsv - >valid_and_test.tsv
$B/kg-ingest -q -o dsy --train yesterday.tsv
$B/kg-ingest -q --extend dsy -o dst --train train.tsv --valid valid.tsv \
    --test test.tsv --unseen drop
# The same IDs, the new-entity test triples as test (filtered by all).
$B/kg-ingest -q --extend dsy -o dsn --train train.tsv \
    --valid valid_and_test.tsv --test test_new.tsv --unseen drop
cmp -s dst/entities.tsv dsn/entities.tsv
t="$B/kg-train -q --num_thread $T --seed 1 --model_name TransE_l2"
t="$t --hidden_dim 400 --gamma 9 -adv --adversarial_temperature 1"
t="$t --batch_size 1024 --neg_sample_size 256 --lr 0.05 --no_checkpoint"
$t --epochs "$E" dsy yesterday
# The retrain and the warm start alternate, REPS times each (default 2).
runs=
for i in $(seq "${REPS:-2}"); do
	$t --epochs "$E" dst retrain_$i
	$t --epochs "$FT" --init_from yesterday dst warm_$i
	runs="$runs retrain_$i warm_$i"
done
$t --epochs "$FT" --init_from yesterday --freeze_old dst frozen
$t --epochs 0 --init_from yesterday dst zero_nb
$t --epochs 0 --init_from yesterday --init_new random dst zero_rand
ev() { $B/kg-eval -q --threads "$T" "$1" "$2" | jq -c '.metrics.both'; }
for m in $runs frozen zero_nb zero_rand; do
	printf '%s\t%s\t%s\t%s\n' "$m" "$(ev dst $m)" "$(ev dsn $m)" \
	    "$(jq '.figures.train_seconds // 0' $m/manifest.json)"
done >results.tsv
cat results.tsv >&2
python3 - "$out" "$E" "$FT" "$T" "$(wc -l <fresh.txt)" "$(wc -l <test_new.tsv)" \
    "$(wc -l <yesterday.tsv)" "$(wc -l <train.tsv)" <<'PY'
import json, sys, time
out, E, FT, T, nfresh, ntestnew, ny, nt = sys.argv[1:]
def mrr(j):
    return j["mrr"]
runs = {}
for line in open("results.tsv"):
    name, all_, new, secs = line.rstrip("\n").split("\t")
    a, n = json.loads(all_), json.loads(new)
    runs[name] = {"test_mrr": mrr(a), "test_mrr_new_entity_triples": mrr(n),
                  "train_seconds": float(secs), "all": a, "new": n}
def med(kind, key):
    v = sorted(x[key] for n, x in runs.items() if n.startswith(kind + "_"))
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2
summary = {k: {key: med(k, key) for key in ("test_mrr",
               "test_mrr_new_entity_triples", "train_seconds")}
           for k in ("retrain", "warm")}
r = summary["retrain"]["train_seconds"]
json.dump({
    "benchmark": "warm start against a retrain (bench/warmstart.sh)",
    "date": time.strftime("%Y-%m-%d"),
    "dataset": "fb15k-237", "model": "TransE_l2",
    "recipe": "bench/train_accuracy_configs.sh fb15k-237/TransE, cut to "
              "%s epochs (retrain and yesterday), %s fine-tuning" % (E, FT),
    "threads": int(T), "machine": "2 cores shared with other jobs",
    "new_entities": int(nfresh), "yesterday_train_triples": int(ny),
    "today_train_triples": int(nt), "test_triples_new_entity": int(ntestnew),
    "runs": runs, "medians": summary,
    "warm_over_retrain_train_seconds":
        summary["warm"]["train_seconds"] / r if r else None,
    "warm_minus_retrain_test_mrr":
        summary["warm"]["test_mrr"] - summary["retrain"]["test_mrr"],
}, open(out, "w"), indent=1, sort_keys=True)
PY
