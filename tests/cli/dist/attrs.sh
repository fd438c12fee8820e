# kg-encode-attrs transform --merge, alone and under mpirun on this host:
# every shard encoded (shard k on rank k mod size), gathered to rank 0
# over MPI and merged, gives the feature arrays of transform + merge byte
# for byte; --ship-inputs sends the inputs to the other ranks' own
# temporary directories, which are gone afterwards.  A rank that cannot
# read its tables ends the job with one message naming it, exit 1, and
# no features.
source "$KG_TOP/tests/cli/lib.sh"
plan 11

if ! command -v mpirun >/dev/null; then
	skip_all "dist attrs: mpirun is not installed"
fi
if [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ]; then
	skip_all "dist attrs: kg_gen_enterprise is missing"
fi
MPI="timeout 60 mpirun --oversubscribe"
enterprise_fixture 400 || { notok "dist attrs: fit, transform, merge"; exit 1; }
mkdir tmp
export TMPDIR=$PWD/tmp
a="transform --merge -q -j 1 -d ds -m am"

# same_features DIR: DIR's arrays are feat's, byte for byte, all 45.
same_features() {
	local f n=0
	for f in feat/*.npy; do
		cmp -s "$f" "$1/$(basename "$f")" || return 1
		n=$((n + 1))
	done
	[ "$n" -eq 45 ] && [ "$(ls "$1"/*.npy | wc -l)" -eq 45 ]
}

kg-encode-attrs $a -o plain
check "dist attrs: --merge in one process = transform + merge, byte for byte" \
    same_features plain
$MPI -np 2 kg-encode-attrs $a -o r2
check "dist attrs: 2 ranks = transform + merge, byte for byte" \
    same_features r2
check "dist attrs: the features record 2 ranks and 2 shards" \
    sh -c "jq -e '.config.ranks == 2 and .config.shards == 2' r2/manifest.json >/dev/null"
$MPI -np 3 kg-encode-attrs $a --shards 5 --ship-inputs -o r3
check "dist attrs: 3 ranks, 5 shards, inputs shipped = transform + merge" \
    same_features r3
check "dist attrs: no shipped input or shard is left in TMPDIR" \
    test -z "$(ls -A tmp)"

# Rank 1 reads its tables from a directory that does not exist.
err=$($MPI -np 1 kg-encode-attrs $a -o bad : \
    -np 1 kg-encode-attrs $a -o bad --tables-dir "$PWD/nowhere" 2>&1)
rc=$?
check "dist attrs: a rank that cannot read its table: exit 1 (got $rc)" \
    test "$rc" -eq 1
check "dist attrs: ... one message, naming the rank and the table" \
    test "$(grep -c '^kg-encode-attrs: ' <<<"$err")" -eq 1 -a \
    -n "$(grep "^kg-encode-attrs: rank 1 (host [^)]*): cannot open '$PWD/nowhere/[a-z]*\.csv'" <<<"$err")"
check "dist attrs: ... and no features, no temporary" \
    test ! -e bad -a -z "$(ls -A | grep '\.tmp\.')" -a -z "$(ls -A tmp)"

# An output that exists stops every rank before any work.
err=$($MPI -np 2 kg-encode-attrs $a -o r2 2>&1)
rc=$?
check "dist attrs: an existing output without -f: exit 1, one message" \
    test "$rc" -eq 1 -a "$(grep -c "^kg-encode-attrs: output 'r2' exists" <<<"$err")" -eq 1
check "dist attrs: ... and it is left as it was" same_features r2
$MPI -np 2 kg-encode-attrs $a -f -o r2
check "dist attrs: -f replaces it" same_features r2
