#!/usr/bin/env bash
# Benchmark (not a test): link prediction with text features from the
# pre-trained all-MiniLM-L6-v2 against TF-IDF text features and against
# no attributes (learned input rows only, --learned_only), with the Ray
# paper's GNN settings (examples/configs/rgcn_ray.json, and with
# KG_BENCH_MODELS="rgcn relgnn" relgnn_ray.json; DistMult decoder), on
#   litwd1k    examples/schemas/litwd1k.json as it is (TF-IDF for labels,
#              descriptions and aliases, with its numbers, dates and
#              classes) and the same with every text attribute through
#              "encoder": "transformer";
#   fb15k-237  the entity names alone (attrs/entity2text.tsv.gz);
#   wn18rr     lemma + gloss alone (attrs/entity2text.tsv.gz).
# For each set in KG_BENCH_SETS (default all three), seed in
# KG_BENCH_SEEDS (default "1 2") and KG_BENCH_EPOCHS epochs (default 30,
# the same for every variant), with KG_BENCH_TRAIN_FLAGS added to every
# kg-train (e.g. "--fanout 10,10" for sampled mini-batches): filtered MRR, Hits@10 and AUC from kg-eval
# on the whole test split, and on the test triples that touch an entity
# absent from train.  Those entities have no edge in the training graph:
# with features their rows come from their text alone (the inductive
# path), with learned rows they keep their untrained initial row.  The
# subset is scored with the model's own entity and relation rows
# (kg-eval --entities --relations --entity-map) against a dataset whose
# test split is the subset and whose valid split holds valid plus the
# rest of test, so the filter is the same.  Also the encoding's time,
# tokens and distinct texts, the load average, every command, and
# KG_BENCH_NOTE (what else ran, say) when it is set.  Needs
# the model (make text-model).  Writes bench/results/text_effect.json,
# replacing the entries of the sets it ran and keeping the others.
set -eu
top=$(pwd)
bin=${KG_BENCH_BIN:-$top/bin}
shared=${KG_SHARED_DATA:-$top/../shared/data}
model=${KG_TEXT_MODEL:-$top/models/all-MiniLM-L6-v2}
work=$top/bench/work/text_effect.$$
out=${KG_BENCH_OUT:-$top/bench/results/text_effect.json}
epochs=${KG_BENCH_EPOCHS:-30}
seeds=${KG_BENCH_SEEDS:-1 2}
sets=${KG_BENCH_SETS:-litwd1k fb15k-237 wn18rr}
models=${KG_BENCH_MODELS:-rgcn}
tflags=${KG_BENCH_TRAIN_FLAGS:-}
py=/usr/bin/python3
[ -f "$model/model.safetensors" ] ||
    { echo "bench/text_effect.sh: no model in $model (make text-model)" >&2; exit 1; }
for s in $sets; do
	[ -f "$shared/$s/train.txt.gz" ] ||
	    { echo "bench/text_effect.sh: no $shared/$s" >&2; exit 1; }
done
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT

# The schemas of set $1 into tfidf.json and minilm.json (cwd).
schemas() {
	"$py" - "$1" "$top/examples/schemas/litwd1k.json" "$model" <<'PY'
import json, sys
name, lit, model = sys.argv[1:4]
if name == "litwd1k":
    s = json.load(open(lit))
else:
    s = {"tables": [{"path": "entity2text.tsv.gz", "form": "wide",
                     "columns": ["text"], "quote": "",
                     "unknown_entities": "skip"}],
         "attributes": {"text": {"kind": "text"}}}
json.dump(s, open("tfidf.json", "w"), indent=1)
for k, v in s["attributes"].items():
    if v["kind"] == "text":
        s["attributes"][k] = {"kind": "text", "encoder": "transformer",
                              "model": model}
json.dump(s, open("minilm.json", "w"), indent=1)
PY
}

