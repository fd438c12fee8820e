# kg-partition: every bad input gets a clear message, exit 1 (2 for
# usage, 3 for an unknown format version) and leaves nothing behind.
source "$KG_TOP/tests/cli/lib.sh"
plan 22
gen=$KG_BUILD/aux/gen_graph

"$gen" -n 30 -m 100 -o ds || { notok "gen_graph"; exit 1; }

nothing_left() { [ -z "$(ls -A)" ] || [ "$(ls -A)" = "ds" ]; }

expect_fail "P = 0" 2 "--parts: 0 is out of range" kg-partition -p 0 -o out ds
expect_fail "P not a number" 2 "--parts" kg-partition -p 4x -o out ds
expect_fail "P beyond the limit" 2 "--parts" kg-partition -p 5000 -o out ds
expect_fail "unknown method" 2 "unknown method 'kway'" kg-partition -m kway -o out ds
expect_fail "unknown assignment" 2 "unknown assignment" kg-partition -e both -o out ds
expect_fail "bad imbalance" 2 "--imbalance" kg-partition -i -1 -o out ds
expect_fail "no output" 2 "no output directory" kg-partition ds
expect_fail "no dataset" 2 "expected one dataset" kg-partition -o out
expect_fail "unknown option" 2 "^kg-partition: unrecognized option '--bogus'$" kg-partition --bogus -o out ds
check "nothing written on usage errors" nothing_left

expect_fail "more parts than entities" 1 "cannot cut 30 entities into 31 parts" \
	kg-partition -p 31 -o out ds
check "nothing written" nothing_left
check "P = number of entities works" kg-partition -q -p 30 -m random -o all ds
rm -rf all

mkdir notds
expect_fail "not a dataset dir" 1 "notds" kg-partition -o out notds
expect_fail "missing input" 1 "nowhere" kg-partition -o out nowhere
kg-partition -q -p 2 -o parts ds
expect_fail "a partition dir is not a dataset" 1 \
	"'parts' was written by kg-partition, expected a kg-ingest output" \
	kg-partition -o out parts
rm -rf parts
cp -r ds future
sed -i 's/"format_version": 1/"format_version": 99/' future/manifest.json
expect_fail "unknown format version" 3 "99" kg-partition -o out future
cp -r ds broken
head -c 200 ds/train.npy > broken/train.npy
expect_fail "truncated train.npy" 1 "train.npy" kg-partition -o out broken
rm -rf notds future broken
check "nothing written on data errors" nothing_left

check "--help to stdout, exit 0" kg-partition --help
check "help names every option" bash -c 'kg-partition --help | grep -q -- --imbalance'
check "--version" bash -c 'kg-partition --version | grep -q "^kg-partition [0-9]"'
