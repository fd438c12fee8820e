#!/usr/bin/env bash
# Old tools against new in one invocation (not a test): the speed checks
# a refactoring must pass.  Each case runs with OLD's tools and NEW's in
# turn, KG_AB_REPEAT times (default 3: O N O N O N), and the report gives
# each side's median and best and NEW's speed over OLD's (>= 1: not
# slower; on a shared machine a run on 2 threads is slowed whenever the
# other core is busy, so the bests are the figures to compare there):
#  - kg-train at DGL-KE's FB15k TransE_l2 and ComplEx settings (d 400,
#    batches of 1000, 200 negatives shared by chunks of 200, -adv;
#    KG_AB_STEPS steps, default 400) on 1 and 2 threads, and at PBG's
#    ComplEx setting (d 200, softmax, chunks of 1000 sharing 1000
#    negatives) on 2 threads: kg-train's own positives/s;
#  - kg-train --partitions (4 random partitions, buffer of 2) at the
#    TransE_l2 setting on 2 threads;
#  - kg-eval's full filtered ranking of FB15k-237's test split, TransE_l2
#    and DistMult with random embeddings of d 400 (build/aux/eval_mkmodel),
#    1 thread: its own ranking seconds;
#  - one R-GCN (bench/gnn.sh's setting, hidden 100, block-diagonal, full
#    batch) for 3 epochs on 2 threads: the mean seconds of epochs 2-3.
# Usage: bench/ab.sh OLD_BIN OLD_AUX NEW_BIN NEW_AUX [OUT.json]
# (default out: bench/results/ab.json).  Needs jq and
# ../shared/data/fb15k-237 (or KG_SHARED_DATA).
set -eu
[ $# -ge 4 ] || { echo "usage: bench/ab.sh OLD_BIN OLD_AUX NEW_BIN NEW_AUX [OUT.json]" >&2; exit 2; }
top=$(pwd)
ob=$(cd "$1" && pwd) oa=$(cd "$2" && pwd) nb=$(cd "$3" && pwd) na=$(cd "$4" && pwd)
out=${5:-$top/bench/results/ab.json}
case $out in /*) ;; *) out=$top/$out ;; esac
data=${KG_SHARED_DATA:-$top/../shared/data}/fb15k-237
rep=${KG_AB_REPEAT:-3}
steps=${KG_AB_STEPS:-400}
command -v jq >/dev/null || { echo "bench/ab.sh: needs jq" >&2; exit 1; }
[ -f "$data/train.txt.gz" ] || { echo "bench/ab.sh: no $data" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/kgab.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
export OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

"$nb/kg-ingest" -q -o fb --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
"$nb/kg-partition" -q -m random -p 4 -s 1 -o fb-p4 fb
for m in TransE_l2 DistMult; do
	"$na/eval_mkmodel" --seed 1 fb "ev_$m" "$m" 400
done

# record CASE SIDE VALUE UNIT: one run's figure.
record() {
	jq -c -n --arg c "$1" --arg s "$2" --argjson v "$3" --arg u "$4" \
	    --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
	    '{case: $c, side: $s, value: $v, unit: $u,
	      load_average: ($load | tonumber)}' >>"$runs"
}

# train CASE SIDE BIN THREADS ARGS...: kg-train's positives/s.
train() {
	local c=$1 s=$2 b=$3 t=$4; shift 4
	rm -rf m
	"$b/kg-train" -q --no_checkpoint --num_thread "$t" "$@" fb m
	record "$c" "$s" "$(jq .figures.triples_per_second m/manifest.json)" \
	    positives_per_second
}

# rank CASE SIDE BIN MODEL: kg-eval's ranking seconds, as a rate (1/s).
rank() {
	local r
	r=$("$3/kg-eval" -q --threads 1 fb "ev_$4" | jq .seconds_rank)
	record "$1" "$2" "$(awk -v r="$r" 'BEGIN { print 1 / r }')" \
	    rankings_per_second
}

# gnn CASE SIDE BIN AUX: one over the mean seconds of epochs 2-3.
gnn() {
	local s n
	rm -rf m
	OMP_NUM_THREADS=2 "$4/gnn_train" --model_name RGCN --learned_only \
	    --layers 2 --gnn_hidden 100 --hidden_dim 100 \
	    --decomposition block --num_bases 5 --dropout 0.2 --lr 0.01 \
	    --batch_size 272115 --neg_sample_size 1 --epochs 3 --seed 1 \
	    --no_checkpoint --force fb m 2>log.txt
	s=$(sed -n 's/.*epoch \([0-9]*\)\/[0-9]*: loss [^,]*, [^,]*, \([0-9.]*\) s,.*/\1 \2/p' \
	    log.txt | awk '$1 > 1 { t += $2; n++ } END { if (n) print n / t }')
	[ -n "$s" ] || { cat log.txt >&2; return 1; }
	record "$1" "$2" "$s" epochs_per_second
}

