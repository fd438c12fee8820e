# GNN warm starts that keep what they were given (kg-train --model_name
# RGCN|RelGNN with --freeze_old, --freeze_relations, --init_entities,
# --entity_map): after training with --freeze_old the old entities'
# learned rows, the encoder weights and (with --freeze_relations) the
# matched relations are byte-equal to the model's, while the new rows and
# a new relation's blocks and decoder row train; without --freeze_old
# they all change; --init_entities rows land where the map says and stay
# with --freeze_old; the device step (on the CPU backend) and two ranks
# under mpirun mask alike;
# bad inputs get one line and nothing written.
source "$KG_TOP/tests/cli/lib.sh"
plan 33
if ! command -v python3 >/dev/null; then
	skip_all "gnn freeze: python3 is not installed"
fi
if [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ]; then
	skip_all "gnn freeze: kg_gen_enterprise is not built"
fi
D=ent
"$KG_BUILD/aux/kg_gen_enterprise" -o $D -n 300 -s 1 2>/dev/null
# Yesterday: every triple but those of the persons whose number ends in
# 7 (old); the same without relation 'uses' (oldr).  Today: all (new,
# newr: old and oldr extended, newr with one new relation).
for s in train valid test; do
	grep -v -P 'person:\d*7(\t|$)' $D/$s.tsv >old_$s.tsv
	grep -v -P '\tuses\t' old_$s.tsv >oldr_$s.tsv
done
feats() {	# feats DATASET SCHEMA OUT
	kg-encode-attrs fit -q --max-errors 100000 -d "$1" -s "$2" \
	    -o "$3.am" 2>/dev/null &&
	kg-encode-attrs transform -q -j 1 --max-errors 100000 -d "$1" \
	    -m "$3.am" -o "$3.s0" --shard 0/1 2>/dev/null &&
	kg-encode-attrs merge -q -m "$3.am" -o "$3" "$3.s0"
}
for y in old oldr; do
	kg-ingest -q -o $y --train ${y}_train.tsv --valid ${y}_valid.tsv \
	    --test ${y}_test.tsv || { notok "gnn freeze: dataset $y"; exit 0; }
done
kg-ingest -q --extend old -o new --train $D/train.tsv --valid $D/valid.tsv \
    --test $D/test.tsv &&
kg-ingest -q --extend oldr -o newr --train $D/train.tsv \
    --valid $D/valid.tsv --test $D/test.tsv &&
feats old $D/schema.json old.feat && feats new $D/schema.json new.feat ||
    { notok "gnn freeze: datasets and features"; exit 0; }
ne=$(wc -l <old/entities.tsv); na=$(wc -l <new/entities.tsv)
ner=$(wc -l <oldr/entities.tsv); nr=$(wc -l <old/relations.tsv)
nrr=$(wc -l <oldr/relations.tsv)

# parts.py A B WHAT...: whether the parts WHAT of models A and B (n_a
# and n_b learned rows of d0 = 16 floats) are byte-equal, each WHAT one
# of old:N (the first N learned rows), new:N:M (rows N..M, same count),
# enc:NA:NB (the floats after NA resp. NB learned rows), rel (all of
# relations.npy), rel:N (its first N rows), relrow:I (its row I).  Exit
# 0 when every part is equal.
cat >parts.py <<'PY'
import struct, sys
def body(p):
    b = open(p, "rb").read()
    return b[10 + struct.unpack("<H", b[8:10])[0]:]
def rows(p):
    b = open(p, "rb").read()
    import ast
    hl = struct.unpack("<H", b[8:10])[0]
    return ast.literal_eval(b[10:10 + hl].decode("latin1"))["shape"][0]
a, b = sys.argv[1], sys.argv[2]
wa, wb = body(a + "/gnn_weights.npy"), body(b + "/gnn_weights.npy")
ra, rb = body(a + "/relations.npy"), body(b + "/relations.npy")
rw = len(ra) // rows(a + "/relations.npy")
R = 16 * 4
ok = True
for w in sys.argv[3:]:
    f = w.split(":")
    if f[0] == "old":
        n = int(f[1]); ok &= wa[:n * R] == wb[:n * R]
    elif f[0] == "new":
        n, m = int(f[1]), int(f[2]); ok &= wa[n * R:m * R] == wb[n * R:m * R]
    elif f[0] == "enc":
        x, y = int(f[1]), int(f[2]); ok &= wa[x * R:] == wb[y * R:]
    elif f[0] == "rel" and len(f) == 1:
        ok &= ra == rb
    elif f[0] == "rel":
        n = int(f[1]); ok &= ra[:n * rw] == rb[:n * rw]
    elif f[0] == "relrow":
        i = int(f[1]); ok &= ra[i * rw:(i + 1) * rw] == rb[i * rw:(i + 1) * rw]
