# --freeze_old on the device engine, run on the CPU backend through the
# test seam (KG_TRAIN_SEAM=cpu: the device step, its index batch and its
# backend calls, without a GPU): the frozen rows are listed after the
# rows that train and the optimiser steps only those, so every old entity
# row and its state (and with --freeze_relations every old relation row)
# stay bit for bit while every new row trains: the whole table on the
# device (row-wise and element-wise Adagrad, Adam), the device's
# partition buffer with the negative pool, a bucket at a time on each of
# 2 ranks, and --dist ssgd's merged sums at 2 ranks.
. "$KG_TOP/tests/cli/lib.sh"
plan 10
# Yesterday: the triples of all entities but every tenth; today: all.
warm_fixture 2 || exit 0
$t --epochs 0 --init_from m dst s0
kg-partition -q -p 4 -m random -o p4 dst || { notok "kg-partition"; exit 0; }
dev="env KG_TRAIN_SEAM=cpu $t"

# frozen M OUT START: OUT's first ne entity rows and their state are M's
# bytes, with --rel also its first nr relation rows and their state, and
# each of OUT's entity rows past ne differs from START's (it trained).
cat >frozen.py <<'PY'
import struct, sys
def body(p):
    b = open(p, "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    return b[10 + hl:]
def first(m, o, f, n):
    a, b = body(m + "/" + f), body(o + "/" + f)
    return n > 0 and len(a) % n == 0 and len(b) > len(a) and b[:len(a)] == a
m, o, s, ne, nr, na = sys.argv[1:7]
ne, nr, na = int(ne), int(nr), int(na)
ok = first(m, o, "entities.npy", ne) and first(m, o, "entity_state.npy", ne)
if "--rel" in sys.argv:
    ok = ok and first(m, o, "relations.npy", nr) and \
        first(m, o, "relation_state.npy", nr)
a, b = body(s + "/entities.npy"), body(o + "/entities.npy")
w = len(a) // na
ok = ok and len(a) == len(b) and all(a[i * w:(i + 1) * w] != b[i * w:(i + 1) * w]
                                     for i in range(ne, na))
sys.exit(0 if ok else 1)
PY
frozen() { python3 frozen.py "$1" "$2" "$3" "$ne" "$nr" "$na" "${@:4}"; }

env KG_TRAIN_SEAM=cpu ${t/-q /} --init_from m --freeze_old --epochs 3 dst fz \
    2>fz.err
check "device table: the device engine ran" grep -q "^kg-train: training on cpu" fz.err
check "device table: old rows and state bit for bit, new rows trained" \
    frozen m fz s0
$dev --init_from m --freeze_old --freeze_relations --epochs 3 dst fr
check "device table --freeze_relations: old relations bit for bit too" \
    frozen m fr s0 --rel
$dev --init_from m --epochs 3 dst un
check "device table without --freeze_old the old rows move" \
    eval '! frozen m un s0'
$t --ent_optimizer adagrad_elem --rel_optimizer adagrad_elem --epochs 2 \
    dsy me
$t --epochs 0 --init_from me dst se0
$dev --ent_optimizer adagrad_elem --rel_optimizer adagrad_elem \
    --init_from me --freeze_old --freeze_relations --epochs 2 dst fe
check "device table, element-wise Adagrad: frozen bit for bit" \
    frozen me fe se0 --rel
$t --ent_optimizer adam --rel_optimizer adam --epochs 2 dsy ma
$t --epochs 0 --init_from ma dst sa0
$dev --ent_optimizer adam --rel_optimizer adam --init_from ma --freeze_old \
    --freeze_relations --epochs 2 dst fa 2>fa.err
check "device table, Adam: frozen rows and moments bit for bit" \
    frozen ma fa sa0 --rel
$dev --init_from m --freeze_old --partitions p4 --gpu_buffer 2 --epochs 3 \
    dst fb 2>fb.err
check "device buffer with the negative pool: frozen bit for bit" \
    frozen m fb s0
if command -v mpirun >/dev/null; then
	MPI="timeout 120 mpirun --oversubscribe -np 2"
	$MPI $dev --init_from m --freeze_old --partitions p4 --neg_pool 0 \
	    --epochs 3 dst fk 2>fk.err
	check "a bucket at a time on 2 ranks' devices: frozen bit for bit" \
	    frozen m fk s0
	$MPI $dev --dist ssgd --init_from m --freeze_old --freeze_relations \
	    --epochs 2 dst fs 2>fs.err
	check "--dist ssgd at 2 ranks on the device: frozen bit for bit" \
	    frozen m fs s0 --rel
else
	skip "a bucket at a time on 2 ranks' devices: mpirun is not installed"
	skip "--dist ssgd at 2 ranks on the device: mpirun is not installed"
fi
check "the device runs wrote nothing else" test ! -e fz/checkpoint
