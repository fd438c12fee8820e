# GNN warm starts (kg-train --model_name RGCN|RelGNN --init_from MODEL):
# --epochs 0 onto the model's own dataset reproduces its entity rows,
# encoder weights and relations bit for bit; onto an extended dataset
# (kg-ingest --extend) old rows change only where new entities reach them
# within the encoder's hops, new entities get finite rows from the
# encoder (inductive), the weights stay the model's; --epochs N trains
# on from the model's parameters, and a warm-started run resumed mid-way
# ends where an uninterrupted one does; models of another shape are
# refused with one line, exit 1, nothing written.
source "$KG_TOP/tests/cli/lib.sh"
plan 25
if ! command -v python3 >/dev/null; then
	skip_all "gnn warm start: python3 is not installed"
fi
if [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ]; then
	skip_all "gnn warm start: kg_gen_enterprise is not built"
fi
D=ent
"$KG_BUILD/aux/kg_gen_enterprise" -o $D -n 300 -s 1 2>/dev/null
# Yesterday: every triple but those of the persons whose number ends in
# 7; today: all of them.  (Leaving out persons keeps every attribute's
# vocabulary, so both feature directories have the same widths.)
for s in train valid test; do
	grep -v -P 'person:\d*7(\t|$)' $D/$s.tsv >old_$s.tsv
done
feats() {	# feats DATASET SCHEMA OUT
	kg-encode-attrs fit -q --max-errors 100000 -d "$1" -s "$2" \
	    -o "$3.am" 2>/dev/null &&
	kg-encode-attrs transform -q -j 1 --max-errors 100000 -d "$1" \
	    -m "$3.am" -o "$3.s0" --shard 0/1 2>/dev/null &&
	kg-encode-attrs merge -q -m "$3.am" -o "$3" "$3.s0"
}
kg-ingest -q -o old --train old_train.tsv --valid old_valid.tsv \
    --test old_test.tsv &&
kg-ingest -q --extend old -o new --train $D/train.tsv --valid $D/valid.tsv \
    --test $D/test.tsv &&
feats old $D/schema.json old.feat && feats new $D/schema.json new.feat ||
    { notok "gnn warm start: datasets and features"; exit 0; }
ne=$(wc -l <old/entities.tsv)

# npy.py: the arrays of .npy files without numpy.
cat >npy.py <<'PY'
import ast, struct
def load(path):
    b = open(path, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode("latin1"))
    shape = h["shape"]
    cols = shape[1] if len(shape) > 1 else 1
    code = {"<f4": "f", "<i4": "i", "<i8": "q"}[h["descr"]]
    x = struct.unpack("<%d%s" % (shape[0] * cols, code), b[10 + hl:])
    return [x[i * cols:(i + 1) * cols] for i in range(shape[0])]
def names(d):
    return [l.rstrip("\n").split("\t")[1] for l in open(d + "/entities.tsv")]
PY
# near.py OLD NEW MODEL OUT HOPS: in OUT (NEW's model from MODEL, OLD's),
# each old entity more than HOPS hops from every new entity (NEW's train
# graph) has MODEL's row bit for bit, some nearer one another row, and
# each new entity a finite, nonzero row.
cat >near.py <<'PY'
import math, sys
from npy import load, names
old, new, m, w, hops = sys.argv[1:6]
on, nn = names(old), names(new)
row_of = {n: i for i, n in enumerate(on)}
me, we = load(m + "/entities.npy"), load(w + "/entities.npy")
adj = {}
for h, r, t in load(new + "/train.npy"):
    adj.setdefault(h, set()).add(t)
    adj.setdefault(t, set()).add(h)
near = set(i for i, n in enumerate(nn) if n not in row_of)
for _ in range(int(hops)):
    near |= set(j for i in near for j in adj.get(i, ()))
same = changed = bad = 0
for i, n in enumerate(nn):
    if n not in row_of:
        bad += not all(math.isfinite(v) for v in we[i]) or not any(we[i])
    elif i in near:
        changed += we[i] != me[row_of[n]]
    elif we[i] == me[row_of[n]]:
        same += 1
    else:
        bad += 1
