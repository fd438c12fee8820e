#!/usr/bin/env bash
# Bad input: clear message, the documented exit status, no output left.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 24

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls good DistMult 16 || notok "make good"
"$MKMODEL" umls good32 DistMult 32 || notok "make good32"
"$MKMODEL" --extra-entities 3 umls extra DistMult 16 || notok "make extra"
"$MKMODEL" --nan 17 umls nan DistMult 16 || notok "make nan"

expect_fail "entity rows != dataset entities" 1 \
    "model has 138 entities and 46 relations, dataset 'umls' has 135 and 46" \
    kg-eval -q -o out.json umls extra
check "no output after failure" test ! -e out.json
expect_fail "NaN in embeddings" 1 "entities.npy: row 17, column 0 is nan" \
    kg-eval -q umls nan
expect_fail "wrong relation width" 1 \
    "relations.npy: relation rows have 32 values, DistMult with dimension 16 needs 16" \
    kg-eval -q --entities good/entities.npy --relations good32/relations.npy \
    --model DistMult umls
expect_fail "TransR width not k * (dim + 1)" 1 "does not fit TransR" \
    kg-eval -q --entities good/entities.npy --relations good/relations.npy \
    --model TransR umls
expect_fail "unknown model" 1 "unknown model 'TransH'" \
    kg-eval -q --entities good/entities.npy --relations good/relations.npy \
    --model TransH umls
expect_fail "ComplEx odd width" 1 "relation rows" \
    kg-eval -q --entities good/entities.npy --relations good32/relations.npy \
    --model ComplEx umls
expect_fail "missing model dir" 1 "'nowhere' is not a directory" \
    kg-eval -q umls nowhere
expect_fail "dataset given as model" 1 "written by kg-ingest, expected a kg-train output" \
    kg-eval -q umls umls
expect_fail "missing entities file" 1 "nowhere.npy" \
    kg-eval -q --entities nowhere.npy --relations good/relations.npy \
    --model DistMult umls

# A model dir whose array no longer matches its manifest.
cp -r good changed
cp good32/relations.npy changed/relations.npy
expect_fail "array changed behind the manifest" 1 "relations.npy" \
    kg-eval -q umls changed

# A manifest from an unknown format version: exit 3.
cp -r good future
sed 's/"format_version": 1/"format_version": 99/' good/manifest.json \
    >future/manifest.json
expect_fail "unknown format version" 3 "99" kg-eval -q umls future

# An empty split.
src=$(fixture_data umls)
kg-ingest -q -o notest --train "$src/train.txt.gz" --valid "$src/valid.txt.gz" ||
    notok "ingest without test"
"$MKMODEL" notest m_notest DistMult 8 || notok "make m_notest"
expect_fail "empty split" 1 "split 'test' of 'notest' is empty" \
    kg-eval -q notest m_notest

# Usage errors: exit 2.
expect_fail "no arguments" 2 "expected DATASET_DIR MODEL_DIR" kg-eval
expect_fail "bad split" 2 "--split: unknown value 'train'" \
    kg-eval --split train umls good
expect_fail "bad ties" 2 "--ties: unknown value 'mean'" \
    kg-eval --ties mean umls good
expect_fail "bad neg-mode" 2 "--neg-mode: unknown value 'zipf'" \
    kg-eval --neg-sample 5 --neg-mode zipf umls good
expect_fail "neg-sample 0" 2 "^kg-eval: --neg-sample: 0 is out of range" kg-eval --neg-sample 0 umls good
expect_fail "threads junk" 2 "^kg-eval: --threads: '2x' is not a non-negative integer" kg-eval --threads 2x umls good
expect_fail "batch 0" 2 "^kg-eval: --batch: 0 is out of range" kg-eval --batch 0 umls good
expect_fail "arrays need a model" 2 "^kg-eval: --entities, --relations and --model go together" \
    kg-eval --entities good/entities.npy umls
expect_fail "arrays and a model dir" 2 "^kg-eval: --entities, --relations and --model go together" \
    kg-eval --entities good/entities.npy --relations good/relations.npy \
    --model DistMult umls good
expect_fail "--force without -o" 2 "--force applies to -o" \
    kg-eval --force umls good
expect_fail "unknown option" 2 "^kg-eval: unrecognized option '--bogus'$" kg-eval --bogus umls good
