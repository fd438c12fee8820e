#!/usr/bin/env bash
# Plain .npy embeddings with --entities/--relations/--model give the same
# metrics as the model directory holding them; reciprocal models too.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 24

make_umls umls || { notok "ingest umls"; exit 0; }
have_json || skip_all "arrays: neither jq nor python3"

for spec in "ComplEx 16" "RotatE 16" "TransR 8 --rel-dim 4" "RESCAL 8" \
    "TransE_l1 12"; do
	set -- $spec
	name=$1 dim=$2; shift 2
	"$MKMODEL" --gamma 6 "$@" umls "m_$name" "$name" "$dim" ||
	    { notok "make $name"; continue; }
	kg-eval -q umls "m_$name" >dir.json
	kg-eval -q --entities "m_$name/entities.npy" \
	    --relations "m_$name/relations.npy" --model "$name" --gamma 6 \
	    umls >arr.json
	check "$name: arrays exit 0" test $? -eq 0
	check "$name: same MRR" test "$(jget dir.json .metrics.both.mrr)" = \
	    "$(jget arr.json .metrics.both.mrr)"
	check "$name: model_dir null for arrays" test "$(jget arr.json .model_dir)" = null
	check "$name: entities path recorded" test "$(jget arr.json .entities)" = "m_$name/entities.npy"
done

"$MKMODEL" --reciprocal umls recip DistMult 16 || notok "make reciprocal"
kg-eval -q umls recip >dir.json
check "reciprocal dir exit 0" test $? -eq 0
check "reciprocal recorded" test "$(jget dir.json .reciprocal)" = true
kg-eval -q --entities recip/entities.npy --relations recip/relations.npy \
    --model distmult --reciprocal umls >arr.json
check "reciprocal arrays same MRR" test "$(jget dir.json .metrics.both.mrr)" = \
    "$(jget arr.json .metrics.both.mrr)"
# Without --reciprocal the relation table has twice the dataset's rows.
expect_fail "reciprocal table without --reciprocal" 1 \
    "model has 135 entities and 92 relations, dataset 'umls' has 135 and 46" \
    kg-eval -q --entities recip/entities.npy --relations recip/relations.npy \
    --model DistMult umls
