# kg-expand never removes or replaces what it reads (issue 12, item 1)
# and refuses partition arrays that do not fit the dataset (item 3).
source "$KG_TOP/tests/cli/lib.sh"
plan 8
gen=$KG_BUILD/aux/gen_graph
"$gen" -n 50 -m 200 -s 1 -o ds || { notok "gen_graph"; exit 1; }
kg-partition -q -p 2 -o p2 ds
"$gen" features feat 50
sum() { find "$1" -type f -exec cat {} + | cksum; }
before="$(sum ds) $(sum p2) $(sum feat)"

golden "-f -p p2 -o p2 is refused" 1 \
    "kg-expand: output 'p2' is the input 'p2'" \
    kg-expand -q -f -p p2 -o p2 ds
golden "-f -o ds is refused" 1 \
    "kg-expand: output 'ds' is the input 'ds'" \
    kg-expand -q -f -p p2 -o ds ds
golden "the feature directory is an input too" 1 \
    "kg-expand: output 'feat/' is the input 'feat'" \
    kg-expand -q -f -F feat -p p2 -o feat/ ds
golden "an output inside the partition directory" 1 \
    "kg-expand: output 'p2/x' is inside the input 'p2'" \
    kg-expand -q -p p2 -o p2/x ds
check "the inputs are untouched" \
    test "$(sum ds) $(sum p2) $(sum feat)" = "$before"
check "a good run" kg-expand -q -F feat -p p2 -o x2 ds

# A bucket row whose relation the dataset does not have (every row of
# train_buckets.npy is 12 bytes; the last relation ID sits at size - 8).
cp -r p2 badrel
printf '\377\377\377\017' | dd of=badrel/train_buckets.npy bs=1 \
    conv=notrunc seek=$(($(stat -c %s badrel/train_buckets.npy) - 8)) \
    2>/dev/null
golden "a relation ID out of range in a bucket" 1 \
    "kg-expand: badrel/train_buckets.npy: row 199: relation 268435455 out of range (10 relations in 'ds')" \
    kg-expand -q -p badrel -o out ds
check "nothing written" test ! -e out