dgl="--hidden_dim 400 --batch_size 1000 --neg_sample_size 200 --neg_chunk_size 200 -adv --gamma 12 --lr 0.1 --max_step $steps --epochs 1000"
pbg="--model_name ComplEx --hidden_dim 200 --loss softmax --batch_size 5000 --neg_chunk_size 1000 --neg_sample_size 1000 --neg_sampler uniform --lr 0.1 --max_step $(( (steps + 14) / 15 )) --epochs 1000"
for i in $(seq "$rep"); do
	for side in old new; do
		if [ $side = old ]; then b=$ob a=$oa; else b=$nb a=$na; fi
		train "TransE_l2 DGL-KE setting, 1 thread" $side "$b" 1 \
		    --model_name TransE_l2 $dgl
		train "TransE_l2 DGL-KE setting, 2 threads" $side "$b" 2 \
		    --model_name TransE_l2 $dgl
		train "ComplEx DGL-KE setting, 1 thread" $side "$b" 1 \
		    --model_name ComplEx $dgl
		train "ComplEx DGL-KE setting, 2 threads" $side "$b" 2 \
		    --model_name ComplEx $dgl
		train "ComplEx PBG setting, 2 threads" $side "$b" 2 $pbg
		train "TransE_l2 --partitions 4, buffer 2, 2 threads" $side \
		    "$b" 2 --model_name TransE_l2 $dgl --partitions fb-p4 \
		    --buffer_capacity 2 --swap_dir .
		rank "kg-eval TransE_l2 d 400, 1 thread" $side "$b" TransE_l2
		rank "kg-eval DistMult d 400, 1 thread" $side "$b" DistMult
		gnn "R-GCN hidden 100 epoch, 2 threads" $side "$b" "$a"
	done
	echo "bench/ab.sh: round $i of $rep done" >&2
done

mkdir -p "$(dirname "$out")"
jq -s --arg old "$ob" --arg new "$nb" --arg start "$load_start" \
    --arg finish "$(cut -d' ' -f1-3 /proc/loadavg)" \
    --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" \
    --argjson rep "$rep" --argjson steps "$steps" '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor]
        else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    {benchmark: "old tools against new, alternated in one invocation",
     date: $date, machine: {cpu: $cpu, nproc: 2}, old: $old, new: $new,
     repeat: $rep, dgl_steps: $steps,
     load_average_start: $start, load_average_end: $finish,
     cases: (group_by(.case) | map({case: .[0].case, unit: .[0].unit,
        old: ([.[] | select(.side == "old") | .value] | median),
        new: ([.[] | select(.side == "new") | .value] | median),
        old_runs: [.[] | select(.side == "old") | .value],
        new_runs: [.[] | select(.side == "new") | .value]}
        | . + {new_over_old: (.new / .old),
               old_best: (.old_runs | max), new_best: (.new_runs | max)}
        | . + {best_new_over_old: (.new_best / .old_best)})),
     runs: .}' "$runs" >"$out"
jq -r '.cases[] | "\(.case): new/old \(.new_over_old * 1000 | round / 1000) (medians), \(.best_new_over_old * 1000 | round / 1000) (bests)"' "$out" >&2
echo "bench/ab.sh: wrote $out" >&2
