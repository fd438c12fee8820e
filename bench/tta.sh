#!/usr/bin/env bash
# Time-to-accuracy benchmark (issue 15; not a test).
#
# For every dataset and model, kg-train runs the config
# examples/configs/tta/DATASET-MODEL.json with a filtered validation MRR
# (all entities, both sides) after every epoch, and stops when that MRR
# reaches the config's published bar (_bar_mrr, or _target_mrr when the
# config sets a higher stop, for a bar to be met on test and not only on
# validation) or when its training time
# reaches the budget: KG_TTA_BUDGET seconds (default 600) on FB15k-237 and
# KG_TTA_BUDGET_SMALL (default 300) on the smaller WN18RR; when these are
# not set, a config's own _budget_seconds replaces the default (a
# two-stage config, whose 1-vs-all epochs cost 20 to 30 sampled ones,
# needs more).  The best
# validated model is kept; kg-eval then gives its filtered test MRR (all
# entities, both sides, realistic ties).  Each run records the curve
# (epoch, cumulative training seconds, valid MRR), the wall time of the
# whole kg-train process (validations included), the load average, and,
# when the bar was not reached, an extrapolation: MRR fitted linearly
# against log(training seconds) over the last half of the curve (at least
# 3 points) and solved for the bar; null when the fit does not rise (a
# plateau: more time alone will not reach the bar).
#
# kg-train's per-epoch lines (--progress: loss, speed, valid MRR) go to
# stderr as the run goes, so a run stopped before its end still shows its
# curve.
#
# Each config then records what it reached (_measured: test and best
# valid MRR, epochs, seconds, date).  KG_TTA_DATASETS (default
# "fb15k-237 wn18rr"), KG_TTA_MODELS (default
# "ComplEx DistMult RESCAL RotatE TransE RGCN"; a model without a config
# for a dataset, R-GCN on WN18RR, is skipped), KG_TTA_THREADS (default: the
# cores), KG_TTA_VALID_EVERY (default 1: validate every epoch; more spaces
# the curve's points out where validation costs more than an epoch; 0: no
# validation at all, DGL-KE's protocol: the config's own --max_step, then
# the test MRR of the last step, for the FB15k configs that race DGL-KE's
# published one-GPU table, whose _dglke_gpu_seconds each run records as
# dglke_gpu_seconds beside its own train_seconds).  KG_TTA_APPEND=1 adds
# this invocation's runs to an existing tta.json (with its date and
# command under "invocations") in place of replacing it.
# KG_TTA_PROBE_STEPS=N makes each run a speed probe instead of a race, for
# a config whose max_step would take hours here: it trains N steps only,
# skips the test MRR, and records the measured positives/s with the time
# the config's max_step would take at that rate (probe.projected_train_
# seconds; faster_than_dglke_gpu is then false).  Run
# from the repository root with bin/ built; writes
# bench/results/tta.json and, with gnuplot, bench/results/tta.png and
# tta.svg (valid MRR against training time, the bars dashed);
# `bench/tta.sh --plot` draws them again from an existing tta.json.
set -eu
top=$(pwd)
bin=$top/bin
shared=${KG_SHARED_DATA:-$top/../shared/data}
cfgdir=${KG_TTA_CONFIGS:-$top/examples/configs/tta}
work=$top/bench/work/tta.$$
out=${KG_TTA_OUT:-$top/bench/results/tta.json}
budget=${KG_TTA_BUDGET:-600}
budget_small=${KG_TTA_BUDGET_SMALL:-300}
datasets=${KG_TTA_DATASETS:-"fb15k-237 wn18rr"}
models=${KG_TTA_MODELS:-"ComplEx DistMult RESCAL RotatE TransE TransE_l1 TransE_l2 TransR RGCN"}
threads=${KG_TTA_THREADS:-$(nproc)}
valid_every=${KG_TTA_VALID_EVERY:-1}
probe=${KG_TTA_PROBE_STEPS:-0}
case $probe in ''|*[!0-9]*) echo "bench/tta.sh: KG_TTA_PROBE_STEPS is a whole number" >&2; exit 2;; esac
for t in jq /usr/bin/time; do
	command -v $t >/dev/null || { echo "bench/tta.sh: needs $t" >&2; exit 1; }
done
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
mkdir -p "$work" "$(dirname "$out")"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
load() { cut -d' ' -f1-3 /proc/loadavg; }

