# --init_from and --init_entities: a model of yesterday's dataset carried
# to today's (kg-ingest --extend, or any dataset sharing names): old rows
# bit for bit with --epochs 0, new ones from their neighbours, random or
# zero; a warm-started run resumed mid-way ends where an uninterrupted one
# does; refusals give one line, exit 1 (2 for usage) and write nothing.
. "$KG_TOP/tests/cli/lib.sh"
plan 34
# Yesterday: the triples of all entities but every tenth; today: all.
warm_fixture 3 || exit 0

# npy.py: the rows of float32 .npy files without numpy.
cat >npy.py <<'PY'
import ast, struct, sys
def load(path):
    b = open(path, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    h = ast.literal_eval(b[10:10 + hl].decode("latin1"))
    assert h["descr"] == "<f4", h
    shape = h["shape"]
    cols = shape[1] if len(shape) > 1 else 1
    x = struct.unpack("<%df" % (shape[0] * cols), b[10 + hl:])
    return [list(x[i * cols:(i + 1) * cols]) for i in range(shape[0])]
def names(path):
    return [l.rstrip("\n").split("\t")[1] for l in open(path)]
PY
# rows_equal A B N: the first N rows of A and B are the same bytes.
rows_equal() {
	python3 - "$@" <<'PY'
import struct, sys
def body(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    return b[10 + hl:]
a, b = body(sys.argv[1]), body(sys.argv[2])
n = int(sys.argv[3]) * len(a) // int(sys.argv[4])
sys.exit(0 if n > 0 and a[:n] == b[:n] else 1)
PY
}

$t --init_from m --epochs 0 dst w0 2>w0.err
check "--epochs 0 --init_from writes the extended model" test -s w0/entities.npy
check "old entity rows bit for bit" rows_equal m/entities.npy w0/entities.npy "$ne" "$ne"
check "old relation rows bit for bit" rows_equal m/relations.npy w0/relations.npy "$nr" "$nr"
check "old Adagrad state carried bit for bit" rows_equal m/entity_state.npy w0/entity_state.npy "$ne" "$ne"
check "old relation state carried bit for bit" rows_equal m/relation_state.npy w0/relation_state.npy "$nr" "$nr"
${t/-q /} --init_from m --epochs 0 --force dst w0 2>w0.err
nn=$(wc -l <fresh.txt)
check "says what it matched, added and dropped" grep -q \
    "^kg-train: warm start from 'm': entities $ne matched, $nn added ($nn from neighbours), 0 dropped; relations $nr matched, $(( $(wc -l <dst/relations.tsv) - nr )) added, 0 dropped; optimiser state carried$" w0.err
check "the manifest records the model it started from" python3 - <<'PY'
import json, subprocess, sys
m = json.load(open("w0/manifest.json"))
c = m["config"]["init_from"]
sys.exit(not (c["path"] == "m" and c["checksum"].startswith("xxh3-64:")
              and c["optimizer_state"] == "carried"
              and m["config"]["epochs"] == 0 and m["figures"]["epochs"] == 0))
PY
check "new TransE rows: the mean of h + r and t - r over known neighbours" \
    python3 - "$ne" <<'PY'
import struct, sys
sys.path.insert(0, ".")
from npy import load, names
ne = int(sys.argv[1])
m_e, m_r, w_e = load("m/entities.npy"), load("m/relations.npy"), load("w0/entities.npy")
b = open("dst/train.npy", "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
x = struct.unpack("<%di" % ((len(b) - 10 - hl) // 4), b[10 + hl:])
nrel = len(m_r)
sums, cnt = {}, {}
for i in range(0, len(x), 3):
    h, r, t = x[i:i + 3]
    if r >= nrel:
        continue
    for new, old, sign in ((t, h, 1), (h, t, -1)):
        if new >= ne and old < ne:
            g = [a + sign * c for a, c in zip(m_e[old], m_r[r])]
            s = sums.setdefault(new, [0.0] * len(g))
            sums[new] = [a + c for a, c in zip(s, g)]
            cnt[new] = cnt.get(new, 0) + 1
bad = [e for e in sums if max(abs(a / cnt[e] - c) for a, c in zip(sums[e], w_e[e])) > 1e-5]
sys.exit(1 if bad or not sums else 0)
PY
$t --init_from m --epochs 0 --init_new zero dst wz
check "--init_new zero: new rows zero" python3 - "$ne" <<'PY'
import sys
sys.path.insert(0, ".")
from npy import load
w = load("wz/entities.npy")
sys.exit(not all(v == 0 for row in w[int(sys.argv[1]):] for v in row))
PY
$t --init_from m --epochs 0 --init_new random dst wr
check "--init_new random: new rows drawn, old rows kept" python3 - "$ne" <<'PY'
import sys
sys.path.insert(0, ".")
from npy import load
ne = int(sys.argv[1])
w, n, m = load("wr/entities.npy"), load("w0/entities.npy"), load("m/entities.npy")
sys.exit(not (w[:ne] == m[:ne] and all(any(v != 0 for v in r) for r in w[ne:])
              and w[ne:] != n[ne:]))
PY
$t --init_from m --epochs 0 --reset_optimizer dst wo
check "--reset_optimizer: state zero" python3 - <<'PY'
import sys
sys.path.insert(0, ".")
from npy import load
sys.exit(not all(v == 0 for r in load("wo/entity_state.npy") for v in r))
PY

# Another dataset with the same names in another order: matched by name.
sort -r all.tsv >shuffled.tsv
kg-ingest -q -o dss --train shuffled.tsv
$t --init_from m --epochs 0 dss ws
check "rows matched by name across datasets not made with --extend" \
    python3 <<'PY'
import sys
sys.path.insert(0, ".")
from npy import load, names
m, w = load("m/entities.npy"), load("ws/entities.npy")
old = {n: i for i, n in enumerate(names("dsy/entities.tsv"))}
new = names("dss/entities.tsv")
ok = sum(1 for i, n in enumerate(new) if n in old and w[i] == m[old[n]])
sys.exit(not (ok == len(old) and new[:5] != names("dsy/entities.tsv")[:5]))
PY

# Training from the warm start; resumed mid-way = uninterrupted.
check "a warm-started run trains" $t --init_from m --epochs 4 dst full
KG_TEST_KILL_AFTER_CKPT=2:TERM $t --init_from m --epochs 4 dst part 2>/dev/null
check "killed after checkpoint 2" test $? -ne 0 -a ! -e part -a -d part.ckpt
check "the killed warm-started run resumes" $t --init_from m --epochs 4 \
    --resume dst part
check "resumed = uninterrupted (entities)" cmp -s full/entities.npy part/entities.npy
check "resumed = uninterrupted (relations)" cmp -s full/relations.npy part/relations.npy
check "training moved the old rows" test "$(rows_equal m/entities.npy full/entities.npy "$ne" "$ne"; echo $?)" = 1
# Resumed without --init_from, the run still started from m: its
# manifest says so, and nothing warns of a changed setting.
KG_TEST_KILL_AFTER_CKPT=2:TERM $t --init_from m --epochs 4 dst part2 2>/dev/null
err=$($t --epochs 4 --resume dst part2 2>&1 >/dev/null)
check "resumed without --init_from: the same bits" \
    cmp -s full/entities.npy part2/entities.npy
check "resumed without --init_from: the manifest keeps the warm start" \
    jq -e '.config.init_from.path == "m" and
    (.config.resumed_with_changes | not)' part2/manifest.json
check "resumed without --init_from: no warning" \
    test "$(printf '%s\n' "$err" | grep -c 'changed settings')" = 0

# The device trainer (on the CPU backend through the test seam) starts
# from the warm rows: at a learning rate of 1e-7 one epoch leaves them
# within 1e-5 (fresh rows differ from the model's by far more).
KG_TRAIN_SEAM=cpu $t --init_from m --epochs 1 --lr 1e-7 dst seam
check "the device trainer starts from the warm rows" python3 - "$ne" <<'PY'
import sys
sys.path.insert(0, ".")
from npy import load
ne = int(sys.argv[1])
m, w = load("m/entities.npy"), load("seam/entities.npy")
d = max(abs(a - b) for i in range(ne) for a, b in zip(m[i], w[i]))
sys.exit(not (0 < d < 1e-5))
PY

# --init_entities, with and without --entity-map.
$t --init_entities m/entities.npy --epochs 0 dsy ie
check "--init_entities: rows bit for bit" cmp -s m/entities.npy ie/entities.npy
$t --init_entities m/entities.npy --entity-map dsy/entities.tsv --epochs 0 dst iem
check "--init_entities --entity-map: mapped rows bit for bit" rows_equal \
    m/entities.npy iem/entities.npy "$ne" "$ne"

# Refusals: one line, exit 1 (2 for usage), nothing written.
mkdir bad
tt="kg-train -q --num_thread 1 --epochs 1"
expect_fail "a model of another dimension" 1 \
    "^kg-train: model 'm' is TransE_l2 of dim 16 .*; this run trains TransE_l2 of dim 8" \
    $tt --model_name TransE_l2 --hidden_dim 8 --init_from m dst bad/o1
expect_fail "a model of another kind" 1 "this run trains DistMult of dim 16" \
    $tt --model_name DistMult --hidden_dim 16 --init_from m dst bad/o2
cp -r dss dup
python3 - dup/entities.tsv <<'PY'
import sys
p = sys.argv[1]
rows = [l.rstrip("\n").split("\t") for l in open(p)]
seen = {}
for i, (_, n) in enumerate(rows):
    if len(n) in seen:
        rows[i][1] = rows[seen[len(n)]][1]
        break
    seen[len(n)] = i
open(p, "w").write("".join("%s\t%s\n" % tuple(r) for r in rows))
PY
expect_fail "a dictionary with a duplicate name" 1 \
    "^kg-train: dup/entities.tsv:[0-9]+: duplicate entity name" \
    $tt --model_name TransE_l2 --hidden_dim 16 --init_from m dup bad/o3
expect_fail "--init_entities of another dtype" 1 \
    "train.npy: <i4 with 2 dimensions; expected float32 \[entities, 16\]" \
    $tt --model_name TransE_l2 --hidden_dim 16 --init_entities dsy/train.npy dsy bad/o4
expect_fail "--init_entities of another shape" 1 \
    "expected float32 \[entities, 8\]" \
    $tt --model_name TransE_l2 --hidden_dim 8 --init_entities m/entities.npy dsy bad/o5
expect_fail "--freeze_relations without --freeze_old" 2 \
    "^kg-train: --freeze_relations goes with --freeze_old" \
    $tt --init_from m --freeze_relations dst bad/o6
expect_fail "--epochs 0 without a start" 2 "^kg-train: --epochs 0 needs --init_from" \
    kg-train -q --epochs 0 dst bad/o7
expect_fail "a GNN encoder refuses a shallow model" 1 \
    "^kg-train: model 'm' is no GNN model" \
    kg-train -q --model_name RGCN --init_from m --epochs 0 dst bad/o8
expect_fail "a GNN encoder's --freeze_old needs a start" 2 \
    "^kg-train: --freeze_old needs --init_from or --init_entities" \
    kg-train -q --model_name RelGNN --freeze_old dst bad/o9
check "nothing written on a refusal" test -z "$(ls -A bad)" -a ! -e bad/o1.ckpt
