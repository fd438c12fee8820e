#!/usr/bin/env bash
# transform over a dataset extended since fit (kg-ingest --extend): the
# new entities' attributes are encoded with the fitted encoders (a value
# the fit never saw takes the encoder's unknown slot), the old entities'
# rows come out bit for bit as over the fitted dataset, shards of the
# extended dataset merge to its entity count, and transform --merge
# gives the same arrays.
source "$KG_TOP/tests/cli/lib.sh"
plan 7

printf 'a\tr\tb\nb\tr\tc\nc\tr\ta\n' >old.tsv
printf 'a\tr\tb\nb\tr\tc\nc\tr\ta\na\tr\td\nd\tr\te\n' >new.tsv
printf 'entity,n,c\na,1,x\nb,2,y\nc,,x\nd,5,y\ne,3,z\n' >t.csv
printf '{"tables": [{"path": "t.csv", "form": "wide", "header": true,
  "unknown_entities": "skip"}], "attributes": {"n": {"kind": "numeric",
  "n_bins": 2}, "c": {"kind": "categorical"}}}\n' >s.json
kg-ingest -q -o ds --train old.tsv &&
    kg-ingest -q --extend ds -o ds2 --train new.tsv &&
    kg-encode-attrs fit -q -d ds -s s.json -o model &&
    kg-encode-attrs transform -q -d ds -m model -o s0 &&
    kg-encode-attrs merge -q -m model -o f s0 ||
    { notok "the fitted dataset's features"; exit 0; }
kg-encode-attrs transform -q -d ds2 -m model -o t0 --shard 0/2 &&
    kg-encode-attrs transform -q -d ds2 -m model -o t1 --shard 1/2 &&
    kg-encode-attrs merge -q -m model -o f2 t0 t1
check "shards of the extended dataset merge" test -s f2/has_c.npy
check "the merged features count the extended dataset's entities" \
    test "$(jq '.figures.entities' f2/manifest.json)" = 5

# arr.py DIR NAME: the values of DIR/NAME.npy, one a line.
cat >arr.py <<'PY'
import ast, struct, sys
b = open(sys.argv[1] + "/" + sys.argv[2] + ".npy", "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
h = ast.literal_eval(b[10:10 + hl].decode("latin1"))
code = {"|u1": "B", "<i4": "i", "<i8": "q"}[h["descr"]]
n = h["shape"][0]
for v in struct.unpack("<%d%s" % (n, code), b[10 + hl:]):
    print(v)
PY
arr() { python3 arr.py "$@"; }
# old ATTR: the old entities' (a, b, c) rows of ATTR are f's.
old() {
	[ "$(arr f2 has_$1 | head -n 3)" = "$(arr f has_$1)" ] &&
	    [ "$(arr f2 $1_offsets | head -n 4)" = "$(arr f $1_offsets)" ] &&
	[ "$(arr f2 $1_indices | head -n "$(arr f $1_offsets | tail -n 1)")" = \
	    "$(arr f $1_indices)" ]
}
check "the old entities' rows are the fitted dataset's" eval 'old n && old c'
check "the new entities have their attributes" \
    test "$(arr f2 has_n | tail -n 2 | tr '\n' ' ')$(arr f2 has_c | tail -n 2 |
    tr '\n' ' ')" = "1 1 1 1 "
# c: x and y fitted; d (y) takes b's index, e (z, never seen) another.
ci=($(arr f2 c_indices))
check "a known value takes the fitted index, an unseen one the unknown slot" \
    eval 'test "${ci[3]}" = "${ci[1]}" && test "${ci[4]}" != "${ci[0]}" &&
    test "${ci[4]}" != "${ci[1]}"'
kg-encode-attrs transform -q -d ds2 -m model -o one
kg-encode-attrs merge -q -m model -o f1 one
same() {
	local a
	for a in has_n has_c n_offsets n_indices c_offsets c_indices; do
		cmp -s "$1/$a.npy" "$2/$a.npy" || return 1
	done
}
check "one shard = two shards" same f1 f2
kg-encode-attrs transform -q --merge --shards 2 -d ds2 -m model -o fm
check "transform --merge = transform and merge" same fm f2
