#!/usr/bin/env bash
# kg-eval -o never replaces what it reads (issue 12, item 1), and the
# report is written atomically with nothing left beside it.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 7

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls model TransE_l2 16 || { notok "make model"; exit 0; }
sum() { find "$1" -type f -exec cat {} + | cksum; }
before="$(sum umls) $(sum model)"

golden "-o an input array with --force" 1 \
    "kg-eval: output 'model/entities.npy' is inside the input 'model'" \
    kg-eval -q --force -o model/entities.npy umls model
golden "-o the model directory" 1 \
    "kg-eval: output 'model' is the input 'model'" \
    kg-eval -q --force -o model umls model
golden "-o the entity array given with --entities" 1 \
    "kg-eval: output './model/entities.npy' is the input 'model/entities.npy'" \
    kg-eval -q --force -o ./model/entities.npy --entities model/entities.npy \
    --relations model/relations.npy --model TransE_l2 umls
check "the inputs are untouched" test "$(sum umls) $(sum model)" = "$before"
check "a report beside them" kg-eval -q -o report.json umls model
check "no temporary left" sh -c '! ls -a | grep -q "tmp"'
golden "an existing report without --force" 1 \
    "kg-eval: output 'report.json' exists; use --force to replace it" \
    kg-eval -q -o report.json umls model
