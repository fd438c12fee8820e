#!/usr/bin/env bash
# The fixed set of runs whose outputs a refactoring must leave byte for
# byte unchanged.  Run it with the tools of two builds and compare:
#
#   tests/identity.sh BIN_DIR AUX_DIR OUT_DIR     # writes OUT_DIR/*
#   tests/identity.sh --compare OUT_A OUT_B        # cmp of every array
#
# The set: ingest, partition (random and METIS), expand, encode-attrs;
# shallow training (ComplEx, TransE, RESCAL) on 1 thread, and on 2
# (Hogwild: its MRR to 2 places, within 0.05); bucket
# training on 2 ranks; SSGD on 2 ranks; GNN training (R-GCN full graph,
# RelGNN with fan-outs, R-GCN on 2 ranks of expanded parts); kg-eval of
# a shallow and a GNN model, single process and on 2 ranks.  Manifests
# hold times and paths, so only the .npy arrays, the dictionaries and
# the metrics (without timings) are compared.
set -euo pipefail
if [ "${1:-}" = "--compare" ]; then
	a=$2 b=$3 n=0 bad=0
	while IFS= read -r f; do
		n=$((n + 1))
		if ! cmp -s "$a/$f" "$b/$f"; then
			echo "differs: $f"; bad=$((bad + 1))
		fi
	done < <(cd "$a" && find . -type f \( -name '*.npy' -o -name '*.tsv' \
	    -o -name '*.metrics' \) -not -path './hogwild*' | sort)
	# Hogwild's MRR may move a little between runs.
	if ! awk -v x="$(cat "$a/hogwild.metrics")" -v y="$(cat "$b/hogwild.metrics")" \
	    'BEGIN { d = x - y; exit !(d < 0.06 && d > -0.06) }'; then
		echo "differs: hogwild MRR by more than 0.05"; bad=$((bad + 1))
	fi
	[ -f "$a/files" ] && ! cmp -s "$a/files" "$b/files" &&
	    { echo "differs: the list of files"; bad=$((bad + 1)); }
	echo "$n files compared, $bad differ"
	[ "$bad" -eq 0 ]
	exit
fi
bin=$(cd "$1" && pwd) aux=$(cd "$2" && pwd)
mkdir -p "$3"; out=$(cd "$3" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OPENBLAS_NUM_THREADS=1
export OMP_WAIT_POLICY=passive LC_ALL=C
cd "$out"
rm -rf ./*
U=$top/examples/data/umls
mpi="mpirun --oversubscribe"
# kg-eval's JSON without the fields that hold times.
metrics() {
	python3 -c 'import json, sys
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items()
                if "second" not in k and "time" not in k}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
print(json.dumps(strip(json.load(sys.stdin)), sort_keys=True))'
}

"$bin/kg-ingest" -q -o umls --train "$U/train.txt.gz" \
    --valid "$U/valid.txt.gz" --test "$U/test.txt.gz"
"$bin/kg-partition" -q -m random -p 4 -s 3 -o umls-p4 umls
"$bin/kg-partition" -q -m metis -p 2 -s 3 -o umls-m2 umls
"$bin/kg-expand" -q -k 2 -s 1 -p umls-m2 -o umls-x2 umls

tr="--model_name ComplEx --hidden_dim 32 --epochs 3 --batch_size 256 --neg_sample_size 32 --lr 0.1 --seed 5 -q --no_checkpoint"
"$bin/kg-train" $tr --num_thread 1 umls complex-t1
# Two Hogwild threads are not deterministic: only its metrics are kept,
# rounded to 2 places.
"$bin/kg-train" $tr --num_thread 2 umls hogwild
"$bin/kg-eval" -q umls hogwild | python3 -c 'import json, sys
print(round(json.load(sys.stdin)["metrics"]["both"]["mrr"], 2))' >hogwild.metrics
"$bin/kg-train" --model_name TransE_l2 --hidden_dim 24 --epochs 2 \
    --neg_sampler mixed --seed 2 -q --num_thread 1 umls transe
"$bin/kg-train" --model_name RESCAL --hidden_dim 16 --epochs 2 \
    --reciprocal --loss softmax --regularization_coef 1e-3 \
    --regularization_norm 3 --seed 2 -q --num_thread 1 umls rescal
$mpi -np 2 "$bin/kg-train" $tr --num_thread 1 --partitions umls-p4 \
    umls buckets
$mpi -np 2 "$bin/kg-train" $tr --num_thread 1 --dist ssgd umls ssgd
"$bin/kg-eval" -q umls complex-t1 | metrics >complex-t1.metrics
$mpi -np 2 "$bin/kg-eval" -q umls complex-t1 | metrics >complex-t1-np2.metrics
"$bin/kg-eval" -q umls buckets | metrics >buckets.metrics

"$aux/kg_gen_enterprise" -o ent -n 300 -s 1 2>/dev/null
E=ent
"$bin/kg-ingest" -q -o ent-ds --types $E/types.tsv --train $E/train.tsv \
    --valid $E/valid.tsv --test $E/test.tsv
"$bin/kg-encode-attrs" fit -q -d ent-ds -s $E/schema.json -o ent-am
"$bin/kg-encode-attrs" transform -q -j 1 -d ent-ds -m ent-am -o ent-s0 \
    --shard 0/2
"$bin/kg-encode-attrs" transform -q -j 1 -d ent-ds -m ent-am -o ent-s1 \
    --shard 1/2
"$bin/kg-encode-attrs" merge -q -m ent-am -o ent-feat ent-s0 ent-s1
"$bin/kg-partition" -q -p 2 -m metis -s 1 -o ent-p2 ent-ds
"$bin/kg-expand" -q -k 2 -s 1 -F ent-feat -p ent-p2 -o ent-x2 ent-ds
g="-q --features ent-feat --epochs 4 --batch_size 256 --lr 0.01 --dropout 0.2 --gnn_hidden 16 --hidden_dim 16 --no_checkpoint"
"$bin/kg-train" $g --model_name RGCN --num_thread 2 ent-ds rgcn
"$bin/kg-train" $g --model_name RelGNN --fanout 5,5 --num_thread 1 \
    ent-ds relgnn-fan
"$bin/kg-train" $g --model_name RGCN --fanout 4,3 --edge_dropout 0.2 \
    --num_thread 1 ent-ds rgcn-fan
$mpi -np 2 "$bin/kg-train" $g --model_name RGCN --expanded ent-x2 \
    --num_thread 1 ent-ds rgcn-np2
"$bin/kg-eval" -q --auc ent-ds rgcn | metrics >rgcn.metrics
$mpi -np 2 "$bin/kg-eval" -q --auc ent-ds rgcn-np2 | metrics >rgcn-np2.metrics
find . -type f | grep -v -e manifest.json -e train_log -e '\.log$' \
    -e '^./files$' -e '^./hogwild/' | sort >../files.$$
mv ../files.$$ files
echo "identity set written to $out ($(wc -l <files) files)"
