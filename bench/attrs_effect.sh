#!/usr/bin/env bash
# Benchmark (not a test): do node attributes improve link prediction on
# real data?  LitWD1K (every entity has numbers or dates, Wikidata classes
# and text): kg-encode-attrs with examples/schemas/litwd1k.json, then the
# Ray paper's R-GCN setting (examples/configs/rgcn_ray.json, DistMult
# decoder) trained over the attribute features and, as the baseline in the
# same invocation, over learned embeddings only (--learned_only); filtered
# test MRR, Hits@10 and AUC from kg-eval, for each seed in KG_BENCH_SEEDS
# (default "1 2"), KG_BENCH_EPOCHS epochs (default 30).  Writes
# bench/results/attrs_effect.json.
set -eu
top=$(pwd)
bin=$top/bin
data=${KG_SHARED_DATA:-$top/../shared/data}/litwd1k
work=$top/bench/work/attrs_effect.$$
out=$top/bench/results/attrs_effect.json
epochs=${KG_BENCH_EPOCHS:-30}
seeds=${KG_BENCH_SEEDS:-1 2}
command -v jq >/dev/null || { echo "bench/attrs_effect.sh: needs jq" >&2; exit 1; }
[ -f "$data/train.txt.gz" ] || { echo "bench/attrs_effect.sh: no $data" >&2; exit 1; }
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
config=$top/examples/configs/rgcn_ray.json
"$bin/kg-ingest" -q -o ds --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
"$bin/kg-encode-attrs" fit -q -d ds -s "$top/examples/schemas/litwd1k.json" \
    --tables-dir "$data/attrs" -o enc 2>/dev/null
"$bin/kg-encode-attrs" transform -q -d ds -m enc -o shard
"$bin/kg-encode-attrs" merge -q -m enc -o feat shard
runs=$work/runs.jsonl
: >"$runs"
for seed in $seeds; do
	for variant in attributes learned_only; do
		if [ $variant = attributes ]; then flag="--features feat"; else flag=--learned_only; fi
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
jq -s --arg date "$(date -u +%FT%TZ)" --argjson nproc "$(nproc --all)" \
    --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson epochs "$epochs" '
    def mean(f): (map(f) | add / length);
    {benchmark: "attributes vs learned embeddings, LitWD1K, R-GCN (Ray paper setting)",
     date: $date, nproc: $nproc, load_average: $load, epochs: $epochs,
     runs: .,
     mean: (group_by(.variant) | map({key: .[0].variant,
        value: {mrr: mean(.mrr), hits10: mean(.hits10), auc: mean(.auc)}})
        | from_entries)}' "$runs" >"$out"
jq .mean "$out"
