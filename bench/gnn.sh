#!/usr/bin/env bash
# Benchmark of GNN training (not a test): R-GCN (Schlichtkrull et al.)
# with learned entity embeddings, one block-diagonal layer of 5 x 5
# blocks and a DistMult decoder on FB15k-237 (272,115 train triples,
# 14,541 entities), full-graph training with batches of 30,000 positives
# and one negative each, lr 0.01, dropout 0.2, as the R-GCN paper's
# link-prediction setting.  Reports seconds per epoch, peak RSS and the
# filtered test MRR (realistic ties) that kg-eval gives after the epochs
# run here, at hidden 100 (KG_BENCH_EPOCHS epochs, default 20) and 500
# (KG_BENCH_EPOCHS_500, default 2: timing and memory only).  References,
# not run here: the R-GCN paper's filtered MRR 0.248; PyG needs 21.5 s per
# epoch and 13.9 GiB at hidden 100 on this machine and runs out of memory
# at 500.  The training runs through build/aux/gnn_train, the same code
# (lib/gnn_train's kg_gnn_cli) as kg-train --model_name RGCN.  One OpenMP thread
# (the machine is shared); run from the repository root with bin/ and
# build/aux/ built; writes bench/results/gnn.json.
set -eu
top=$(pwd)
bin=$top/bin
train=$top/build/aux/gnn_train
data=${KG_SHARED_DATA:-$top/../shared/data}/fb15k-237
work=$top/bench/work/gnn.$$
out=$top/bench/results/gnn.json
epochs=${KG_BENCH_EPOCHS:-20}
epochs500=${KG_BENCH_EPOCHS_500:-2}
command -v jq >/dev/null || { echo "bench/gnn.sh: needs jq" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/gnn.sh: needs /usr/bin/time" >&2; exit 1; }
[ -x "$train" ] || { echo "bench/gnn.sh: build $train first (make)" >&2; exit 1; }
[ -f "$data/train.txt.gz" ] || { echo "bench/gnn.sh: no $data" >&2; exit 1; }
ncpu=$(nproc --all)
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

"$bin/kg-ingest" -q -o fb --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"

# run HIDDEN EPOCHS EVAL(0/1): train, time, optionally evaluate.
run() {
	local hidden=$1 ep=$2 ev=$3 blocks cmd mrr=null load
	blocks=$((hidden / 5))
	cmd="$train -q --model_name RGCN --learned_only --layers 1 --gnn_hidden $hidden --hidden_dim $hidden --decomposition block --num_bases $blocks --dropout 0.2 --lr 0.01 --batch_size 30000 --neg_sample_size 1 --epochs $ep --seed 1 fb m$hidden"
	load=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f '%e %M %U' -o time.txt $cmd
	if [ "$ev" = 1 ]; then
		mrr=$("$bin/kg-eval" -q --threads 1 fb "m$hidden" |
		    jq '.metrics.both.mrr')
	fi
	read -r wall rss user <time.txt
	jq -n --arg cmd "$cmd" --argjson hidden "$hidden" --argjson epochs "$ep" \
	    --argjson wall "$wall" --argjson rss "$rss" --argjson user "$user" \
	    --argjson mrr "$mrr" --argjson load "$load" \
	    --slurpfile man "m$hidden/manifest.json" '{
		command: $cmd, hidden: $hidden, epochs: $epochs,
		seconds_per_epoch: $man[0].figures.seconds_per_epoch,
		wall_seconds: $wall, cpu_user_seconds: $user,
		peak_rss_gib: ($rss / 1048576), final_loss: $man[0].figures.final_loss,
		test_mrr_filtered: $mrr, load_average_before: $load }' >>"$runs"
}

run 100 "$epochs" 1
run 500 "$epochs500" 0

jq -s --arg nproc "$ncpu" --arg cpu "$(lscpu | sed -n 's/^Model name: *//p')" '{
	benchmark: "gnn", machine: { nproc: ($nproc | tonumber), cpu: $cpu },
	setting: "R-GCN, learned embeddings, 1 block-diagonal layer (5x5 blocks), DistMult, FB15k-237, full graph, batch 30000, 1 negative, lr 0.01, dropout 0.2, 1 thread",
	references_not_run_here: { rgcn_paper_filtered_mrr: 0.248,
	    pyg_hidden100_seconds_per_epoch: 21.5, pyg_hidden100_gib: 13.9,
	    pyg_hidden500: "out of memory" },
	runs: . }' "$runs" >"$out"
cat "$out"