sys.exit(0 if ok else 1)
PY
same() { python3 parts.py "$@"; }
differ() { ! python3 parts.py "$@"; }

g="--model_name RGCN --gnn_hidden 16 --hidden_dim 16 --num_bases 2 --seed 3"
g="$g --num_thread 1"
t="kg-train -q $g --batch_size 256 --lr 0.01 --dropout 0.2"
$t --epochs 3 --features old.feat old m && $t --epochs 3 old ml &&
    $t --epochs 3 --encoder RelGNN old mr && $t --epochs 3 oldr mlr ||
    { notok "gnn freeze: yesterday's models"; exit 0; }

# R-GCN over features (every entity here reads its attributes, none its
# learned row): the encoder (attribute matrices and layers) stays, the
# relations train.
kg-train $g --batch_size 256 --epochs 3 --init_from m --freeze_old \
    --features new.feat new f1 2>f1.err
check "features, --freeze_old: encoder weights byte-equal to the model's" \
    same m f1 enc:$ne:$na
check "features, --freeze_old: the relations train" differ m f1 rel
check "stderr counts what is frozen" grep -q \
    "frozen: $ne entities' learned rows, [1-9][0-9]* encoder floats, 0 relations$" f1.err

# Learned rows only: the old rows and the encoder stay, the relations
# train; with --freeze_relations too only the new rows train.
$t --epochs 3 --init_from ml --freeze_old new f4
check "learned rows, --freeze_old: old rows and encoder byte-equal, the relations train" \
    sh -c "python3 parts.py ml f4 old:$ne enc:$ne:$na && ! python3 parts.py ml f4 rel"
$t --epochs 0 --init_from ml new z1 &&
    $t --epochs 3 --init_from ml --freeze_old --freeze_relations new f2
check "learned rows, --freeze_old --freeze_relations: old rows, encoder and relations byte-equal" \
    same ml f2 old:$ne enc:$ne:$na rel
check "learned rows, --freeze_old: the new rows train" differ z1 f2 new:$ne:$na
check "the manifest counts the frozen parameters" python3 - "$ne" <<'PY'
import json, sys
c = json.load(open("f2/manifest.json"))["config"]["init_from"]["frozen"]
sys.exit(not (c["entities"] == int(sys.argv[1]) and c["relations"] == 5 and
    c["encoder_floats"] > 0))
PY

# Without --freeze_old everything trains.
$t --epochs 3 --init_from ml new f3
check "without --freeze_old the old rows train" differ ml f3 old:$ne
check "without --freeze_old the encoder trains" differ ml f3 enc:$ne:$na
check "without --freeze_old the relations train" differ ml f3 rel

# RelGNN, learned rows only.
$t --encoder RelGNN --epochs 0 --init_from mr new zr &&
    $t --encoder RelGNN --epochs 3 --init_from mr --freeze_old \
    --freeze_relations new fr
check "RelGNN --freeze_old --freeze_relations: old rows, encoder and relations byte-equal" \
    same mr fr old:$ne enc:$ne:$na rel
check "RelGNN --freeze_old: the new rows train" differ zr fr new:$ne:$na

# A new relation: its decoder row and its blocks (basis coefficients)
# train, the matched relations and every other encoder float stay.
$t --epochs 0 --init_from mlr newr zn &&
    $t --epochs 3 --init_from mlr --freeze_old --freeze_relations newr fn
check "a new relation: the matched relations byte-equal, the new one trains" \
    sh -c "python3 parts.py mlr fn rel:$nrr && ! python3 parts.py zn fn relrow:$nrr"
