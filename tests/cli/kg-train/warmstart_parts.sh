# --init_from with --partitions in one process, in memory and out of core
# (--buffer_capacity): the rows go through the store in the bucket
# driver's renumbered IDs, so --epochs 0 writes exactly the model the
# in-memory warm start writes (M's old rows bit for bit); --freeze_old
# keeps them through training; a killed run resumes to the same end; the
# device buffer (the CPU backend through the test seam) starts from them.
# Under mpirun and --dist ssgd: warmstart_mpi.sh.
. "$KG_TOP/tests/cli/lib.sh"
plan 13
# Yesterday: the triples of all entities but every tenth; today: all.
warm_fixture 2 || exit 0
kg-partition -q -p 4 -m random -o pt dst || { notok "kg-partition"; exit 0; }
check "the partitions renumber the entities" python3 - <<'PY'
import struct, sys
b = open("pt/new2old.npy", "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
x = struct.unpack("<%di" % ((len(b) - 10 - hl) // 4), b[10 + hl:])
sys.exit(x == tuple(range(len(x))))
PY

# rows_equal A B N TOTAL: the first N of TOTAL rows of A and B are the
# same bytes.
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

$t --epochs 0 --init_from m dst mem
$t --epochs 0 --init_from m --partitions pt --buffer_capacity 2 dst ooc 2>ooc.err
check "--partitions --buffer_capacity 2 --epochs 0 writes the model" test -s ooc/entities.npy
check "out of core: M's entity rows bit for bit" rows_equal m/entities.npy ooc/entities.npy "$ne" "$ne"
check "out of core: M's entity state bit for bit" rows_equal m/entity_state.npy ooc/entity_state.npy "$ne" "$ne"
check "out of core: M's relation rows bit for bit" rows_equal m/relations.npy ooc/relations.npy "$nr" "$nr"
check "out of core = in memory, new rows too" cmp -s mem/entities.npy ooc/entities.npy
$t --epochs 0 --init_from m --partitions pt dst park
check "parked partitions = in memory" cmp -s mem/entities.npy park/entities.npy
check "the manifest records the model" python3 - <<'PY'
import json, sys
c = json.load(open("ooc/manifest.json"))["config"]
sys.exit(not (c["init_from"]["path"] == "m" and c["epochs"] == 0))
PY

$t --epochs 3 --init_from m --freeze_old --partitions pt --buffer_capacity 2 \
    dst fz
check "--freeze_old out of core: old rows bit for bit" rows_equal m/entities.npy fz/entities.npy "$ne" "$ne"
check "--freeze_old out of core: old state bit for bit" rows_equal m/entity_state.npy fz/entity_state.npy "$ne" "$ne"
check "--freeze_old out of core: new rows trained" python3 - "$ne" <<'PY'
import struct, sys
def rows(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    body = b[10 + hl:]
    return [body[i:i + 64] for i in range(0, len(body), 64)]
ne = int(sys.argv[1])
a, b = rows("mem/entities.npy"), rows("fz/entities.npy")
sys.exit(not (len(a) > ne and all(a[i] != b[i] for i in range(ne, len(a)))))
PY

# Resumed mid-way = uninterrupted, out of core.
$t --epochs 3 --init_from m --partitions pt --buffer_capacity 2 dst full
KG_TEST_KILL_AFTER_CKPT=1:TERM $t --epochs 3 --init_from m --partitions pt \
    --buffer_capacity 2 dst part 2>/dev/null
$t --epochs 3 --init_from m --partitions pt --buffer_capacity 2 --resume \
    dst part
check "a resumed warm start ends where an uninterrupted one does" \
    cmp -s full/entities.npy part/entities.npy

# The device buffer starts from the warm rows: at a learning rate of
# 1e-7 one epoch leaves them within 1e-5.
KG_TRAIN_SEAM=cpu $t --epochs 1 --lr 1e-7 --init_from m --partitions pt \
    --gpu_buffer 2 dst seam
check "the device buffer starts from the warm rows" python3 - "$ne" <<'PY'
import struct, sys
def rows(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    x = struct.unpack("<%df" % ((len(b) - 10 - hl) // 4), b[10 + hl:])
    return [x[i:i + 16] for i in range(0, len(x), 16)]
ne = int(sys.argv[1])
m, w = rows("m/entities.npy"), rows("seam/entities.npy")
d = max(abs(a - b) for i in range(ne) for a, b in zip(m[i], w[i]))
sys.exit(not (0 < d < 1e-5))
PY
