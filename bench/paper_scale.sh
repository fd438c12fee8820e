#!/usr/bin/env bash
# The Ray paper's workload at its size (not a test; issue 13): the
# generated enterprise graph at KG_BENCH_NODES nodes (default 2,800,000:
# about 23 million edges) through every stage, then R-GCN and RelGNN at
# the paper's setting (examples/configs/{rgcn,relgnn}_ray_paper.json:
# hidden 64, embedding 32, fan-outs 25,10 on blocks, an epoch of 256
# batches of 1024 positives: 256 steps on 1 rank, 128 per rank on 2, 64
# per rank on 4, shared negatives drawn inside each part and exchanged
# between the ranks, --neg_exchange) on 1, 2 and 4
# ranks (4 oversubscribe the 2 cores), KG_BENCH_EPOCHS epochs (default 3),
# once for each training seed in KG_BENCH_SEEDS (default "1 2"): at 3
# epochs two seeds of one rank differ by up to 0.008 in AUC and 0.01 in
# MRR (280k nodes, R-GCN: 0.9380 / 0.9296, 0.175 / 0.166), as much as the
# gaps between rank counts that the issue's targets bound, so "accuracy"
# gives the mean over the seeds for each model and rank count, with the
# spread.
#
# Stages: kg_gen_enterprise, kg-ingest, kg-encode-attrs (fit, 2 transform
# shards in parallel, merge), kg-partition (METIS, 2 and 4 parts),
# kg-expand (2 hops, per-hop caps KG_BENCH_CAPS, default 5,2: at 200k
# nodes 2 ranks trained from it lost no AUC or MRR, within the run-to-run
# noise, against the uncapped halo; the uncapped 2-part expansion is made
# too, for its replication only).
# Evaluation: kg-eval on the test split, ROC AUC (one negative per
# positive) and MRR against KG_BENCH_NEG sampled candidates per side
# (default 1000; filtered, realistic ties): ranking all 2.8 million
# entities for 1.2 million test triples is out of reach here.
#
# Every run is an object of "runs" in bench/results/paper_scale.json:
# model, ranks, replication, nodes_per_rank, edges_per_rank,
# seconds_per_epoch (kg-train's figure), wall_seconds (the whole run:
# loading, training, the final embedding, writing), peak_rss_kib_per_rank
# (rank 0's includes the final embedding of every node), auc, mrr,
# threads_per_rank (1 rank also runs on 1 thread for the models in
# KG_BENCH_ONE_THREAD, default RGCN: a reference that separates the
# threads' effect from the parts'),
# eval_protocol, mean_step_nodes (nodes a step encodes per level: the
# input, then each layer's output) and the load average before and after.
# The machine is shared: the load and `uptime` are recorded with each
# run, and "under_load" says when the load average passed 2.  The stages'
# times and the machine's measured GEMM rate and memory bandwidth (for
# the estimate of the limit per step) come with them.
#
# Work files go to KG_BENCH_WORK (default /work/tmp/paper_scale.PID; about
# 15 GB at 2.8M nodes), removed at the end.  Run from the repository
# root with bin/ and build/aux/ built, niced: nice bench/paper_scale.sh
set -eu
top=$(pwd)
bin=$top/bin
gen=$top/build/aux/kg_gen_enterprise
nodes=${KG_BENCH_NODES:-2800000}
epochs=${KG_BENCH_EPOCHS:-3}
models=${KG_BENCH_MODELS:-RGCN RelGNN}
seeds=${KG_BENCH_SEEDS:-1 2}
ranks_list=${KG_BENCH_RANKS:-1 2 4}
caps=${KG_BENCH_CAPS:-5,2}
neg=${KG_BENCH_NEG:-1000}
work=${KG_BENCH_WORK:-/work/tmp/paper_scale.$$}
out=${KG_BENCH_OUT:-$top/bench/results/paper_scale.json}
for c in jq mpirun python3 cc; do
	command -v $c >/dev/null ||
	    { echo "bench/paper_scale.sh: needs $c" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench/paper_scale.sh: needs /usr/bin/time" >&2; exit 1; }
[ -x "$gen" ] || { echo "bench/paper_scale.sh: build $gen first (make)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset OMP_NUM_THREADS
ncpu=$(nproc --all)
mkdir -p "$work" "$(dirname "$out")"
df -h "$work" >&2
avail=$(df -Pk "$work" | awk 'NR == 2 { print $4 }')
need=$((nodes / 1000 * 6 * 1024))	# about 6 KB per node, with room
if [ "$avail" -lt "$need" ]; then
	echo "bench/paper_scale.sh: $work has $((avail / 1024)) MB free, needs about $((need / 1024)) MB" >&2
	exit 1
fi
trap 'rm -rf "$work"' EXIT
cd "$work"
runs=$work/runs.jsonl stages=$work/stages.jsonl
: >"$runs"
: >"$stages"
load() { cut -d' ' -f1 /proc/loadavg; }

# stage NAME COMMAND...: run it, record its wall time and peak RSS.
stage() {
	local name=$1 l0
	shift
	l0=$(load)
	echo "paper_scale: $name" >&2
	/usr/bin/time -f '%e %M' -o stage.txt "$@"
	read -r wall rss <stage.txt
	jq -c -n --arg s "$name" --argjson w "$wall" --argjson r "$rss" \
	    --argjson l0 "$l0" --argjson l1 "$(load)" \
	    '{stage: $s, wall_seconds: $w, peak_rss_kib: $r, load_before: $l0,
	      load_after: $l1}' >>"$stages"
}

# The machine: sgemm at the step's shapes, streaming bandwidth, and the
# rate of gathering random 64-float rows (the messages' reads).
machine() {
	cat >probe.c <<'EOF'
#include <cblas.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void) {
	size_t m = 200000, k = 64, n = 64, i, rows = 4000000, d = 64, g = 20000000;
	float *a = malloc(m * k * 4), *b = malloc(k * n * 4), *c = malloc(m * n * 4);
	float *x = malloc(rows * d * 4), *y = malloc(rows * d * 4), *acc = calloc(d, 4);
	double t, gf1, gfn, bw, gr;
	int rep;
	for (i = 0; i < m * k; i++) a[i] = (float)(i % 7);
	for (i = 0; i < k * n; i++) b[i] = (float)(i % 5);
	openblas_set_num_threads(1);
	t = now();
	for (rep = 0; rep < 5; rep++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, k, b, n, 0, c, n);
	gf1 = 5 * 2.0 * m * n * k / (now() - t) / 1e9;
	openblas_set_num_threads(omp_get_num_procs());
	t = now();
	for (rep = 0; rep < 5; rep++)
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1, a, k, b, n, 0, c, n);
	gfn = 5 * 2.0 * m * n * k / (now() - t) / 1e9;
	for (i = 0; i < rows * d; i++) x[i] = 1.0f, y[i] = 2.0f;
	t = now();
	for (rep = 0; rep < 3; rep++) {
#pragma omp parallel for
		for (long j = 0; j < (long)(rows * d); j++) y[j] += 1.5f * x[j];
	}
	bw = 3 * 3.0 * 4 * rows * d / (now() - t) / 1e9;
	unsigned long long z = 7;
	t = now();
	for (i = 0; i < g; i++) {
		z = z * 6364136223846793005ULL + 1442695040888963407ULL;
		const float *r = x + (size_t)((z >> 33) % rows) * d;
		for (size_t q = 0; q < d; q++) acc[q] += r[q];
	}
	gr = g / (now() - t) / 1e6;
	printf("{\"sgemm_gflops_1_thread\": %.1f, \"sgemm_gflops_all\": %.1f, "
	    "\"stream_triad_gb_s\": %.1f, \"random_row_gathers_m_per_s\": %.1f, "
	    "\"sgemm_shape\": \"200000 x 64 x 64\", \"gather_rows\": \"64 floats of a 1 GB table\", \"check\": %g}\n",
	    gf1, gfn, bw, gr, (double)(acc[0] + c[1] + y[2]) > 0 ? 1.0 : 0.0);
	return 0;
}
EOF
	cc -O2 -fopenmp -o probe probe.c -lopenblas 2>/dev/null &&
	    ./probe || echo '{}'
}

