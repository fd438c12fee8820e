#!/usr/bin/env bash
# Benchmark of distributed GNN training on the enterprise example (not a
# test): the Ray paper's scheme (Sheikh et al.) at a scale that fits a
# 2-core machine.  The generated enterprise graph (build/aux/
# kg_gen_enterprise, KG_BENCH_NODES nodes, default 10000) goes through the
# enterprise pipeline's stages: kg-ingest, kg-encode-attrs (fit, one
# transform, merge), kg-partition (METIS, 2 and 4 parts), kg-expand (k = 2
# hops): without a fan-out cap, as pipelines/enterprise.mk ("full"), and
# with the cap KG_BENCH_FANOUT per hop (default 10,5: "capped", smaller
# parts whose halo is a sample).  Then for R-GCN and
# RelGNN (examples/configs/*_ray.json, attribute features, KG_BENCH_EPOCHS
# epochs, default 10, one OpenMP thread per process):
#   1 rank: plain kg-train on the whole graph (the baseline);
#   2 and 4 ranks: mpirun kg-train --expanded, on the full and on the
#   capped expansion (4 ranks oversubscribe the 2 cores, labelled so).
# For each: seconds per epoch (kg-train's own figure), wall and CPU
# seconds, the largest process's peak RSS, and kg-eval's filtered test MRR
# and AUC (50 negatives per positive).  Epoch times are also given as
# ratios to the 1-rank run of the same model in this invocation.  The
# replication factor and part sizes of each expansion are recorded.  Run from the
# repository root with bin/ and build/aux/ built; writes
# bench/results/gnn_dist.json.
set -eu
top=$(pwd)
bin=$top/bin
gen=$top/build/aux/kg_gen_enterprise
nodes=${KG_BENCH_NODES:-10000}
epochs=${KG_BENCH_EPOCHS:-10}
models=${KG_BENCH_MODELS:-RGCN RelGNN}
fanout=${KG_BENCH_FANOUT:-10,5}
work=$top/bench/work/gnn_dist.$$
out=$top/bench/results/gnn_dist.json
command -v jq >/dev/null || { echo "bench/gnn_dist.sh: needs jq" >&2; exit 1; }
command -v mpirun >/dev/null || { echo "bench/gnn_dist.sh: needs mpirun" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench/gnn_dist.sh: needs /usr/bin/time" >&2; exit 1; }
[ -x "$gen" ] || { echo "bench/gnn_dist.sh: build $gen first (make)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
ncpu=$(nproc --all)
mkdir -p "$work" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl
: >"$runs"

"$gen" -o data -n "$nodes" -s 1 2>gen.txt
d=data
"$bin/kg-ingest" -q -o ds --types $d/types.tsv --train $d/train.tsv \
    --valid $d/valid.tsv --test $d/test.tsv
"$bin/kg-encode-attrs" fit -q -d ds -s $d/schema.json -o am
"$bin/kg-encode-attrs" transform -q -j 1 -d ds -m am -o s0 --shard 0/1
"$bin/kg-encode-attrs" merge -q -m am -o feat s0
for p in 2 4; do
	"$bin/kg-partition" -q -p $p -m metis -s 1 -o p$p ds
	"$bin/kg-expand" -q -k 2 -s 1 -F feat -p p$p -o full$p ds
	"$bin/kg-expand" -q -k 2 -c "$fanout" -s 1 -F feat -p p$p -o capped$p ds
done

# metrics MODEL_DIR: "MRR AUC" on the test split.
metrics() {
	"$bin/kg-eval" -q --threads 1 --auc --auc-neg 50 ds "$1" |
	    jq -r '"\(.metrics.both.mrr) \(.auc)"'
}

# run MODEL RANKS [EXPANSION]
run() {
	local model=$1 ranks=$2 exp=${3:-none} cfg cmd label mrr auc load
	cfg=$top/examples/configs/$(echo "$model" | tr A-Z a-z)_ray.json
	cmd="$bin/kg-train -q --no_checkpoint --config $cfg --features feat --epochs $epochs --seed 1"
	label="$ranks rank(s)"
	if [ "$ranks" -gt 1 ]; then
		cmd="mpirun --oversubscribe -np $ranks $cmd --expanded $exp$ranks"
		[ "$ranks" -gt "$ncpu" ] &&
		    label="$label, oversubscribed on $ncpu cores"
	fi
	load=$(cut -d' ' -f1 /proc/loadavg)
	/usr/bin/time -f '%e %M %U %S' -o time.txt $cmd ds "m-$model-$ranks-$exp"
	read -r mrr auc < <(metrics "m-$model-$ranks-$exp")
	read -r wall rss user sys <time.txt
	jq -c -n --arg model "$model" --argjson ranks "$ranks" --arg exp "$exp" \
	    --arg lab "$label" --arg cmd "$cmd" --argjson wall "$wall" \
	    --argjson rss "$rss" --argjson user "$user" --argjson sys "$sys" \
	    --argjson mrr "$mrr" --argjson auc "$auc" --argjson load "$load" \
	    --slurpfile man "m-$model-$ranks-$exp/manifest.json" '{
		model: $model, ranks: $ranks, expansion: $exp, label: $lab,
		command: $cmd,
		seconds_per_epoch: $man[0].figures.seconds_per_epoch,
		wall_seconds: $wall, cpu_seconds: ($user + $sys),
		peak_rss_mib_largest_process: ($rss / 1024),
		peak_rss_kib_per_rank: $man[0].figures.peak_rss_kib_per_rank,
		test_mrr_filtered: $mrr, test_auc: $auc,
		load_average_before: $load }' >>"$runs"
}

for m in $models; do
	run "$m" 1
	for r in 2 4; do
		run "$m" "$r" full
		run "$m" "$r" capped
	done
done

jq -s --argjson nproc "$ncpu" --arg cpu "$(lscpu | sed -n 's/^Model name: *//p')" \
    --arg gen "$(cat gen.txt)" --argjson epochs "$epochs" \
    --arg fanout "$fanout" --slurpfile f2 full2/manifest.json \
    --slurpfile f4 full4/manifest.json --slurpfile c2 capped2/manifest.json \
    --slurpfile c4 capped4/manifest.json '
	. as $r | {
	benchmark: "gnn_dist",
	machine: { nproc: $nproc, cpu: $cpu },
	graph: $gen, epochs: $epochs,
	setting: "examples/configs/{rgcn,relgnn}_ray.json with attribute features; 1 rank = plain kg-train on the whole graph, P ranks = mpirun kg-train --expanded on METIS parts expanded by 2 hops (full: no cap; capped: kg-expand -c \($fanout)); one thread per process",
	expansions: [ (($f2[0], $f4[0]) | { expansion: "full" } + .),
	    (($c2[0], $c4[0]) | { expansion: "capped" } + .) |
	    { expansion, parts: .figures.nparts,
	      node_replication: .figures.node_replication,
	      edge_replication: .figures.edge_replication,
	      nodes_per_part: .figures.nodes_per_part,
	      core_triples_per_part: .figures.core_edges_per_part } ],
	runs: [ $r[] | . as $x | . + { epoch_time_vs_1_rank:
	    ($x.seconds_per_epoch / ([ $r[] | select(.model == $x.model and .ranks == 1) ][0].seconds_per_epoch)) } ],
	references_not_run_here: { ray_paper: "same AUC/MRR for 1..8 workers; 12x speed-up at 4 workers (RelGNN), 16x at 8 (R-GCN)" } }' "$runs" >"$out"
cat "$out"
