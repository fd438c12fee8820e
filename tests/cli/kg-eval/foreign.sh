#!/usr/bin/env bash
# Embeddings from another tool: float64 arrays whose rows are in another
# order, with row<TAB>name mappings, give the metrics of the model they
# were copied from; bad mappings are refused with file:line.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 23

py=$(numpy_python)
[ -n "$py" ] || skip_all "foreign: no python3 with numpy"
have_json || skip_all "foreign: neither jq nor python3"
make_umls umls || { notok "ingest umls"; exit 0; }

for spec in "ComplEx 16" "TransE_l2 12" "TransR 8 --rel-dim 4"; do
	set -- $spec
	name=$1 dim=$2; shift 2
	"$MKMODEL" --gamma 6 "$@" umls "m_$name" "$name" "$dim" ||
	    { notok "make $name"; continue; }
	"$py" - "m_$name" umls <<'PY'
import sys
import numpy as np
md, ds = sys.argv[1:3]
E, R = np.load(md + "/entities.npy"), np.load(md + "/relations.npy")
pe = np.random.RandomState(1).permutation(len(E))
pr = np.random.RandomState(2).permutation(len(R))
np.save("e64.npy", E[pe].astype(np.float64))
np.save("r64.npy", R[pr].astype(np.float64))
np.save("e32.npy", E[pe])
ent = [l.rstrip("\n").split("\t")[1] for l in open(ds + "/entities.tsv")]
rel = [l.rstrip("\n").split("\t")[1] for l in open(ds + "/relations.tsv")]
# Row i holds entity pe[i]; a header line as PyKEEN writes one.
with open("emap.tsv", "w") as f:
    f.write("id\tlabel\n")
    for i in range(len(E)):
        f.write("%d\t%s\n" % (i, ent[pe[i]]))
    f.write("%d\tnot_in_the_dataset\n" % 0)
with open("rmap.tsv", "w") as f:
    for i in range(len(R)):
        f.write("%d\t%s\n" % (i, rel[pr[i]]))
PY
	kg-eval -q umls "m_$name" >dir.json
	kg-eval --entities e64.npy --relations r64.npy --model "$name" \
	    --gamma 6 --entity-map emap.tsv --relation-map rmap.tsv umls \
	    >arr.json 2>err.txt
	check "$name: exit 0" test $? -eq 0
	check "$name: same metrics" test "$(jget dir.json .by_ties)" = \
	    "$(jget arr.json .by_ties)"
	check "$name: note on float64" grep -q \
	    "^kg-eval: note: 'e64.npy' holds float64; using it as float32$" err.txt
	check "$name: maps recorded" test "$(jget arr.json .entity_map)" = emap.tsv
done
# float32 rows reordered by the map alone, relations in dataset order.
kg-eval -q --entities e32.npy --relations m_TransR/relations.npy \
    --model TransR --gamma 6 --entity-map emap.tsv umls >arr.json
check "entity map alone" test "$(jget dir.json .by_ties)" = \
    "$(jget arr.json .by_ties)"
check "no temporary directory left" test -z "$(ls -d "$TMPDIR"/kgpipe-arrays.* 2>/dev/null)"

A="--entities e32.npy --relations m_TransR/relations.npy --model TransR"
head -5 emap.tsv >short.tsv
expect_fail "a name without a row" 1 "short.tsv: entity '.*' \(ID [0-9]+ of 'umls'\) has no row" \
    kg-eval $A --entity-map short.tsv umls
{ cat emap.tsv; sed -n 2p emap.tsv; } >dup.tsv
golden "a name given twice" 1 \
    "kg-eval: dup.tsv:$(($(wc -l <emap.tsv) + 1)): name '$(sed -n 2p emap.tsv | cut -f2)' was given a row before" \
    kg-eval -q $A --entity-map dup.tsv umls
printf '0\tanimal\n999\tbird\n' >past.tsv
golden "a row past the array" 1 "kg-eval: past.tsv:2: row 999 is past the array's 135 rows" \
    kg-eval -q $A --entity-map past.tsv umls
printf '0\tanimal\nx1\tbird\n' >nonum.tsv
golden "not a row number" 1 "kg-eval: nonum.tsv:2: 'x1' is not a row number" \
    kg-eval -q $A --entity-map nonum.tsv umls
printf '0 animal\n' >onefield.tsv
golden "one field" 1 "kg-eval: onefield.tsv:1: expected 'row<TAB>name', found 1 fields" \
    kg-eval -q $A --entity-map onefield.tsv umls
"$py" -c 'import numpy as np; np.save("big.npy", np.full((135, 8), 1e300))'
golden "beyond float32" 1 "kg-eval: big.npy: row 0, column 0: 1e+300 is beyond float32" \
    kg-eval -q --entities big.npy --relations m_TransR/relations.npy \
    --model TransR umls
"$py" -c 'import numpy as np; np.save("ints.npy", np.zeros((135, 8), dtype=np.int32))'
golden "integer array" 1 "kg-eval: ints.npy: dtype '<i4'; expected float32 or float64" \
    kg-eval -q --entities ints.npy --relations m_TransR/relations.npy \
    --model TransR --entity-map emap.tsv umls
expect_fail "relation map with reciprocal" 1 "cannot be combined with reciprocal" \
    kg-eval -q $A --relation-map rmap.tsv --reciprocal umls
expect_fail "maps without arrays" 2 "apply to --entities and --relations" \
    kg-eval --entity-map emap.tsv umls m_TransR