uptime_start=$(uptime)
mach=$(machine)
stage generate "$gen" -o data -n "$nodes" -s 1 2>gen.txt
d=data
stage ingest "$bin/kg-ingest" -q -o ds --types $d/types.tsv \
    --train $d/train.tsv --valid $d/valid.tsv --test $d/test.tsv
stage encode_fit "$bin/kg-encode-attrs" fit -q -d ds -s $d/schema.json -o am
stage encode_transform bash -c "
	'$bin/kg-encode-attrs' transform -q -j 1 -d ds -m am -o s0 --shard 0/2 &
	a=\$!
	'$bin/kg-encode-attrs' transform -q -j 1 -d ds -m am -o s1 --shard 1/2 &
	b=\$!
	wait \$a && wait \$b"
stage encode_merge "$bin/kg-encode-attrs" merge -q -m am -o feat s0 s1
rm -rf s0 s1
for p in 2 4; do
	case " $ranks_list " in *" $p "*) ;; *) continue ;; esac
	stage "partition_$p" "$bin/kg-partition" -q -p $p -m metis -s 1 \
	    -o p$p ds
	stage "expand_$p" "$bin/kg-expand" -q -k 2 -c "$caps" -s 1 -F feat \
	    -p p$p -o x$p ds
done
# The uncapped 2-part expansion, for its replication (no features).
uncapped='null'
if [ -d p2 ]; then
	stage expand_2_uncapped "$bin/kg-expand" -q -k 2 -s 1 -p p2 -o u2 ds
	uncapped=$(jq -c '.figures | {node_replication, edge_replication,
	    nodes_per_part, edges_per_part}' u2/manifest.json)
	rm -rf u2