# The test triples of data dir $1 split by whether they touch an entity
# absent from train: seen_valid.tsv (valid + the others), unseen.tsv,
# and unseen.json with the counts.
split_unseen() {
	"$py" - "$1" <<'PY'
import gzip, json, sys
d = sys.argv[1]
train = set()
for line in gzip.open(d + "/train.txt.gz", "rt", encoding="utf-8"):
    h, _, t = line.rstrip("\n").split("\t")
    train.update((h, t))
seen = open("seen_valid.tsv", "w", encoding="utf-8")
unseen = open("unseen.tsv", "w", encoding="utf-8")
for line in gzip.open(d + "/valid.txt.gz", "rt", encoding="utf-8"):
    seen.write(line)
ents, n, total = set(), 0, 0
for line in gzip.open(d + "/test.txt.gz", "rt", encoding="utf-8"):
    h, _, t = line.rstrip("\n").split("\t")
    total += 1
    new = [x for x in (h, t) if x not in train]
    ents.update(new)
    (unseen if new else seen).write(line)
    n += bool(new)
json.dump({"test_triples": total, "unseen_test_triples": n,
           "unseen_test_entities": len(ents)}, open("unseen.json", "w"))
PY
}

# One set: $1 its name.
one_set() {
	local name=$1 data=$shared/$1 w=$work/$1 cfg variant flag seed m
	local start secs enc schema nun
	mkdir -p "$w"
	cd "$w"
	echo "load_start $(cut -d' ' -f1-3 /proc/loadavg)" >load.txt
	"$bin/kg-ingest" -q -o ds --train "$data/train.txt.gz" \
	    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
	split_unseen "$data"
	nun=$(jq .unseen_test_triples unseen.json)
	[ "$nun" -gt 0 ] && "$bin/kg-ingest" -q -o dsu \
	    --train "$data/train.txt.gz" --valid seen_valid.tsv --test unseen.tsv
	schemas "$name"
	for enc in tfidf minilm; do
		start=$(date +%s.%N)
		"$bin/kg-encode-attrs" fit -q -d ds -s "$enc.json" \
		    --tables-dir "$data/attrs" -o "enc_$enc" 2>/dev/null
		"$bin/kg-encode-attrs" transform -q -j 2 -d ds -m "enc_$enc" \
		    -o "feat_$enc"
		awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}' \
		    >"encode_$enc.secs"
	done
	jq '.figures.attributes | with_entries(select(.value.tokens != null))' \
	    feat_minilm/manifest.json >minilm_figures.json
	: >runs.jsonl
	for m in $models; do
		cfg=$top/examples/configs/${m}_ray.json
		for seed in $seeds; do
			for variant in minilm tfidf learned_only; do
				if [ $variant = learned_only ]; then flag=--learned_only
				else flag="--features feat_$variant"; fi
				start=$(date +%s.%N)
				# shellcheck disable=SC2086
				"$bin/kg-train" -q --force --config "$cfg" $flag $tflags \
				    --epochs "$epochs" --seed "$seed" ds "m_$variant"
				secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}')
				"$bin/kg-eval" -q --auc --force -o whole.json ds "m_$variant"
				echo '{}' >unseen_r.json
				[ "$nun" -gt 0 ] && "$bin/kg-eval" -q --auc --force \
				    -o unseen_r.json --entities "m_$variant/entities.npy" \
				    --relations "m_$variant/relations.npy" --model DistMult \
				    --entity-map ds/entities.tsv \
				    --relation-map ds/relations.tsv dsu
				jq -c -n --arg v "$variant" --arg m "$m" \
				    --argjson seed "$seed" --argjson secs "$secs" \
				    --arg train "kg-train -q --config examples/configs/${m}_ray.json $flag${tflags:+ $tflags} --epochs $epochs --seed $seed ds m_$variant" \
				    --arg eval "kg-eval -q --auc ds m_$variant" \
				    --arg eval_unseen "kg-eval -q --auc --entities m_$variant/entities.npy --relations m_$variant/relations.npy --model DistMult --entity-map ds/entities.tsv --relation-map ds/relations.tsv dsu" \
				    --slurpfile a whole.json --slurpfile u unseen_r.json \
				    '{model: $m, variant: $v, seed: $seed,
				      train_seconds: $secs,
				      commands: {train: $train, eval: $eval,
				                 eval_unseen: $eval_unseen},
				      test: {mrr: $a[0].metrics.both.mrr,
				             hits10: $a[0].metrics.both["hits@10"],
				             auc: $a[0].auc},
				      unseen: {queries: $u[0].metrics.both.n,
				               mrr: $u[0].metrics.both.mrr,
				               hits10: $u[0].metrics.both["hits@10"],
				               auc: $u[0].auc}}' >>runs.jsonl
			done
		done
	done
	echo "load_end $(cut -d' ' -f1-3 /proc/loadavg)" >>load.txt
	cd "$work"
}

