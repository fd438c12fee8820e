# --freeze_old and --freeze_relations: after training from yesterday's
# model, every matched entity row (and with --freeze_relations every
# matched relation row) and its optimiser state are bit for bit the
# model's, while the new rows (and unfrozen relations) trained; the
# matched rows are found by name, so old and new IDs may interleave; the
# 1-vs-all, Adam and --deterministic paths honour it too (the device
# engine: freeze_device.sh).
. "$KG_TOP/tests/cli/lib.sh"
plan 18
# Yesterday: the triples of all entities but every tenth; today: all.
warm_fixture 2 || exit 0
$t --epochs 2 --ent_optimizer adam --rel_optimizer adam dsy ma

# same|differs OLD NEW DSOLD DSNEW FILE WHICH [START]: for every name of
# DSOLD's WHICH.tsv, its row of NEW/FILE is (same) or, for some name, is
# not (differs) its row of OLD/FILE, byte for byte; with START (an
# --epochs 0 run), NEW's rows of the names DSOLD lacks all differ from
# START/FILE's (they trained).
cat >same.py <<'PY'
import struct, sys
def rows(path):
    b = open(path, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    import ast
    h = ast.literal_eval(b[10:10 + hl].decode("latin1"))
    body = b[10 + hl:]
    n = h["shape"][0]
    w = len(body) // n
    return [body[i * w:(i + 1) * w] for i in range(n)]
def names(p):
    return [l.rstrip("\n").split("\t")[1] for l in open(p)]
mode, old, new, dso, dsn, f, which = sys.argv[1:8]
start = sys.argv[8] if len(sys.argv) > 8 else None
a, b = rows(old + "/" + f), rows(new + "/" + f)
on, nn = names(dso + "/" + which + ".tsv"), names(dsn + "/" + which + ".tsv")
oi = {n: i for i, n in enumerate(on)}
eq = [a[oi[n]] == b[i] for i, n in enumerate(nn) if n in oi]
if mode == "same":
    ok = len(eq) == len(on) and all(eq)
else:
    ok = len(eq) == len(on) and not all(eq)
if ok and start is not None:
    s = rows(start + "/" + f)
    fresh = [i for i, n in enumerate(nn) if n not in oi]
    ok = len(fresh) > 0 and all(b[i] != s[i] for i in fresh)
sys.exit(0 if ok else 1)
PY
same() { python3 same.py same "$@"; }
differs() { python3 same.py differs "$@"; }

$t --init_from m --epochs 0 dst s0
$t --init_from m --freeze_old --epochs 3 dst f 2>f.err
check "--freeze_old trains" test -s f/entities.npy
check "old entity rows bit for bit, new rows trained" \
    same m f dsy dst entities.npy entities s0
check "old entity Adagrad state bit for bit" \
    same m f dsy dst entity_state.npy entities
check "relations train without --freeze_relations" \
    differs m f dsy dst relations.npy relations
check "the manifest counts the frozen rows" python3 - "$(wc -l <dsy/entities.tsv)" <<'PY'
import json, sys
c = json.load(open("f/manifest.json"))["config"]["init_from"]["frozen"]
sys.exit(not (c["entities"] == int(sys.argv[1]) and c["relations"] == 0))
PY

$t --init_from m --freeze_old --freeze_relations --epochs 3 dst fr
check "--freeze_relations: old relation rows bit for bit" \
    same m fr dsy dst relations.npy relations
check "--freeze_relations: relation state bit for bit" \
    same m fr dsy dst relation_state.npy relations
check "--freeze_relations: old entity rows bit for bit" \
    same m fr dsy dst entities.npy entities s0

# Old and new IDs interleaved (a dataset made without --extend).
sort -r all.tsv >shuffled.tsv
kg-ingest -q -o dss --train shuffled.tsv
$t --init_from m --epochs 0 dss ss0
$t --init_from m --freeze_old --epochs 3 dss fs
check "interleaved IDs: the matched rows frozen, the others trained" \
    same m fs dsy dss entities.npy entities ss0

# The other update paths: 1-vs-all, deterministic rounds, Adam.
$t --init_from m --freeze_old --epochs 2 --one_vs_all dst fo
check "1-vs-all: old rows bit for bit, new rows trained" \
    same m fo dsy dst entities.npy entities s0
$t --init_from m --freeze_old --freeze_relations --epochs 2 --deterministic \
    --num_thread 2 dst fd
check "--deterministic: old rows bit for bit, new rows trained" \
    same m fd dsy dst entities.npy entities s0
check "--deterministic: old relations bit for bit" \
    same m fd dsy dst relations.npy relations
ta="$t --ent_optimizer adam --rel_optimizer adam"
$ta --init_from ma --epochs 0 dst sa0
$ta --init_from ma --freeze_old --freeze_relations --epochs 2 dst fa
check "Adam: old rows bit for bit, new rows trained" \
    same ma fa dsy dst entities.npy entities sa0
check "Adam: old moments bit for bit" \
    same ma fa dsy dst entity_state.npy entities
check "Adam: old relation moments bit for bit" \
    same ma fa dsy dst relation_state.npy relations

# Without --freeze_old the same run moves the old rows (the checks above
# can fail).
$t --init_from m --epochs 3 dst u
check "without --freeze_old the old rows move" \
    differs m u dsy dst entities.npy entities

mkdir bad
expect_fail "--freeze_relations needs --init_from" 2 \
    "^kg-train: --freeze_relations needs --init_from" \
    $t --init_entities m/entities.npy --freeze_old --freeze_relations dsy bad/o2
check "nothing written on a refusal" test -z "$(ls -A bad)"
