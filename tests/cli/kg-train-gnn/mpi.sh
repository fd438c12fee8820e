# Synchronous data-parallel GNN training under mpirun (the Ray paper's
# scheme) through kg-train: a one-part expansion equals the whole graph, 2 and 4 ranks
# on expanded parts of the enterprise graph reach the 1-rank AUC and MRR
# (within 0.02, several standard errors; see below), and a rank count
# that does not match the parts fails quickly with a message.
source "$KG_TOP/tests/cli/lib.sh"
plan 5

TRAIN=$KG_BIN/kg-train
GEN=$KG_BUILD/aux/kg_gen_enterprise
if ! command -v mpirun >/dev/null || ! command -v python3 >/dev/null; then
	skip_all "gnn mpi: mpirun or python3 is not installed"
fi
if [ ! -x "$GEN" ]; then
	skip_all "gnn mpi: kg_gen_enterprise is not built"
fi
MPI="timeout 300 mpirun --oversubscribe"
enterprise_fixture 300 2 1 ||
    { notok "gnn mpi: pipeline up to kg-expand"; exit 1; }

args="-q --model_name RGCN --features feat --epochs 30 --batch_size 256 --lr 0.01 --dropout 0.2 --gnn_hidden 32 --hidden_dim 32"

"$TRAIN" $args ds plain 2>err || notok "gnn mpi: plain run: $(cat err)"
# (No "one rank under mpirun equals the plain process": every collective
# returns early at one rank, so both sides would run the same code.)
"$TRAIN" $args ds part1 --expanded x1 2>err || notok "gnn mpi: 1 part: $(cat err)"
if cmp -s plain/entities.npy part1/entities.npy &&
    cmp -s plain/gnn_weights.npy part1/gnn_weights.npy; then
	ok "gnn mpi: a one-part expansion trains as the whole graph"
else
	notok "gnn mpi: a one-part expansion differs from the whole graph"
fi

# Accuracy of 2 and 4 ranks against 1.  Training is seeded, so a run's
# metrics vary with the seed (and with the CPU: OpenBLAS picks its kernels
# per CPU, so trajectories differ between machines).  Measured here: at
# 300 nodes (about 100 evaluation triples) over 24 seeds the MRR's
# seed-to-seed SD is 0.042 for 1 and 2 ranks alike and the 2-rank mean
# lies +0.006 +- 0.012 from the 1-rank mean: the gap two seeds once
# showed (0.403 against 0.368) was noise, and a 0.02 tolerance was half
# a standard error.  At 1000 nodes (about 340 evaluation triples) over 12
# seeds the SDs are 0.011 (MRR) and 0.003 (AUC), 2 ranks lie -0.001 +-
# 0.005 (MRR) and +0.002 +- 0.001 (AUC) from 1 rank, 4 ranks +0.001 +-
# 0.004 and -0.001 +- 0.001.  A run with 1 rank and one with R ranks
# from the same seed start from the same weights, and the SD of their
# difference is 0.010 (MRR) and 0.004 (AUC) for 2 ranks, 0.011 and 0.004
# for 4.  So the comparison runs at 1000 nodes, seed by seed: 3 seeds put
# the 0.02 tolerance at 3.5 standard errors of the mean MRR difference
# for 2 ranks (9 for the AUC), 2 seeds at 2.6 (6.6) for 4 ranks, which
# cost the most here (each rank's 2-hop part is the whole graph).
mkdir big
"$GEN" -o big/data -n 1000 -s 1 2>/dev/null
B=big/data
kg-ingest -q -o bds --types $B/types.tsv --train $B/train.tsv \
    --valid $B/valid.tsv --test $B/test.tsv &&
kg-encode-attrs fit -q -d bds -s $B/schema.json -o bam &&
kg-encode-attrs transform -q -j 1 -d bds -m bam -o bs0 --shard 0/1 &&
kg-encode-attrs merge -q -m bam -o bfeat bs0 &&
kg-partition -q -p 2 -m metis -s 1 -o bp2 bds &&
kg-partition -q -p 4 -m metis -s 1 -o bp4 bds &&
kg-expand -q -k 2 -s 1 -F bfeat -p bp2 -o bx2 bds &&
kg-expand -q -k 2 -s 1 -F bfeat -p bp4 -o bx4 bds ||
    { notok "gnn mpi: pipeline of the 1000-node graph"; exit 1; }