for s in $sets; do
	one_set "$s"
done
"$py" - "$out" "$work" "$epochs" "$seeds" "$models" "$(nproc --all)" "$tflags" $sets <<'PY'
import json, os, statistics, sys, time
out, work, epochs, seeds, models, nproc, tflags = sys.argv[1:8]
names = sys.argv[8:]
try:
    res = json.load(open(out))
except (OSError, ValueError):
    res = {}
if "sets" not in res:
    # An older file held LitWD1K's entry alone at the top level.
    old = res if res.get("runs") else None
    res = {"sets": {"litwd1k": old} if old else {}}
res["benchmark"] = ("text features: all-MiniLM-L6-v2 vs TF-IDF vs none "
                    "(learned rows), GNN encoders of the Ray paper's setting, "
                    "whole test split and its triples touching entities "
                    "absent from train")
res["command"] = "bench/text_effect.sh (KG_BENCH_SETS, KG_BENCH_EPOCHS, KG_BENCH_SEEDS, KG_BENCH_MODELS, KG_BENCH_TRAIN_FLAGS; each set's entry records them)"
for name in names:
    d = os.path.join(work, name)
    rd = lambda f: open(os.path.join(d, f)).read().strip()
    load = dict(l.split(" ", 1) for l in rd("load.txt").splitlines())
    runs = [json.loads(l) for l in rd("runs.jsonl").splitlines()]
    mean = {}
    for r in runs:
        key = "%s/%s" % (r["model"], r["variant"])
        mean.setdefault(key, []).append(r)
    def avg(rs, part, k):
        v = [r[part][k] for r in rs if r[part].get(k) is not None]
        return statistics.mean(v) if v else None
    shared = "$KG_SHARED_DATA/" + name
    res["sets"][name] = {
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "nproc": int(nproc),
        "load_average_start": load["load_start"],
        "load_average_end": load["load_end"],
        "note": "compare within one set only: the load average at the start and end says how busy the machine was (KG_BENCH_NOTE adds a note)" + ((": " + os.environ["KG_BENCH_NOTE"]) if os.environ.get("KG_BENCH_NOTE") else ""),
        "command": "KG_BENCH_SETS=%s KG_BENCH_EPOCHS=%s KG_BENCH_SEEDS='%s' KG_BENCH_MODELS='%s' KG_BENCH_TRAIN_FLAGS='%s' bench/text_effect.sh" % (name, epochs, seeds, models, tflags),
        "epochs": int(epochs), "seeds": [int(s) for s in seeds.split()],
        "models": models.split(), "train_flags": tflags,
        "commands": {
            "ingest": "kg-ingest -q -o ds --train %s/train.txt.gz --valid %s/valid.txt.gz --test %s/test.txt.gz" % ((shared,) * 3),
            "ingest_unseen": "kg-ingest -q -o dsu --train %s/train.txt.gz --valid seen_valid.tsv --test unseen.tsv (valid + test triples touching no new entity; the test triples touching one)" % shared,
            "fit": "kg-encode-attrs fit -q -d ds -s {tfidf,minilm}.json --tables-dir %s/attrs -o enc_{tfidf,minilm}" % shared,
            "transform": "kg-encode-attrs transform -q -j 2 -d ds -m enc_X -o feat_X",
            "schema_tfidf": json.load(open(os.path.join(d, "tfidf.json"))) if name != "litwd1k" else "examples/schemas/litwd1k.json",
            "schema_minilm": "the same, each text attribute {\"kind\": \"text\", \"encoder\": \"transformer\", \"model\": \"models/all-MiniLM-L6-v2\"}",
        },
        "unseen": json.load(open(os.path.join(d, "unseen.json"))),
        "encode_seconds": {"tfidf": float(rd("encode_tfidf.secs")),
                           "minilm": float(rd("encode_minilm.secs"))},
        "minilm_attributes": json.load(open(os.path.join(d, "minilm_figures.json"))),
        "runs": runs,
        "mean": {k: {"test": {m: avg(v, "test", m) for m in ("mrr", "hits10", "auc")},
                     "unseen": {m: avg(v, "unseen", m) for m in ("mrr", "hits10", "auc")}}
                 for k, v in mean.items()},
    }
json.dump(res, open(out, "w"), indent=2)
for name in names:
    print(name, json.dumps(res["sets"][name]["mean"], indent=1))
PY
