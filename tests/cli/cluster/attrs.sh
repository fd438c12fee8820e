# kg-encode-attrs transform --merge --ship-inputs on 2 and 4 hosts of
# tests/cluster that share no directory: the encoder is fitted on host 1
# from tables on host 1's disk; rank 0 sends the other hosts the dataset,
# the model and the tables, each rank encodes its shards, and rank 0
# gathers and merges them into the features one host writes, byte for
# byte.  The other hosts' disks are left as they were.  Without
# --ship-inputs host 2 (holding the dataset and model, not the tables)
# cannot read the tables: one message naming rank 1 and its host, exit 1,
# no features.
. "$KG_TOP/tests/cli/lib.sh"
. "$KG_TOP/tests/cluster/cluster.sh"
plan 8
if ! why=$(cluster_usable); then
	skip_all "cluster attrs: $why"
fi
if [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ]; then
	skip_all "cluster attrs: kg_gen_enterprise is missing"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
enterprise_fixture 400 || { notok "cluster attrs: fit, transform, merge"; exit 1; }

# same_features DIR: DIR's arrays are feat's, byte for byte, all 45.
same_features() {
	local f n=0
	for f in feat/*.npy; do
		cmp -s "$f" "$1/$(basename "$f")" || return 1
		n=$((n + 1))
	done
	[ "$n" -eq 45 ] && [ "$(ls "$1"/*.npy | wc -l)" -eq 45 ]
}
# untouched I...: the disks of hosts I... hold nothing but an empty .tmp.
untouched() {
	local i h
	for i in "$@"; do
		h=$(cluster_dir "$i")
		[ -z "$(ls -A "$h" | grep -v '^\.tmp$')" ] &&
		    [ -z "$(ls -A "$h/.tmp")" ] || return 1
	done
}

cluster_up 4 || { notok "cluster attrs: 4 hosts came up"; exit 1; }
h1=$(cluster_dir 1) S=$CLUSTER_SCRATCH
cp -R ent/data ds "$h1/"
cluster_exec 1 "$KG_BIN/kg-encode-attrs" fit -q -d $S/ds \
    -s $S/data/schema.json -o $S/am ||
    { notok "cluster attrs: fit on host 1"; exit 1; }
E="$KG_BIN/kg-encode-attrs transform --merge -q -j 1 -d $S/ds -m $S/am"

cluster_mpirun -np 2 $E --ship-inputs -o $S/f2
check "cluster attrs: 2 hosts, inputs shipped = one host, byte for byte" \
    same_features "$h1/f2"
cluster_mpirun -np 4 $E --ship-inputs --shards 6 -o $S/f4
check "cluster attrs: 4 hosts x 6 shards, inputs shipped = one host" \
    same_features "$h1/f4"
check "cluster attrs: the features record 4 ranks and 6 shards" sh -c \
    "jq -e '.config.ranks == 4 and .config.shards == 6' '$h1/f4/manifest.json' >/dev/null"
check "cluster attrs: the other hosts' disks are as they were" \
    untouched 2 3 4

# Host 2 has the dataset and the model, not the tables.
h2=$(cluster_dir 2)
cp -R ds "$h1/am" "$h2/"
err=$(cluster_mpirun -np 2 $E -o $S/bad 2>&1)
rc=$?
check "cluster attrs: without --ship-inputs host 2 cannot read: exit 1 (got $rc)" \
    test "$rc" -eq 1
check "cluster attrs: ... one message, naming rank 1, host 2 and the table" \
    test "$(grep -c '^kg-encode-attrs: ' <<<"$err")" -eq 1 -a \
    -n "$(grep "^kg-encode-attrs: rank 1 (host kg${CLUSTER_ID}h2): cannot open '$S/data/[a-z]*\.csv'" <<<"$err")"
check "cluster attrs: ... no features and no temporary on host 1" \
    test ! -e "$h1/bad" -a -z "$(ls -A "$h1" | grep '\.tmp\.')" \
    -a -z "$(ls -A "$h1/.tmp")"
check "cluster attrs: ... nor on host 2" \
    test "$(ls -A "$h2" | tr '\n' ' ')" = ".tmp am ds " -a -z "$(ls -A "$h2/.tmp")"