sys.exit(1 if bad or not changed or not same else 0)
PY
# same_weights A B N D0 NA NB: gnn_weights.npy A (NA learned rows of D0
# floats) and B (NB) hold the same first N learned rows and the same
# floats after their learned tables.
same_weights() {
	python3 - "$@" <<'PY'
import sys
from npy import load
a, b = load(sys.argv[1]), load(sys.argv[2])
n, d0, na, nb = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
a = [x[0] for x in a]; b = [x[0] for x in b]
sys.exit(0 if a[:n * d0] == b[:n * d0] and a[na * d0:] == b[nb * d0:] and
    len(a) - na * d0 == len(b) - nb * d0 else 1)
PY
}

g="--model_name RGCN --gnn_hidden 16 --hidden_dim 16 --seed 3"
t="kg-train -q $g --batch_size 256 --lr 0.01 --dropout 0.2"
$t --epochs 5 --features old.feat old m && $t --epochs 5 old ml ||
    { notok "gnn warm start: yesterday's models"; exit 0; }

# Onto the model's own dataset: the same rows, weights and relations.
kg-train $g --epochs 0 --init_from m --features old.feat old s 2>s.err
check "--epochs 0 onto the same dataset: entity rows bit for bit" \
    cmp -s m/entities.npy s/entities.npy
check "--epochs 0 onto the same dataset: encoder weights bit for bit" \
    cmp -s m/gnn_weights.npy s/gnn_weights.npy
check "--epochs 0 onto the same dataset: relations bit for bit" \
    cmp -s m/relations.npy s/relations.npy
check "the warm start says its counts and that nothing trained" grep -Eq \
    "^kg-train: warm start from 'm': entities $ne matched, 0 added .* 0 dropped; relations 5 matched, 0 added .*not trained" s.err

# Onto today's dataset with features: new entities from their attributes
# and edges, the model's weights kept (old learned rows, attribute
# matrices, layers).
kg-train -q $g --epochs 0 --init_from m --features new.feat new x 2>x.err
check "--epochs 0 onto the extended dataset writes every entity" python3 -c '
import math, sys
from npy import load
e = load("x/entities.npy")
sys.exit(not (len(e) == 300 and all(math.isfinite(v) for r in e for v in r)))'
check "the extended model keeps the model's weights" \
    same_weights m/gnn_weights.npy x/gnn_weights.npy "$ne" 16 "$ne" 300
check "config.init_from records the counts" python3 -c '
import json, sys
c = json.load(open("x/manifest.json"))["config"]["init_from"]
sys.exit(not (c["path"] == "m" and c["entities"]["added"] == 300 - int(sys.argv[1])
    and c["entities"]["matched"] == int(sys.argv[1]) and c["optimizer_state"] == "none"))' "$ne"

# Learned rows only: the old rows change only within two hops of a new
# entity (the two layers), the new ones come from fresh learned rows
# and their edges.
kg-train -q $g --epochs 0 --init_from ml old ls
check "learned rows only, the same dataset: entity rows bit for bit" \
    cmp -s ml/entities.npy ls/entities.npy
kg-train -q $g --epochs 0 --init_from ml new lx
check "learned rows only, extended: old rows change only near new entities" \
    python3 near.py old new ml lx 2

# Block-diagonal R-GCN and RelGNN: the same dataset, the same rows.
$t --epochs 2 --decomposition block --num_bases 4 old mb &&
    kg-train -q $g --decomposition block --num_bases 4 --epochs 0 \
    --init_from mb old sb
check "block-diagonal R-GCN: entity rows bit for bit" \
    cmp -s mb/entities.npy sb/entities.npy
$t --epochs 2 --encoder RelGNN old mr &&
    kg-train -q $g --encoder RelGNN --epochs 0 --init_from mr new sr
check "RelGNN, extended: old rows change only near new entities" \
    python3 near.py old new mr sr 2

# Training on from the model: its loss, not a fresh start's.
kg-train $g --batch_size 256 --lr 0.01 --dropout 0.2 --epochs 1 \
    --init_from m --features new.feat new w1 2>w1.err &&
    $t --epochs 1 --features new.feat new f1