# plot: one panel per dataset of $out, valid MRR against training seconds.
plot() {
	command -v gnuplot >/dev/null || return 0
	# The newest run of each model (runs of later invocations are
	# appended to tta.json after the earlier ones), leaving out runs
	# marked "not_kept": a setting measured and not kept in the config.
	newest='[.runs[] | select(.dataset == $ds and (.not_kept | not))] | group_by(.model) | map(last)'
	datasets=$(jq -r '[.runs[].dataset] | unique | .[]' "$out")
	for ds in $datasets; do
		jq -r --arg ds "$ds" "$newest"' | .[] |
		    "# \(.model) \(.bar_mrr)", (.curve[] | "\(.seconds) \(.valid_mrr)"),
		    "", ""' "$out" >"curve.$ds"
	done
	{
		echo "set terminal pngcairo size 1200,500; set output '${out%.json}.png'"
		echo "set multiplot layout 1,$(echo $datasets | wc -w)"
		for ds in $datasets; do
			echo "set title '$ds: filtered valid MRR (dashed: published bar)'"
			echo "set xlabel 'training seconds'; set ylabel 'MRR'; set key outside right top"
			printf 'plot '
			jq -r --arg ds "$ds" "$newest"' | .[] | "\(.model) \(.bar_mrr)"' "$out" |
			    awk -v ds="$ds" -v q="'" '{ printf "%scurve.%s%s index %d with linespoints lc %d title %s%s%s, %s with lines dt 2 lc %d notitle, ", q, ds, q, NR - 1, NR, q, $1, q, $2, NR }' |
			    sed 's/, $//'
			echo
		done
		echo "unset multiplot"
	} >plot.gp
	gnuplot plot.gp && sed "s|pngcairo size 1200,500; set output '${out%.json}.png'|svg size 1200,500; set output '${out%.json}.svg'|" plot.gp | gnuplot &&
	    echo "bench/tta.sh: wrote ${out%.json}.png and .svg" >&2
}

if [ "${1:-}" = --plot ]; then
	plot
	exit 0
fi