# blocks.py A B NA NB NRB NRA RNEW: the encoder floats of A (NA learned
# rows, NRA relations in its layers' A [2 NRA, 2]) and B differ only in
# the basis coefficients of B's relation RNEW (both directions), and
# there some do; dims 16,16,16, 2 bases, 2 layers.
cat >blocks.py <<'PY'
import struct, sys
def floats(p, skip):
    b = open(p + "/gnn_weights.npy", "rb").read()
    b = b[10 + struct.unpack("<H", b[8:10])[0]:]
    return struct.unpack("<%df" % (len(b) // 4), b)[skip * 16:]
na, nb, nra, nr, rnew = (int(x) for x in sys.argv[3:8])
a, b = floats(sys.argv[1], na), floats(sys.argv[2], nb)
din = dout = 16; B = 2
lay = din * dout + dout + B * din * dout
# B's layers from the end: layer sizes with 2 nr types.
size_b = lay + 2 * nr * B
start = len(b) - 2 * size_b
new_idx = set()
for l in range(2):
    a0 = start + l * size_b + lay
    for t in (rnew, nr + rnew):
        new_idx |= set(range(a0 + t * B, a0 + (t + 1) * B))
ok = len(a) == len(b) and all(a[i] == b[i] for i in range(len(a)) if i not in new_idx)
ok = ok and any(a[i] != b[i] for i in new_idx)
sys.exit(0 if ok else 1)
PY
check "a new relation: only its blocks of the encoder train" \
    python3 blocks.py zn fn "$na" "$na" "$((nrr + 1))" "$((nrr + 1))" "$nrr"

# --init_entities: every seventh entity from F's rows.
cat >mknpy.py <<'PY'
import struct, sys
# mknpy.py OUT ROWS COLS [DESCR]: ROWS x COLS of (i COLS + j + 1) / 1000
out, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
descr = sys.argv[4] if len(sys.argv) > 4 else "<f4"
h = "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }" % (descr, rows, cols)
h += " " * (63 - (10 + len(h)) % 64) + "\n"
code = {"<f4": "f", "<i4": "i"}[descr]
v = [(i * cols + j + 1) / 1000.0 for i in range(rows) for j in range(cols)]
if code == "i":
    v = [int(x * 1000) for x in v]
open(out, "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) +
    h.encode() + struct.pack("<%d%s" % (len(v), code), *v))
PY
# rowsat.py MODEL F MAP DATASET [none]: exit 0 when every entity MAP
# names (DATASET's names) has its row of F as its learned row in MODEL,
# with "none" when none has.
cat >rowsat.py <<'PY'
import struct, sys
def body(p):
    b = open(p, "rb").read()
    return b[10 + struct.unpack("<H", b[8:10])[0]:]
w, f = body(sys.argv[1] + "/gnn_weights.npy"), body(sys.argv[2])
ids = {l.rstrip("\n").split("\t")[1]: int(l.split("\t")[0])
    for l in open(sys.argv[4] + "/entities.tsv")}
R = 64; same = tot = 0
for l in open(sys.argv[3]):
    r, n = l.rstrip("\n").split("\t")
    e, r = ids[n], int(r)
    tot += 1
    same += w[e * R:(e + 1) * R] == f[r * R:(r + 1) * R]
want = sys.argv[5] if len(sys.argv) > 5 else "all"
sys.exit(0 if tot and ((want == "all" and same == tot) or
    (want == "none" and same == 0)) else 1)
PY
python3 mknpy.py F.npy 40 16
awk 'NR % 7 == 1 { print n++ "\t" $2 }' new/entities.tsv | head -40 >map.tsv
$t --epochs 0 --init_entities F.npy --entity_map map.tsv new i0 &&
    $t --epochs 3 --init_entities F.npy --entity_map map.tsv --freeze_old \
    new i1 && $t --epochs 3 --init_entities F.npy --entity_map map.tsv new i2
check "--init_entities --epochs 0: the rows land where the map says, bit for bit" \
    python3 rowsat.py i0 F.npy map.tsv new
check "--init_entities --freeze_old: they stay F's after training" \
    python3 rowsat.py i1 F.npy map.tsv new
check "--init_entities --freeze_old: the encoder and relations train" \
    differ i0 i1 enc:$na:$na rel
check "--init_entities without --freeze_old: the rows train" \
    python3 rowsat.py i2 F.npy map.tsv new none
check "the manifest records --init_entities" python3 - <<'PY'
import json, sys
c = json.load(open("i1/manifest.json"))["config"]["init_entities"]
sys.exit(not (c["path"] == "F.npy" and c["entities"]["matched"] == 40 and
    c["frozen"]["entities"] == 40))
PY

# The device step on the CPU backend masks the same parameters.
KG_TRAIN_SEAM=cpu $t --epochs 3 --init_from ml --freeze_old \
    --freeze_relations new d2
check "device step: old rows, encoder and relations byte-equal" \
    same ml d2 old:$ne enc:$ne:$na rel
check "device step: the new rows train" differ z1 d2 new:$ne:$na

# Two ranks on kg-expand parts of today's graph: every rank takes its
# nodes' rows from the model and masks the same parameters.
if ! command -v mpirun >/dev/null; then
	skip_section 3 "two ranks: mpirun is not installed"
elif ! kg-partition -q -p 2 -m metis -s 1 -o p2 new ||
    ! kg-expand -q -k 2 -s 1 -p p2 -o x2 new; then
	notok "two ranks: kg-partition, kg-expand"
	notok "two ranks: kg-partition, kg-expand"
	notok "two ranks: kg-partition, kg-expand"
else
	MPI="timeout 300 mpirun --oversubscribe -np 2"
	$MPI $t --epochs 0 --init_from ml --expanded x2 new m0
	check "two ranks, --epochs 0: the one-process start bit for bit" \
	    cmp -s z1/gnn_weights.npy m0/gnn_weights.npy
	$MPI $t --epochs 3 --init_from ml --freeze_old --freeze_relations \
	    --expanded x2 new m2
	check "two ranks, --freeze_old --freeze_relations: old rows, encoder and relations byte-equal" \
	    same ml m2 old:$ne enc:$ne:$na rel
	check "two ranks, --freeze_old: the new rows train" \
	    differ z1 m2 new:$ne:$na
fi

# Refusals: one line, exit 1 (2 for usage), nothing written.
mkdir bad
python3 mknpy.py I.npy "$na" 16 "<i4"
python3 mknpy.py W.npy "$na" 8
python3 mknpy.py S.npy 40 16
printf '0\tnobody\n1\tnone here\n' >nomap.tsv
printf '0\t%s\n99\t%s\n' "$(sed -n 1p map.tsv | cut -f2)" \
    "$(sed -n 2p map.tsv | cut -f2)" >farmap.tsv
expect_fail "every parameter frozen" 1 \
    "^kg-train: --freeze_old: every parameter of 'm' is frozen" \
    $t --epochs 1 --init_from m --freeze_old --freeze_relations \
    --features old.feat old bad/o1
expect_fail "--init_entities of another dtype" 1 \
    "^kg-train: I.npy: <i4 with 2 dimensions; expected float32 \[entities, 16\]" \
    $t --epochs 1 --init_entities I.npy new bad/o2
expect_fail "--init_entities of another width" 1 \
    "^kg-train: W.npy: <f4 with 2 dimensions; expected float32 \[entities, 16\]" \
    $t --epochs 1 --init_entities W.npy new bad/o3
expect_fail "--init_entities of too few rows without a map" 1 \
    "^kg-train: S.npy: <f4 .*expected float32 \[entities, 16\]" \
    $t --epochs 1 --init_entities S.npy new bad/o4
expect_fail "an --entity_map naming no entity" 1 \
    "^kg-train: nomap.tsv: names no entity of 'new'" \
    $t --epochs 1 --init_entities S.npy --entity_map nomap.tsv new bad/o5
expect_fail "an --entity_map row past the array" 1 \
    "^kg-train: farmap.tsv:2: expected 'row<TAB>name' with a row below 40" \
    $t --epochs 1 --init_entities S.npy --entity_map farmap.tsv new bad/o6
expect_fail "--freeze_relations without --freeze_old" 2 \
    "^kg-train: --freeze_relations goes with --freeze_old" \
    $t --epochs 1 --init_from ml --freeze_relations new bad/o7
expect_fail "--freeze_relations with --init_entities" 2 \
    "^kg-train: --freeze_relations needs --init_from" \
    $t --epochs 1 --init_entities S.npy --entity_map map.tsv --freeze_old \
    --freeze_relations new bad/o8
check "nothing written on a refusal" test -z "$(ls -A bad)"