fi
n_ent=$(jq '.figures.entities // .figures.n_entities // empty' ds/manifest.json)
n_train=$(python3 - ds/train.npy <<'PY'
import ast, struct, sys
b = open(sys.argv[1], "rb").read(4096)
hl = struct.unpack("<H", b[8:10])[0]
print(ast.literal_eval(b[10:10 + hl].decode())["shape"][0])
PY
)
[ -n "$n_ent" ] || n_ent=$(wc -l <ds/entities.tsv)

# run MODEL RANKS SEED [THREADS]: THREADS OpenMP threads per rank
# (default: the cores shared out among the ranks).
run() {
	local model=$1 ranks=$2 seed=$3 threads=${4:-} cfg cmd mdir l0 l1 up ev
	local part
	cfg=$top/examples/configs/$(echo "$model" | tr A-Z a-z)_ray_paper.json
	mdir=m-$model-$ranks-s$seed${threads:+-t$threads}
	cmd="$bin/kg-train -q --no_checkpoint --config $cfg --features feat --epochs $epochs --seed $seed${threads:+ --num_thread $threads}"
	if [ "$ranks" -gt 1 ]; then
		cmd="mpirun --oversubscribe -np $ranks $cmd --expanded x$ranks"
		part=x$ranks/manifest.json
	else
		part=
	fi
	l0=$(load)
	echo "paper_scale: $model on $ranks rank(s), seed $seed" >&2
	/usr/bin/time -f '%e' -o time.txt $cmd ds "$mdir"
	l1=$(load)
	up=$(uptime)
	"$bin/kg-eval" -q --auc --neg-sample "$neg" --split test ds "$mdir" \
	    >"$mdir.eval.json"
	ev=$mdir.eval.json
	jq -c -n --arg model "$model" --argjson ranks "$ranks" \
	    --argjson seed "$seed" \
	    --argjson wall "$(cat time.txt)" --argjson l0 "$l0" \
	    --argjson l1 "$l1" --arg up "$up" --argjson ncpu "$ncpu" \
	    --argjson threads "${threads:-null}" \
	    --argjson n "$n_ent" --argjson m "$n_train" \
	    --slurpfile man "$mdir/manifest.json" --slurpfile ev "$ev" \
	    --slurpfile part "${part:-/dev/null}" '
	    ($man[0].figures) as $f | ($part[0].figures // null) as $p |
	    {model: $model, ranks: $ranks, seed: $seed,
	     threads_per_rank: ($threads // ([1, ($ncpu / $ranks | floor)] |
	         max)),
	     oversubscribed: ($ranks > $ncpu),
	     replication: (if $p then $p.node_replication else 1 end),
	     edge_replication: (if $p then $p.edge_replication else 1 end),
	     nodes_per_rank: (if $p then $p.nodes_per_part else [$n] end),
	     edges_per_rank: (if $p then $p.edges_per_part else [$m] end),
	     seconds_per_epoch: $f.seconds_per_epoch, wall_seconds: $wall,
	     steps: $f.steps,
	     peak_rss_kib_per_rank: ([$f.peak_rss_kib] +
	         $f.peak_rss_kib_per_rank[1:]),
	     peak_rss_kib_per_rank_training: $f.peak_rss_kib_per_rank,
	     auc: $ev[0].auc, mrr: $ev[0].metrics.both.mrr,
	     eval_protocol: ("test split, \($ev[0].n_triples) triples; AUC: "
	         + "\($ev[0].auc_negatives_per_positive) uniform negative per "
	         + "positive; MRR: both sides against \($ev[0].negatives) "
	         + "sampled \($ev[0].neg_mode) candidates, \($ev[0].setting), "
	         + "\($ev[0].ties) ties"),
	     mean_step_nodes: $f.mean_step_nodes,
	     mean_step_messages: $f.mean_step_messages,
	     mean_step_seconds: $f.mean_step_seconds,
	     load_before: $l0, load_after: $l1, uptime_after: $up,
	     under_load: ($l0 > 2 or $l1 > 2)}' >>"$runs"
	rm -rf "$mdir"
}