check "--epochs 1 from the model starts below a fresh run's loss" \
    python3 -c '
import json, sys
l = [json.loads(open(d + "/train_log.jsonl").readline())["loss"] for d in ("w1", "f1")]
sys.exit(not l[0] < 0.8 * l[1])'
check "training from the model says the Adam moments start at zero" \
    grep -q "Adam moments start at zero" w1.err

# Learned rows only: training goes on from the model's rows, and a
# warm-started run resumed mid-way ends where an uninterrupted one does.
u="$t --num_thread 1 --fanout 4,4 --init_from ml"
$u --epochs 4 new lfull && $t --num_thread 1 --fanout 4,4 --epochs 4 new lfresh &&
    $u --epochs 2 --keep_checkpoint new lhalf &&
    $u --epochs 4 --resume --checkpoint_dir lhalf.ckpt new lres
check "learned rows only: training from the model starts below a fresh run's loss" \
    python3 -c '
import json, sys
l = [json.loads(open(d + "/train_log.jsonl").readline())["loss"] for d in ("lfull", "lfresh")]
sys.exit(not l[0] < 0.8 * l[1])'
$u --epochs 1 --lr 1e-12 new ltiny
check "training starts from the model's parameters (--lr 1e-12: within 1e-6)" \
    python3 - "$ne" <<'PY'
import sys
from npy import load
n, d0 = int(sys.argv[1]), 16
a = [x[0] for x in load("ml/gnn_weights.npy")]
b = [x[0] for x in load("ltiny/gnn_weights.npy")]
pairs = list(zip(a[:n * d0], b[:n * d0])) + list(zip(a[n * d0:], b[300 * d0:]))
sys.exit(not (len(a) - n * d0 == len(b) - 300 * d0 and
    all(abs(x - y) <= 1e-6 for x, y in pairs)))
PY
check "a warm-started run resumed mid-way ends where an uninterrupted one does" \
    sh -c 'for f in entities.npy relations.npy gnn_weights.npy; do
	cmp -s lfull/$f lres/$f || exit 1; done'

# Refusals: one line, exit 1 (2 for usage), nothing written.
mkdir bad
expect_fail "another encoder" 1 \
    "^kg-train: model 'm' is rgcn .*; this run trains relgnn" \
    kg-train -q $g --encoder RelGNN --epochs 0 --init_from m \
    --features old.feat old bad/o1
expect_fail "another hidden size" 1 "^kg-train: model 'm' is .* dims 16,16,16.*dims 8,8,16" \
    kg-train -q $g --gnn_hidden 8 --epochs 0 --init_from m \
    --features old.feat old bad/o2
expect_fail "another decomposition" 1 "^kg-train: model 'm' is rgcn \(basis.*rgcn \(block" \
    kg-train -q $g --decomposition block --num_bases 4 --epochs 0 \
    --init_from m --features old.feat old bad/o3
sed 's/"dim": 16/"dim": 8/' $D/schema.json >$D/schema8.json
feats old $D/schema8.json old8.feat
expect_fail "features of another width" 1 \
    "^kg-train: 'm/gnn_weights.npy' holds [0-9]+ floats.*features of another width" \
    kg-train -q $g --epochs 0 --init_from m --features old8.feat old bad/o4
expect_fail "a features model without features" 1 \
    "^kg-train: model 'm' is .*features; this run trains .*learned rows only" \
    kg-train -q $g --epochs 0 --init_from m old bad/o5
kg-train -q --model_name DistMult --hidden_dim 16 --epochs 1 old sh
expect_fail "a shallow model" 1 "^kg-train: model 'sh' is no GNN model" \
    kg-train -q $g --epochs 0 --init_from sh old bad/o6
expect_fail "--epochs 0 without --init_from" 2 "^kg-train: --epochs 0 needs --init_from" \
    kg-train -q $g --epochs 0 old bad/o7
expect_fail "--freeze_old without a start" 2 \
    "^kg-train: --freeze_old needs --init_from or --init_entities" \
    kg-train -q $g --freeze_old old bad/o8
check "nothing written on a refusal" test -z "$(ls -A bad)"
