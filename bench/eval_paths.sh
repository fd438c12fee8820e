#!/usr/bin/env bash
# Benchmark of the host and device forms of the same work on the CPU (not
# a test), FB15k-237, the two forms alternated (A B A B ...) in one
# invocation.  Parts (KG_EVAL_PATHS_PARTS, default "eval gnn"):
#
# eval: kg-eval's CPU evaluator (lib/eval/eval.c) against its device
# ranker (lib/eval/eval_device.c) on the CPU backend (the test hook
# KG_EVAL_SEAM=cpu), in bench/eval.sh's setting: FB15k-237's 20,466 test
# triples ranked on both sides against all 14,541 entities, filtered by
# train + valid + test, TransE_l2 and DistMult with random embeddings of
# dimension 200 and 400, on 1 and 2 threads.  The two paths alternate
# (A B A B ...), KG_EVAL_PATHS_RUNS times each (default 3); every report's
# ranks are checked equal (the metrics of every tie policy).  The sampled
# mode (1,000 uniform negatives) is tried on both; the device ranker
# refuses it; --stream at dimension 400 compares peak memory (the device
# ranker copies the entity table into the backend's memory).  Each run
# records kg-eval's ranking seconds, the process's CPU seconds (user +
# system; on a shared machine the steadier figure for one thread) and
# its peak RSS.
#
# gnn: one R-GCN epoch in bench/gnn.sh's setting (hidden 100, learned
# embeddings, 2 block-diagonal layers of 5 blocks, one full-graph step
# over the training triples) on KG_EVAL_PATHS_GNN_THREADS threads
# (default "2 1"), with the host step (lib/gnn layers_rgcn.c, forward.c)
# against the device step on the CPU backend
# (KG_TRAIN_SEAM=cpu: step_device.c, layers_device.c, forward_device.c),
# KG_EVAL_PATHS_EPOCHS epochs (default 4) a run; the seconds of an epoch
# are the median of the epochs after the first; the outputs of the two
# forms are compared byte for byte.
#
# Run from the repository root with bin/ and build/aux built; writes
# bench/results/eval_paths.json (every command, the load averages, every
# run, the medians, ratio = host median / device median: >= 1 when the
# device form is as fast).
set -eu
top=$(pwd)
bin=$top/bin
mkmodel=$top/build/aux/eval_mkmodel
data=${KG_SHARED_DATA:-$top/../shared/data}/fb15k-237
runs_each=${KG_EVAL_PATHS_RUNS:-3}
parts=${KG_EVAL_PATHS_PARTS:-eval gnn}
gepochs=${KG_EVAL_PATHS_EPOCHS:-4}
gthreads=${KG_EVAL_PATHS_GNN_THREADS:-2 1}
gnn_train=$top/build/aux/gnn_train
work=$top/bench/work/eval_paths.$$
out=$top/bench/results/eval_paths.json
command -v jq >/dev/null || { echo "bench/eval_paths.sh: needs jq" >&2; exit 1; }
[ -x "$mkmodel" ] || make -s build/aux/eval_mkmodel
[ -x "$gnn_train" ] || make -s build/aux/gnn_train
[ -x /usr/bin/time ] || { echo "bench/eval_paths.sh: needs /usr/bin/time" >&2; exit 1; }
[ -f "$data/train.txt.gz" ] || { echo "bench/eval_paths.sh: no $data" >&2; exit 1; }
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
gruns=$work/gnn.jsonl
: >"$runs"
: >"$gruns"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)


# measure PATH CASE RUN ENV CMD...: run CMD (with ENV, "-" for none) and
# append a record with kg-eval's ranking time and the load average.
measure() {
	local path=$1 case=$2 run=$3 env=$4 rc=0; shift 4
	[ "$env" = - ] || set -- env "$env" "$@"
	/usr/bin/time -f "%U %S %M" -o time.txt "$@" >report.json 2>err.txt ||
	    rc=$?
	[ "$env" = - ] || shift 2
	if [ "$rc" -ne 0 ]; then
		jq -nc --arg path "$path" --arg case "$case" --argjson run "$run" \
		    --arg env "$env" --arg cmd "${*//$top\//}" --argjson rc "$rc" \
		    --arg err "$(head -1 err.txt)" \
		    '{path: $path, "case": $case, run: $run, env: $env,
		      command: $cmd, exit: $rc, refused: $err}' >>"$runs"
		echo "bench/eval_paths.sh: $case, $path: exit $rc: $(head -1 err.txt)" >&2
		return 0
	fi
	jq -S 'del(.seconds_rank, .backend, .threads)' report.json \
	    >"ranks_${case// /_}_$path.json"
	jq -c --arg path "$path" --arg case "$case" --argjson run "$run" \
	    --arg env "$env" --arg cmd "${*//$top\//}" \
	    --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
	    --argjson cpu "$(awk '{ print $1 + $2 }' time.txt)" \
	    --argjson rss "$(awk '{ print $3 }' time.txt)" \
	    '{path: $path, "case": $case, run: $run, env: $env, command: $cmd,
	      rank_seconds: .seconds_rank, cpu_seconds: $cpu,
	      peak_rss_kib: $rss,
	      backend: (.backend // "openmp"),
	      load1: ($load | tonumber), mrr: .metrics.both.mrr}' \
	    report.json >>"$runs"
	echo "bench/eval_paths.sh: $case, $path, run $run:" \
	    "rank $(jq .seconds_rank report.json) s, cpu $(awk '{ print $1 + $2 }' time.txt) s" >&2
}

