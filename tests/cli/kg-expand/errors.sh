# kg-expand: bad input is refused with a message, exit 1 (2 for usage, 3
# for an unknown format version), and nothing is written.
source "$KG_TOP/tests/cli/lib.sh"
plan 21
gen=$KG_BUILD/aux/gen_graph

"$gen" -n 50 -m 200 -s 1 -o ds || { notok "gen_graph"; exit 1; }
"$gen" -n 50 -m 200 -s 2 -o ds2
kg-partition -q -p 2 -o parts ds
kg-partition -q -p 2 -o parts2 ds2

nothing_left() { [ "$(ls -A | tr '\n' ' ')" = "ds ds2 parts parts2 " ]; }

expect_fail "hops out of range" 2 "--hops" kg-expand -k 9 -p parts -o out ds
expect_fail "fan-out count must match hops" 2 "2 values for 1 hops" \
	kg-expand -k 1 -c 25,10 -p parts -o out ds
expect_fail "fan-out must be whole" 2 "whole number" kg-expand -k 1 -c 2.5 -p parts -o out ds
expect_fail "fan-out must be positive" 2 "--fanout" kg-expand -k 1 -c 0 -p parts -o out ds
expect_fail "no partitions" 2 "no partition directory" kg-expand -o out ds
expect_fail "no output" 2 "no output directory" kg-expand -p parts ds
expect_fail "no dataset" 2 "expected one dataset" kg-expand -p parts -o out
check "nothing written on usage errors" nothing_left

expect_fail "partitions of another dataset" 1 "was not made from dataset" \
	kg-expand -p parts2 -o out ds
expect_fail "a dataset is not a partition dir" 1 "kg-partition" \
	kg-expand -p ds2 -o out ds
expect_fail "missing feature dir" 1 "nofeat" kg-expand -F nofeat -p parts -o out ds
"$gen" features badfeat 50
cp badfeat/tags_indices.npy badfeat/tags_offsets.npy
expect_fail "broken CSR group" 1 "tags_offsets.npy" kg-expand -F badfeat -p parts -o out ds
rm -rf badfeat
mkdir nofit
"$gen" features nofit/f 51
expect_fail "features of another graph" 1 "tags_offsets.npy: expected int32 or int64 offsets of shape \\[51\\]" \
	kg-expand -F nofit/f -p parts -o out ds
expect_fail "empty feature dir" 1 "no array indexed" kg-expand -F nofit -p parts -o out ds
rm -rf nofit
cp -r parts future
sed -i 's/"format_version": 1/"format_version": 7/' future/manifest.json
expect_fail "unknown format version" 3 "7" kg-expand -p future -o out ds
rm -rf future
cp -r parts torn
head -c 100 parts/edge_part.npy > torn/edge_part.npy
expect_fail "truncated partition array" 1 "edge_part.npy" kg-expand -p torn -o out ds
rm -rf torn
check "nothing written on data errors" nothing_left

kg-expand -q -p parts -o out ds
expect_fail "existing output" 1 "exists" kg-expand -q -p parts -o out ds
check "--force replaces" kg-expand -q -f -k 2 -p parts -o out ds
check "--help to stdout, exit 0" bash -c 'kg-expand --help | grep -q -- --fanout'
check "--version" bash -c 'kg-expand --version | grep -q "^kg-expand [0-9]"'