bargs="-q --model_name RGCN --features bfeat --epochs 30 --batch_size 256 --lr 0.01 --dropout 0.2 --gnn_hidden 32 --hidden_dim 32"

# AUC (50 negatives per positive) and MRR (both sides, realistic ties,
# filtered) of model dir $2 of dataset $1, over the valid and test splits.
metrics() {
	for sp in valid test; do
		kg-eval -q --auc --auc-neg 50 --split $sp "$1" "$2"
	done | python3 -c 'import json, sys
t = sys.stdin.read().replace("}\n{", "}\x00{").split("\x00")
d = [json.loads(x) for x in t]
print(sum(x["auc"] for x in d) / 2, sum(x["metrics"]["both"]["mrr"] for x in d) / 2)'
}
# One rank, seed $1, into m1-$1.txt (the single processes run two at a
# time: each uses one core).
one_rank() {
	"$TRAIN" $bargs --num_thread 1 --seed $1 bds r1s$1 2>err1-$1 &&
	    metrics bds r1s$1 >m1-$1.txt ||
	    notok "gnn mpi: 1 rank, seed $1: $(cat err1-$1)"
}
one_rank 1 & one_rank 2 & wait
one_rank 3
for s in 1 2 3; do
	$MPI -np 2 "$TRAIN" $bargs --seed $s --expanded bx2 bds r2s$s 2>err &&
	    metrics bds r2s$s >m2-$s.txt ||
	    notok "gnn mpi: 2 ranks, seed $s: $(cat err)"
done
for s in 1 2; do
	$MPI -np 4 "$TRAIN" $bargs --seed $s --expanded bx4 bds r4s$s 2>err &&
	    metrics bds r4s$s >m4-$s.txt ||
	    notok "gnn mpi: 4 ranks, seed $s: $(cat err)"
done
for p in two:2:3 four:4:2; do
	set -- ${p//:/ }
	if python3 - $2 $3 <<'PY'
import math, sys

r, k = sys.argv[1], int(sys.argv[2])

def read(path):
    with open(path) as f:
        return [float(x) for x in f.read().split()]

one = [read("m1-%d.txt" % s) for s in range(1, k + 1)]
many = [read("m%s-%d.txt" % (r, s)) for s in range(1, k + 1)]
good = True
for i, name in enumerate(("AUC", "MRR")):
    d = [b[i] - a[i] for a, b in zip(one, many)]
    m = sum(d) / k
    se = math.sqrt(sum((x - m) ** 2 for x in d) / (k - 1) / k)
    print("%s: 1 rank %.4f, %s ranks %.4f, difference %+.4f +- %.4f "
          "(%d seeds)" % (name, sum(a[i] for a in one) / k, r,
                          sum(b[i] for b in many) / k, m, se, k))
    good = good and m >= -0.02
sys.exit(not good)
PY
	then ok "gnn mpi: $1 ranks reach the 1-rank AUC and MRR within 0.02"
	else notok "gnn mpi: $1 ranks fall short of the 1-rank AUC or MRR"; fi
done

# Mini-batches with neighbour sampling inside each rank's part, RelGNN.
$MPI -np 2 "$TRAIN" $args --encoder RelGNN --fanout 5,5 --epochs 10 \
    --expanded x2 ds mini 2>err || notok "gnn mpi: mini-batch run: $(cat err)"
a=$(metrics ds mini | cut -d' ' -f1)
if python3 -c 'import sys; sys.exit(not float(sys.argv[1]) > 0.8)' "$a"; then
	ok "gnn mpi: 2 ranks, RelGNN, fan-outs 5,5: AUC $a"
else
	notok "gnn mpi: 2 ranks, RelGNN, fan-outs 5,5: AUC $a"
fi

expect_fail "gnn mpi: ranks must match the parts" 1 "one rank per part" \
    $MPI -np 3 "$TRAIN" $args --expanded x2 ds bad
if [ -e bad ]; then notok "gnn mpi: failed run left output"; fi
