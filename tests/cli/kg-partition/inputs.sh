# kg-partition never removes or replaces what it reads, checks every ID
# array it reads against its manifest, and cleans up after killed runs
# (issue 12, items 1, 3, 4 and 8).  Golden stderr and exit codes.
source "$KG_TOP/tests/cli/lib.sh"
plan 14
gen=$KG_BUILD/aux/gen_graph
"$gen" -n 40 -m 150 -s 1 -o ds || { notok "gen_graph"; exit 1; }
sum() { find "$1" -type f -exec cat {} + | cksum; }
before=$(sum ds)

# Item 1: the output is the input, by any name.
golden "-f -o ds ds is refused" 1 \
    "kg-partition: output 'ds' is the input 'ds'" \
    kg-partition -q -f -o ds ds
golden "-f -o ./ds ds is refused" 1 \
    "kg-partition: output './ds/' is the input 'ds'" \
    kg-partition -q -f -o ./ds/ ds
ln -s ds link
golden "a symlink to the input is the input" 1 \
    "kg-partition: output 'link' is the input 'ds'" \
    kg-partition -q -f -o link ds
golden "an output inside the input" 1 \
    "kg-partition: output 'ds/parts' is inside the input 'ds'" \
    kg-partition -q -o ds/parts ds
golden "an input inside the output" 1 \
    "kg-partition: input 'ds' is inside the output '.'" \
    kg-partition -q -f -o . ds
check "the input is untouched" test "$(sum ds)" = "$before"
check "nothing else written" test "$(ls -A | tr '\n' ' ')" = "ds link "
rm link

# Item 4: a temporary left by a killed run (its PID gone) is removed by
# the next run for the same output; another output's is not.
sh -c 'exit 0' & dead=$!; wait $dead
mkdir -p ".parts.tmp.$dead/x" ".other.tmp.$dead"
echo half >".parts.tmp.$dead/x/train_buckets.npy"
check "a run after kill -9 succeeds" kg-partition -q -p 2 -o parts ds
check "and removes the stale temporary" test ! -e ".parts.tmp.$dead"
check "but not another output's" test -d ".other.tmp.$dead"
rm -rf ".other.tmp.$dead"

# Item 3: type IDs against figures.types (2^31 - 1 used to overflow
# kg-train's type count).  Row 1 of the 3 int32 rows ends the file but 4.
printf 'a\tr\tb\nb\tr\tc\nc\tr\ta\n' >t.tsv
printf 'a\tx\nb\ty\n' >types.tsv
kg-ingest -q -o typed --types types.tsv t.tsv
cp -r typed huge
printf '\377\377\377\177' | dd of=huge/types.npy bs=1 conv=notrunc \
    seek=$(($(stat -c %s huge/types.npy) - 8)) 2>/dev/null
golden "a type ID of 2^31 - 1 is refused" 1 \
    "kg-partition: huge/types.npy: row 1: type ID 2147483647 out of range (2 types)" \
    kg-partition -q -p 2 -o out huge
check "the valid typed dataset partitions" kg-partition -q -p 2 -o out typed

# Item 8: a manifest entry whose shape is not an array.
cp -r ds badshape
python3 - badshape/manifest.json <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["files"]["train.npy"]["shape"] = "150,3"
json.dump(m, open(sys.argv[1], "w"))
PY
golden "a shape that is not an array" 1 \
    "kg-partition: badshape/manifest.json: files.train.npy.shape is missing or not an array of at most 8 sizes" \
    kg-partition -q -p 2 -o out2 badshape
check "no output after the errors" test ! -e out2