first_seed=${seeds%% *}
for model in $models; do
	for r in $ranks_list; do
		for s in $seeds; do
			run "$model" "$r" "$s"
		done
	done
	# One rank on one core: what the threads of one rank give, apart
	# from what smaller parts give (KG_BENCH_ONE_THREAD models).
	case " ${KG_BENCH_ONE_THREAD-RGCN} " in
	*" $model "*) [ "$ncpu" -gt 1 ] && run "$model" 1 "$first_seed" 1 ;;
	esac
done

jq -n --arg nodes "$nodes" --argjson epochs "$epochs" --arg caps "$caps" \
    --arg graph "$(tail -1 gen.txt)" --argjson mach "$mach" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" \
    --argjson ncpu "$ncpu" --arg up0 "$uptime_start" --arg up1 "$(uptime)" \
    --argjson uncapped "$uncapped" \
    --slurpfile runs "$runs" --slurpfile stages "$stages" '
    {benchmark: "paper_scale",
     machine: ({nproc: $ncpu, cpu: $cpu} + $mach),
     graph: $graph, epochs: $epochs,
     setting: "examples/configs/{rgcn,relgnn}_ray_paper.json with attribute features: hidden 64, embedding 32, fan-outs 25,10 on blocks, 256 batches of 1024 per epoch (each of R ranks 256 / R steps), 8 negatives shared by chunks of 128 positives, drawn from the seeds of the parts and exchanged between the ranks (--neg_exchange); 1 rank: the whole graph; R ranks: METIS parts expanded 2 hops with kg-expand -c \($caps); OpenMP threads: the cores shared out among the ranks",
     expansion_uncapped_2: $uncapped,
     stages: $stages, runs: $runs,
     accuracy: ([$runs[] | select(.threads_per_rank ==
         ([1, ($ncpu / .ranks | floor)] | max))] |
         group_by([.model, .ranks]) | map({model: .[0].model,
         ranks: .[0].ranks, seeds: [.[].seed],
         auc_mean: ([.[].auc] | add / length),
         auc_spread: ([.[].auc] | max - min),
         mrr_mean: ([.[].mrr] | add / length),
         mrr_spread: ([.[].mrr] | max - min),
         seconds_per_epoch_mean: ([.[].seconds_per_epoch] | add / length)})),
     uptime_start: $up0, uptime_end: $up1}' >"$out"
echo "paper_scale: wrote $out" >&2
