# --init_from under mpirun: with --partitions every rank writes the rows
# of its partitions, matched by name as in one process, so --epochs 0 at
# 2 ranks (4 partitions) and 4 ranks (8 partitions) writes the table one
# process writes (M's old rows bit for bit, the new rows by --init_new
# neighbours and random alike); --freeze_old (and --freeze_relations)
# keeps the old rows bit for bit through training at 2 and 4 ranks; a
# resumed warm start at 4 ranks ends where an uninterrupted one does;
# --dist ssgd starts every rank from the same rows (--epochs 0 at 2 ranks
# = one process) and keeps frozen rows bit for bit.
. "$KG_TOP/tests/cli/lib.sh"
plan 16
if ! command -v mpirun >/dev/null; then
	skip_all "warm starts under mpirun: mpirun is not installed"
fi
MPI="timeout 120 mpirun --oversubscribe"
# Yesterday: the triples of all entities but every tenth; today: all.
warm_fixture 2 || exit 0
kg-partition -q -p 4 -m random -o p4 dst || { notok "kg-partition"; exit 0; }
kg-partition -q -p 8 -m random -o p8 dst

# rows A B N TOTAL: A has TOTAL rows; its first N and B's are the same
# bytes (same), or A and B are alike in shape and every row past N
# differs (trained).
cat >rows.py <<'PY'
import struct, sys
def body(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    return b[10 + hl:]
mode, a, b, n, total = sys.argv[1], body(sys.argv[2]), body(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5])
w = len(a) // total
if mode == "same":
    sys.exit(0 if n > 0 and a[:n * w] == b[:n * w] else 1)
rows = range(n, total)
sys.exit(0 if len(rows) > 0 and len(a) == len(b) and
         all(a[i * w:(i + 1) * w] != b[i * w:(i + 1) * w] for i in rows) else 1)
PY
same() { python3 rows.py same "$@"; }
trained() { python3 rows.py trained "$@"; }
# tables A B: entities, their state and the relations are the same bytes.
tables() {
	cmp -s "$1/entities.npy" "$2/entities.npy" &&
	    cmp -s "$1/entity_state.npy" "$2/entity_state.npy" &&
	    cmp -s "$1/relations.npy" "$2/relations.npy"
}

$t --epochs 0 --init_from m --partitions p4 dst one4
$MPI -np 2 $t --epochs 0 --init_from m --partitions p4 dst two 2>two.err
check "2 ranks --epochs 0 write the model" test -s two/entities.npy
check "2 ranks --epochs 0: M's entity rows bit for bit" \
    same m/entities.npy two/entities.npy "$ne" "$ne"
check "2 ranks --epochs 0: M's relation rows bit for bit" \
    same m/relations.npy two/relations.npy "$nr" "$nr"
check "2 ranks --epochs 0 = one process, new rows and state too" \
    tables one4 two
$t --epochs 0 --init_from m --partitions p8 dst one8
$MPI -np 4 $t --epochs 0 --init_from m --partitions p8 dst four 2>four.err
check "4 ranks --epochs 0 = one process" tables one8 four
$t --epochs 0 --init_from m --init_new random --partitions p4 dst oner
$MPI -np 2 $t --epochs 0 --init_from m --init_new random --partitions p4 \
    dst twor 2>twor.err
check "--init_new random: 2 ranks = one process" tables oner twor
check "the manifest records the model at 2 ranks" python3 - <<'PY'
import json, sys
c = json.load(open("two/manifest.json"))["config"]
sys.exit(not (c["init_from"]["path"] == "m" and c["epochs"] == 0 and
              c["init_from"]["entities"]["added"] > 0))
PY

$MPI -np 2 $t --epochs 3 --init_from m --freeze_old --partitions p4 dst fz2 \
    2>fz2.err
check "--freeze_old at 2 ranks: old rows bit for bit" \
    same m/entities.npy fz2/entities.npy "$ne" "$ne"
check "--freeze_old at 2 ranks: old state bit for bit" \
    same m/entity_state.npy fz2/entity_state.npy "$ne" "$ne"
check "--freeze_old at 2 ranks: every new row trained" \
    trained one4/entities.npy fz2/entities.npy "$ne" "$(wc -l <dst/entities.tsv)"
$MPI -np 4 $t --epochs 3 --init_from m --freeze_old --freeze_relations \
    --partitions p8 dst fz4 2>fz4.err
check "--freeze_old --freeze_relations at 4 ranks: old entity and relation rows bit for bit" \
    eval 'same m/entities.npy fz4/entities.npy "$ne" "$ne" &&
    same m/relations.npy fz4/relations.npy "$nr" "$nr"'

# Resumed mid-way = uninterrupted, at 4 ranks: after 2 epochs the
# checkpoint's partitions sit on other ranks than the warm start wrote.
w="$t --init_from m --partitions p8"
$MPI -np 4 $w --epochs 3 --no_checkpoint dst full 2>/dev/null
$MPI -np 4 $w --epochs 2 --checkpoint_dir ck dst half 2>/dev/null
$MPI -np 4 $w --epochs 3 --checkpoint_dir ck --resume dst resumed 2>res.err
check "a resumed warm start at 4 ranks ends where an uninterrupted one does" \
    eval 'test -f ck/entities-p0.npy && cmp -s full/entities.npy resumed/entities.npy'

# --dist ssgd: rank 0's start reaches every rank.
$t --epochs 0 --init_from m dst mem
$MPI -np 2 $t --dist ssgd --epochs 0 --init_from m dst s0 2>s0.err
check "--dist ssgd at 2 ranks --epochs 0 = one process" tables mem s0
$MPI -np 2 $t --dist ssgd --epochs 2 --init_from m --freeze_old dst sf \
    2>sf.err
check "--dist ssgd --freeze_old at 2 ranks: old rows bit for bit" \
    same m/entities.npy sf/entities.npy "$ne" "$ne"
check "--dist ssgd --freeze_old at 2 ranks: every new row trained" \
    trained mem/entities.npy sf/entities.npy "$ne" "$(wc -l <dst/entities.tsv)"
check "--dist ssgd --freeze_old at 2 ranks: relations trained" \
    eval '! same m/relations.npy sf/relations.npy "$nr" "$nr"'
