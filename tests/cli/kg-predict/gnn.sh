#!/usr/bin/env bash
# A GNN model directory (R-GCN and RelGNN trained on the generated
# enterprise graph) holds entities.npy computed by its encoder:
# kg-predict ranks with it like a shallow model, checked against a brute
# force ranking of the decoder over those arrays; kg-eval's table names
# the encoder; kg-export exports the encoder's output.
source "$KG_TOP/tests/cli/lib.sh"
plan 14
here=$KG_TOP/tests/cli/kg-predict

py=$(numpy_python)
[ -n "$py" ] || skip_all "kg-predict gnn: no python3 with numpy"
"$KG_BUILD/aux/kg_gen_enterprise" -o ent -n 300 -s 1 2>/dev/null ||
    { notok "generate"; exit 0; }
kg-ingest -q -o ds --train ent/train.tsv --valid ent/valid.tsv \
    --test ent/test.tsv || { notok "ingest"; exit 0; }
g="-q --learned_only --epochs 2 --batch_size 256 --hidden_dim 16 --gnn_hidden 16 --no_checkpoint --num_thread 1"
kg-train $g --model_name RGCN ds rgcn || { notok "train R-GCN"; exit 0; }
kg-train $g --model_name RelGNN --decoder TransE_l2 --gamma 4 ds relgnn ||
    { notok "train RelGNN"; exit 0; }
check "R-GCN model dir has encoder weights" test -f rgcn/gnn_weights.npy
"$py" "$here/brute.py" queries ds 30 5 q.tsv

for spec in "rgcn DistMult 12" "relgnn TransE_l2 4"; do
	set -- $spec
	kg-predict -q -k 5 --format json ds "$1" q.tsv >raw.json &&
	    kg-predict -q -k 5 --format json --filter ds "$1" q.tsv >filt.json
	check "$1: exit 0" test $? -eq 0
	"$py" "$here/brute.py" check "$2" "$3" ds "$1" q.tsv raw.json \
	    filt.json 5
done

kg-eval ds rgcn 2>table.txt >/dev/null
check "kg-eval heading names the encoder" \
    grep -q '^kg-eval: R-GCN + DistMult, test split' table.txt
kg-eval ds relgnn 2>table.txt >/dev/null
check "kg-eval heading: RelGNN + TransE_l2" \
    grep -q '^kg-eval: RelGNN + TransE_l2, test split' table.txt
kg-export --format tsv -o emb.tsv ds rgcn
"$py" - emb.tsv rgcn/entities.npy ds/entities.tsv <<'PY'
import sys
import numpy as np
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
E = np.load(sys.argv[2])
names = [l.rstrip("\n").split("\t")[1] for l in open(sys.argv[3])]
ok = [r[0] for r in rows] == names and np.array_equal(
    np.array([[float(x) for x in r[1:]] for r in rows], dtype=np.float32), E)
print(("ok - " if ok else "not ok - ") + "export of a GNN model: the encoder's entities.npy")
PY
