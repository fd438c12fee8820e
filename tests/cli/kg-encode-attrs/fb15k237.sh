#!/usr/bin/env bash
# The real FB15k-237 attributes (mmkb numbers and fractional-year dates,
# CAKE concepts, names) with examples/schemas/fb15k237.json.
source "$KG_TOP/tests/cli/lib.sh"
plan 7
d=$(shared_data fb15k-237)
if [ -z "$d" ]; then
	skip_all "fb15k-237 attributes: KG_SHARED_DATA not set or fb15k-237 absent"
fi
if ! command -v jq >/dev/null 2>&1; then
	skip_all "fb15k-237 attributes: jq not available"
fi
check "ingest fb15k-237" kg-ingest -q -o ds --train "$d/train.txt.gz" \
    --valid "$d/valid.txt.gz" --test "$d/test.txt.gz"
check "fit" kg-encode-attrs fit -q -d ds \
    -s "$KG_TOP/examples/schemas/fb15k237.json" --tables-dir "$d/attrs" \
    -o model 2>/dev/null
check "transform" kg-encode-attrs transform -q -d ds -m model -o feat
# Coverage as the dataset's README states it.
for pair in concept:14533 name:14541 people.person.date_of_birth:4424; do
	a=${pair%%:*} want=${pair#*:}
	got=$(jq ".figures.attributes.\"$a\".entities_with_value" \
	    feat/manifest.json 2>/dev/null)
	if [ "$got" = "$want" ]; then ok "$a on $want entities"; else
		notok "$a on $want entities (got $got)"; fi
done
check "concepts: 94,787 (entity, concept) pairs" \
    sh -c '[ "$(jq ".figures.attributes.concept.nnz" feat/manifest.json)" = 94787 ]'