for ds in $datasets; do
	data=$shared/$ds
	[ -f "$data/train.txt.gz" ] || { echo "bench/tta.sh: no $data" >&2; exit 1; }
	"$bin/kg-ingest" -q -o "$ds" --train "$data/train.txt.gz" \
	    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
	for model in $models; do
		b=$budget
		[ "$ds" = fb15k-237 ] || b=$budget_small
		cfg=$cfgdir/$(echo "$ds-$model" | tr 'A-Z' 'a-z').json
		if [ ! -f "$cfg" ]; then
			# A model with a published bar on some datasets only
			# (R-GCN: FB15k-237) is left out of the others.
			if ls "$cfgdir"/*-$(echo "$model" | tr 'A-Z' 'a-z').json \
			    >/dev/null 2>&1; then
				echo "bench/tta.sh: $ds $model: no config, skipped" >&2
				continue
			fi
			echo "bench/tta.sh: no $cfg" >&2
			exit 1
		fi
		bar=$(jq '._bar_mrr' "$cfg")
		[ -n "${KG_TTA_BUDGET:-}${KG_TTA_BUDGET_SMALL:-}" ] ||
		    b=$(jq --argjson d "$b" '._budget_seconds // $d' "$cfg")
		target=$(jq '._target_mrr // ._bar_mrr' "$cfg")
		dglke=$(jq '._dglke_gpu_seconds // null' "$cfg")
		if [ "$valid_every" = 0 ]; then
			set -- --config "$cfg"
		else
			set -- --config "$cfg" --valid_every "$valid_every" \
			    --target_mrr "$target"
		fi
		set -- "$@" --time_budget "$b" --num_thread "$threads" --seed 1 \
		    --no_checkpoint --force --progress
		[ "$probe" = 0 ] || set -- "$@" --max_step "$probe"
		echo "bench/tta.sh: $ds $model: kg-train $* $ds m" >&2
		l0=$(load)
		/usr/bin/time -f "%e" -o time.txt nice -n 10 \
		    "$bin/kg-train" "$@" "$ds" m
		wall=$(cat time.txt)
		if [ "$probe" = 0 ]; then
			nice -n 10 "$bin/kg-eval" -q --threads "$threads" "$ds" m >metrics.json
		else
			echo '{}' >metrics.json
		fi
		jq -c -n --arg ds "$ds" --arg model "$model" --argjson bar "$bar" \
		    --argjson target "$target" --argjson dglke "$dglke" \
		    --arg cmd "kg-train $* $ds m" --argjson wall "$wall" \
		    --argjson budget "$b" --arg l0 "$l0" --arg l1 "$(load)" \
		    --argjson probe "$probe" \
		    --slurpfile cfg "$cfg" --slurpfile man m/manifest.json \
		    --slurpfile met metrics.json --slurpfile log m/train_log.jsonl '
		def fit(p):	# least squares of mrr on ln(seconds)
			(p | length) as $n |
			(p | map(.seconds | log) | add / $n) as $mx |
			(p | map(.valid_mrr) | add / $n) as $my |
			(p | map((.seconds | log) - $mx) | map(. * .) | add) as $sxx |
			(p | map(((.seconds | log) - $mx) * (.valid_mrr - $my)) | add) as $sxy |
			if $sxx > 0 then {slope: ($sxy / $sxx),
			    intercept: ($my - $sxy / $sxx * $mx)} else null end;
		($met[0].by_ties.realistic.both // $met[0].metrics.both) as $m |
		($man[0].figures) as $f |
		[foreach $log[] as $e (0; . + $e.seconds;
		    {epoch: $e.epoch, seconds: ., valid_mrr: $e.valid_mrr})] |
		map(select(.valid_mrr != null)) as $curve |
		($curve | map(.valid_mrr) | max) as $best |
		($curve[($curve | length / 2 | floor):]) as $tail |
		(if $best == null or $best >= $bar or ($tail | length) < 3 then null
		 else fit($tail) end) as $fit |
		{dataset: $ds, model: $model, mrr: $m.mrr,
		 hits1: $m["hits@1"], hits10: $m["hits@10"], bar_mrr: $bar,
		 target_mrr: $target,
		 within_001_of_bar: ($m.mrr >= $bar - 0.01),
		 best_valid_mrr: $best,
		 valid_reached_bar: (if $best == null then null else $best >= $bar end),
		 dglke_gpu_seconds: $dglke,
		 faster_than_dglke_gpu: (if $dglke == null then null
		     elif $probe > 0 then false else
		     ($m.mrr >= $bar - 0.01 and $f.train_seconds < $dglke) end),
		 probe: (if $probe == 0 then null else {steps: $probe,
		     note: "a speed probe, not a race: the config trained for these steps only, no test MRR; projected_train_seconds is the config max_step at the measured rate",
		     positives_per_step: $cfg[0].batch_size,
		     projected_train_seconds: (($cfg[0].max_step * $cfg[0].batch_size) / $f.triples_per_second)} end),
		 epochs: $f.epochs, best_epoch: $f.best_epoch,
		 stopped_by: $f.stopped_by, train_seconds: $f.train_seconds,
		 one_vs_all_after: $f.one_vs_all_after,
		 wall_seconds: $wall, budget_seconds: $budget,
		 triples_per_second: $f.triples_per_second,
		 curve: $curve,
		 extrapolation: (if $fit == null then null else {
		     method: "valid MRR fitted linearly on ln(training seconds) over the last half of the curve",
		     points: ($tail | length), slope_per_ln_second: $fit.slope,
		     seconds_to_bar: (if $fit.slope > 1e-4 then
		         (($bar - $fit.intercept) / $fit.slope | exp) else null end)
		     } | if .seconds_to_bar != null and .seconds_to_bar >
		         100 * ($curve[-1].seconds) then .seconds_to_bar = null |
		         .note = "beyond 100 times the measured time: a plateau"
		     else . end end),
		 config: ($cfg[0] | with_entries(select(.key | startswith("_") | not))),
		 command: $cmd, load_average_before: $l0, load_average_after: $l1}' \
		    >>"$runs"
		tail -n 1 "$runs" | jq -c '{dataset, model, mrr, bar_mrr,
		    best_valid_mrr, epochs, train_seconds, dglke_gpu_seconds,
		    wall_seconds}' >&2
	done
done

now=$(date -u +%FT%TZ)
jq -s --arg date "$now" --arg nproc "$(nproc)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" '
	{benchmark: "tta", date: $date,
	 machine: {nproc: ($nproc | tonumber), cpu: $cpu},
	 protocol: "test MRR: kg-eval, filtered, all entities as candidates, both sides, realistic ties; curve: filtered valid MRR (all entities, both sides) after every epoch against cumulative training seconds (validation excluded; wall_seconds includes it); the model evaluated is the best validated epoch (with KG_TTA_VALID_EVERY=0: no validation, the last step of the config'"'"'s max_step)",
	 runs: .}' "$runs" >"$work/new.json"
if [ "${KG_TTA_APPEND:-0}" = 1 ] && [ -f "$out" ]; then
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
	ptxt=
	[ "$probe" = 0 ] || ptxt=" KG_TTA_PROBE_STEPS=$probe"
	jq --slurpfile n "$work/new.json" --arg date "$now" \
	    --arg what "bench/tta.sh at $commit: KG_TTA_DATASETS=\"$datasets\" KG_TTA_MODELS=\"$models\" KG_TTA_VALID_EVERY=$valid_every$ptxt, $threads threads" '
	    .runs += [$n[0].runs[] | .invocation = $date] |
	    .invocations = ((.invocations // []) + [{date: $date, what: $what}])' \
	    "$out" >"$work/merged.json"
	mv "$work/merged.json" "$out"
else
	mv "$work/new.json" "$out"
fi
echo "bench/tta.sh: wrote $out" >&2

# Each config keeps what it reached here, under "_measured" (a note that
# kg-train ignores); KG_TTA_RECORD=0 leaves the configs as they are.
if [ "${KG_TTA_RECORD:-1}" = 1 ]; then
	jq -c --arg now "$now" '.date as $d | .runs[] |
	    select((.invocation // $d) == $now) | [.dataset, .model, ({date: $now,
	    test_mrr: .mrr, best_valid_mrr, epochs, best_epoch,
	    train_seconds, wall_seconds, budget_seconds, stopped_by,
	    one_vs_all_after, load_average_before, dglke_gpu_seconds,
	    probe} |
	    with_entries(select(.value != null)) | tojson)] | @tsv' -r "$out" |
	while IFS=$'\t' read -r ds model m; do
		cfg=$cfgdir/$(echo "$ds-$model" | tr 'A-Z' 'a-z').json
		jq --indent 1 --argjson m "$m" '._measured = $m' "$cfg" >"$cfg.tmp" &&
		    mv "$cfg.tmp" "$cfg"
	done
fi

plot