# ab CASE KG-EVAL-OPTIONS...: both paths alternated, then their reports
# compared.
ab() {
	local case=$1 r; shift
	for r in $(seq 1 "$runs_each"); do
		measure eval.c "$case" "$r" - "$bin/kg-eval" -q "$@"
		measure eval_device.c "$case" "$r" KG_EVAL_SEAM=cpu \
		    "$bin/kg-eval" -q "$@"
	done
	if [ -f "ranks_${case// /_}_eval.c.json" ] &&
	    [ -f "ranks_${case// /_}_eval_device.c.json" ]; then
		if cmp -s "ranks_${case// /_}_eval.c.json" \
		    "ranks_${case// /_}_eval_device.c.json"; then
			echo "{\"case\": \"$case\", \"reports_equal\": true}"
		else
			echo "{\"case\": \"$case\", \"reports_equal\": false}"
		fi >>"$work/equal.jsonl"
	fi
}

# gnn_run FORM THREADS RUN ENV: train gepochs epochs of R-GCN with
# FORM's step and append a record; the output directory is g_FORM_THREADS.
gnn_run() {
	local form=$1 threads=$2 run=$3 env=$4 cmd med load
	cmd="$gnn_train --model_name RGCN --learned_only --layers 2 --gnn_hidden 100 --hidden_dim 100 --decomposition block --num_bases 5 --dropout 0.2 --lr 0.01 --batch_size $ntrain --neg_sample_size 1 --epochs $gepochs --seed 1 --no_checkpoint --force fb g_${form}_$threads"
	load=$(cut -d' ' -f1 /proc/loadavg)
	env OMP_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS=1 ${env:+"$env"} \
	    /usr/bin/time -f "%e %U %S" -o time.txt $cmd 2>log.txt ||
	    { cat log.txt >&2; return 1; }
	med=$(sed -n 's/.*epoch \([0-9]*\)\/[0-9]*: loss [^,]*, [^,]*, \([0-9.]*\) s,.*/\1 \2/p' \
	    log.txt | awk '$1 > 1 { print $2 }' | sort -n |
	    awk '{ a[NR] = $1 } END { if (NR == 0) print "null";
		else if (NR % 2) print a[(NR + 1) / 2];
		else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
	read -r wall usr sys <time.txt
	jq -nc --arg form "$form" --argjson run "$run" --argjson th "$threads" \
	    --arg cmd "OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=1 ${env:+$env }${cmd//$top\//}" \
	    --argjson med "$med" --argjson wall "$wall" \
	    --argjson cpu "$(awk -v u="$usr" -v s="$sys" 'BEGIN { print u + s }')" \
	    --argjson load "$(echo "$load")" \
	    --arg losses "$(sed -n 's/.*epoch [0-9]*\/[0-9]*: loss \([^,]*\),.*/\1/p' log.txt | tr '\n' ' ')" \
	    '{form: $form, threads: $th, run: $run, command: $cmd,
	      median_seconds_per_epoch_after_first: $med, wall_seconds: $wall,
	      cpu_seconds: $cpu, load1: $load, losses: $losses}' >>"$gruns"
	echo "bench/eval_paths.sh: gnn $form, $threads thread(s), run $run:" \
	    "$med s an epoch" >&2
}

