#!/usr/bin/env bash
# kg-partition's summary says in words what METIS's cut counts (issue
# 32, item 11), with the number the manifest records; a random partition,
# which has no such cut, leaves the line out.
. "$KG_TOP/tests/cli/lib.sh"
plan 3
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
kg-partition -p 2 -m metis -s 1 -o pm ds 2>err || notok "kg-partition metis"
cut=$(jq -r .figures.metis_edge_cut pm/manifest.json)
check "the cut in words, with the manifest's number ($cut)" grep -qxF \
    "linked entity pairs split between parts: $cut (what METIS minimised: a pair counts once, however many triples link it)" err
check "no unexplained 'simple graph'" sh -c '! grep -q "simple graph" err'
kg-partition -p 2 -m random -s 1 -o pr ds 2>errr || notok "kg-partition random"
check "random: no METIS line" sh -c '! grep -q "METIS" errr'
