#!/usr/bin/env bash
# Benchmark (not a test): link prediction with text features from the
# pre-trained all-MiniLM-L6-v2 against TF-IDF text features and against
# no attributes, on LitWD1K with the Ray paper's R-GCN setting
# (examples/configs/rgcn_ray.json, DistMult decoder): the attribute
# schema examples/schemas/litwd1k.json as it is (TF-IDF for labels,
# descriptions and aliases), the same schema with its text attributes
# through "encoder": "transformer", and --learned_only; filtered test MRR,
# Hits@10 and AUC from kg-eval for each seed in KG_BENCH_SEEDS (default
# "1 2"), KG_BENCH_EPOCHS epochs (default 30), and the encoding's time,
# tokens and distinct texts.  Needs the model (make text-model).  Writes
# bench/results/text_effect.json.
set -eu
top=$(pwd)
bin=$top/bin
data=${KG_SHARED_DATA:-$top/../shared/data}/litwd1k
model=${KG_TEXT_MODEL:-$top/models/all-MiniLM-L6-v2}
work=$top/bench/work/text_effect.$$
out=$top/bench/results/text_effect.json
epochs=${KG_BENCH_EPOCHS:-30}
seeds=${KG_BENCH_SEEDS:-1 2}
command -v jq >/dev/null || { echo "bench/text_effect.sh: needs jq" >&2; exit 1; }
[ -f "$data/train.txt.gz" ] || { echo "bench/text_effect.sh: no $data" >&2; exit 1; }
[ -f "$model/model.safetensors" ] ||
    { echo "bench/text_effect.sh: no model in $model (make text-model)" >&2; exit 1; }
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
config=$top/examples/configs/rgcn_ray.json
"$bin/kg-ingest" -q -o ds --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
/usr/bin/python3 - "$top/examples/schemas/litwd1k.json" "$model" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for k, v in s["attributes"].items():
    if v["kind"] == "text":
        s["attributes"][k] = {"kind": "text", "encoder": "transformer",
                              "model": sys.argv[2]}
json.dump(s, open("minilm.json", "w"), indent=1)
PY
for enc in tfidf minilm; do
	schema=$top/examples/schemas/litwd1k.json
	[ $enc = minilm ] && schema=$work/minilm.json
	start=$(date +%s.%N)
	"$bin/kg-encode-attrs" fit -q -d ds -s "$schema" \
	    --tables-dir "$data/attrs" -o "enc_$enc" 2>/dev/null
	"$bin/kg-encode-attrs" transform -q -j 2 -d ds -m "enc_$enc" -o "feat_$enc"
	awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}' >"encode_$enc.secs"
done
runs=$work/runs.jsonl
: >"$runs"
for seed in $seeds; do
	for variant in minilm tfidf learned_only; do
		if [ $variant = learned_only ]; then flag=--learned_only
		else flag="--features feat_$variant"; fi
		start=$(date +%s.%N)
		# shellcheck disable=SC2086
		"$bin/kg-train" -q --force --config "$config" $flag \
		    --epochs "$epochs" --seed "$seed" ds "m_$variant"
		secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{print e-s}')
		"$bin/kg-eval" -q --auc --force -o "r_$variant.json" ds "m_$variant"
		jq -c --arg v "$variant" --argjson seed "$seed" --argjson secs "$secs" \
		    --arg cmd "kg-train --config examples/configs/rgcn_ray.json $flag --epochs $epochs --seed $seed" \
		    '{variant: $v, seed: $seed, train_seconds: $secs, command: $cmd,
		      mrr: .metrics.both.mrr, hits10: .metrics.both["hits@10"],
		      auc: .auc}' "r_$variant.json" >>"$runs"
	done
done
jq '.figures.attributes | with_entries(select(.value.tokens != null))' \
    feat_minilm/manifest.json >minilm_figures.json
jq -s --arg date "$(date -u +%FT%TZ)" --argjson nproc "$(nproc --all)" \
    --arg load0 "$load0" --arg load1 "$(cut -d' ' -f1-3 /proc/loadavg)" \
    --argjson epochs "$epochs" \
    --argjson enc_tfidf "$(cat encode_tfidf.secs)" \
    --argjson enc_minilm "$(cat encode_minilm.secs)" \
    --slurpfile fig minilm_figures.json '
    def mean(f): (map(f) | add / length);
    {benchmark: "text features: all-MiniLM-L6-v2 vs TF-IDF vs none, LitWD1K, R-GCN (Ray paper setting)",
     date: $date, nproc: $nproc,
     load_average_start: $load0, load_average_end: $load1,
     note: "the machine was shared with other sessions while it ran",
     epochs: $epochs,
     encode_seconds: {tfidf: $enc_tfidf, minilm: $enc_minilm},
     minilm_attributes: $fig[0],
     runs: .,
     mean: (group_by(.variant) | map({key: .[0].variant,
        value: {mrr: mean(.mrr), hits10: mean(.hits10), auc: mean(.auc)}})
        | from_entries)}' "$runs" >"$out"
jq '{encode_seconds, mean}' "$out"
