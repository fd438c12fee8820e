#!/usr/bin/env bash
# Benchmark (not a test): grouped against plain 1-vs-all epochs (issue 15,
# "a GEMM-friendly 1-vs-all").  For each dataset, in one invocation:
# DistMult as in examples/configs/tta/DATASET-distmult.json trains
# KG_BENCH_WARM epochs (default 10) with its sampled softmax and keeps
# its checkpoint; from copies of that checkpoint, KG_BENCH_OVA 1-vs-all
# epochs (default 2) follow, once with every positive scored alone in
# shuffled order (plain) and once ordered by query with each query of a
# chunk scored once (--one_vs_all_grouped), alternating which goes first
# per dataset.  Records each epoch's training seconds and filtered valid
# MRR (all entities, realistic ties), the distinct queries against the
# positives of an epoch, and the ratio of the epoch times.  Writes
# bench/results/ova_grouped.json.  Needs ../shared/data (or
# KG_SHARED_DATA).
set -eu
top=$(pwd)
bin=$top/bin
shared=${KG_SHARED_DATA:-$top/../shared/data}
work=$top/bench/work/ova_grouped.$$
out=$top/bench/results/ova_grouped.json
warm=${KG_BENCH_WARM:-10}
ova=${KG_BENCH_OVA:-2}
threads=${KG_BENCH_THREADS:-$(nproc)}
command -v jq >/dev/null || { echo "bench/ova_grouped.sh: needs jq" >&2; exit 1; }
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
first=plain
for ds in wn18rr fb15k-237; do
	data=$shared/$ds
	[ -f "$data/train.txt.gz" ] || { echo "bench/ova_grouped.sh: no $data" >&2; exit 1; }
	"$bin/kg-ingest" -q -o "$ds" --train "$data/train.txt.gz" \
	    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
	cfg=$top/examples/configs/tta/$ds-distmult.json
	# The config's own two-stage keys are replaced by the explicit
	# schedule below.
	jq 'del(.one_vs_all_plateau, .one_vs_all_grouped, .one_vs_all_after)' \
	    "$cfg" >cfg.json
	base="--config cfg.json --num_thread $threads --seed 1 -q --force"
	"$bin/kg-train" $base --epochs "$warm" --checkpoint_dir warm.ckpt \
	    --keep_checkpoint "$ds" warm
	# Distinct (head, relation) queries of the reciprocal positives.
	queries=$(zcat "$data/train.txt.gz" | awk -F'\t' \
	    '{ q[$1 "\t" $2] = 1; q[$3 "\t~" $2] = 1; n++ }
	     END { print length(q), 2 * n }')
	second=$([ $first = plain ] && echo grouped || echo plain)
	for mode in $first $second; do
		rm -rf ckpt.$mode
		cp -r warm.ckpt ckpt.$mode
		flag=$([ $mode = grouped ] && echo --one_vs_all_grouped || true)
		echo "bench/ova_grouped.sh: $ds $mode" >&2
		"$bin/kg-train" $base --one_vs_all $flag \
		    --epochs $((warm + ova)) --valid_every 1 --resume \
		    --checkpoint_dir ckpt.$mode --no_checkpoint "$ds" m.$mode
		jq -c --arg ds "$ds" --arg mode "$mode" --arg q "$queries" \
		    --argjson warm "$warm" -s '
		    {dataset: $ds, mode: $mode, model: "DistMult",
		     warm_epochs: $warm,
		     distinct_queries: ($q | split(" ")[0] | tonumber),
		     positives: ($q | split(" ")[1] | tonumber),
		     epochs: map(select(.epoch > $warm) |
		         {epoch, seconds, valid_mrr})}' \
		    m.$mode/train_log.jsonl >>"$runs"
	done
	first=$second
done
jq -s --arg date "$(date -u +%FT%TZ)" --arg nproc "$(nproc)" \
    --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" '
	def mean(f): (map(f) | add / length);
	{benchmark: "ova_grouped", date: $date,
	 machine: {nproc: ($nproc | tonumber)}, load_average_after: $load,
	 protocol: "DistMult, the tta config (d=400, reciprocal, softmax, element-wise Adagrad lr 0.1, N3 0.05, chunks of 1,024), warm-started by sampled epochs; then 1-vs-all epochs from the same checkpoint, plain and grouped; valid MRR filtered, all entities, realistic ties",
	 runs: .,
	 ratios: (group_by(.dataset) | map({dataset: .[0].dataset,
	     plain_seconds_per_epoch: (map(select(.mode == "plain"))[0] | .epochs | mean(.seconds)),
	     grouped_seconds_per_epoch: (map(select(.mode == "grouped"))[0] | .epochs | mean(.seconds)),
	     positives_per_query: (.[0].positives / .[0].distinct_queries)} |
	     .speedup = (.plain_seconds_per_epoch / .grouped_seconds_per_epoch)))}' \
    "$runs" >"$out"
echo "bench/ova_grouped.sh: wrote $out" >&2
jq -c '.ratios[]' "$out" >&2