"$bin/kg-ingest" -q -o fb --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
ntrain=$(jq '.figures.triples.train' fb/manifest.json)
gnn_same=null
: >"$work/equal.jsonl"
case " $parts " in *" eval "*)
for model in TransE_l2 DistMult; do
	for dim in 200 400; do
		"$mkmodel" --seed 1 fb "m_${model}_$dim" "$model" "$dim"
		for t in 1 2; do
			ab "$model dim $dim, $t thread(s)" --threads "$t" fb \
			    "m_${model}_$dim"
		done
	done
done
ab "TransE_l2 dim 200, 1 thread, sampled 1000 uniform negatives" \
    --threads 1 --neg-sample 1000 fb m_TransE_l2_200
ab "TransE_l2 dim 400, 1 thread, --stream" --threads 1 --stream fb \
    m_TransE_l2_400
esac
case " $parts " in *" gnn "*)
for t in $gthreads; do
	for r in $(seq 1 "$runs_each"); do
		gnn_run host "$t" "$r" ""
		gnn_run device "$t" "$r" KG_TRAIN_SEAM=cpu
	done
done
gnn_same=true
for t in $gthreads; do
	for f in entities.npy relations.npy gnn_weights.npy; do
		cmp -s "g_host_$t/$f" "g_device_$t/$f" || gnn_same=false
	done
done
esac

jq -s --slurpfile eq "$work/equal.jsonl" --slurpfile gnn "$gruns" \
    --argjson gnn_same "$gnn_same" --arg nproc "$(nproc --all)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" --arg load0 "$load_start" \
    --argjson n "$runs_each" '
    def median: sort | if length == 0 then null
        elif length % 2 == 1 then .[length / 2 | floor]
        else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def ratio($a; $b): if $a != null and $b != null then $a / $b else null end;
    . as $all |
    {benchmark: "host and device forms on the CPU: kg-eval ranking (eval.c with OpenMP against eval_device.c on the CPU backend, KG_EVAL_SEAM=cpu) and one R-GCN epoch (host step against the device step on the CPU backend, KG_TRAIN_SEAM=cpu), FB15k-237",
     machine: {nproc: ($nproc | tonumber), cpu: $cpu,
        load_average_at_start: $load0, load_average_at_end: $load,
        note: "machine shared with other jobs; see the load averages"},
     date: $date, runs_each: $n,
     ratio: "host form median / device form median (>= 1: the device form is as fast)",
     eval: ([$all[] | ."case"] | unique | map(. as $c |
        ($all | map(select(."case" == $c))) as $r |
        ($r | map(select(.path == "eval.c" and .rank_seconds != null) | .rank_seconds) | median) as $a |
        ($r | map(select(.path == "eval_device.c" and .rank_seconds != null) | .rank_seconds) | median) as $b |
        ($r | map(select(.path == "eval.c" and .cpu_seconds != null) | .cpu_seconds) | median) as $ca |
        ($r | map(select(.path == "eval_device.c" and .cpu_seconds != null) | .cpu_seconds) | median) as $cb |
        {"case": $c,
         median_rank_seconds: {"eval.c": $a, "eval_device.c": $b},
         ratio: ratio($a; $b),
         median_cpu_seconds: {"eval.c": $ca, "eval_device.c": $cb},
         cpu_ratio: ratio($ca; $cb),
         reports_equal: ([$eq[] | select(."case" == $c) | .reports_equal] | .[0]),
         refused: ([$r[] | select(.refused != null) | {path, refused}] | unique)})),
     eval_runs: $all,
     gnn: (if ($gnn | length) == 0 then null else
        {setting: "R-GCN, hidden 100, learned embeddings, 2 block-diagonal layers of 5 blocks, DistMult, one full-graph step a epoch, 1 negative, OpenBLAS 1 thread",
         outputs_identical: $gnn_same,
         by_threads: ([$gnn[] | .threads] | unique | map(. as $t |
            ($gnn | map(select(.threads == $t))) as $g |
            ($g | map(select(.form == "host") | .median_seconds_per_epoch_after_first) | median) as $h |
            ($g | map(select(.form == "device") | .median_seconds_per_epoch_after_first) | median) as $d |
            ($g | map(select(.form == "host") | .cpu_seconds) | median) as $ch |
            ($g | map(select(.form == "device") | .cpu_seconds) | median) as $cd |
            {threads: $t,
             median_seconds_per_epoch: {host: $h, device: $d},
             ratio: ratio($h; $d),
             median_cpu_seconds_of_a_run: {host: $ch, device: $cd},
             cpu_ratio: ratio($ch; $cd)})),
         runs: $gnn} end)}' "$runs" >"$out"
echo "bench/eval_paths.sh: wrote ${out#"$top"/}" >&2
