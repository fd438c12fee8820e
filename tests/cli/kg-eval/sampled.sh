#!/usr/bin/env bash
# Sampled evaluation: labelled as such, deterministic for a seed whatever
# the thread count, uniform and degree negatives.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 11

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls model ComplEx 16 || { notok "make model"; exit 0; }
have_json || skip_all "sampled: neither jq nor python3"

kg-eval --neg-sample 20 --threads 1 --batch 16 umls model >s1.json 2>err.txt
check "sampled exit 0" test $? -eq 0
check "protocol sampled" test "$(jget s1.json .protocol)" = sampled
check "negatives recorded" test "$(jget s1.json .negatives)" = 20
check "neg_mode uniform" test "$(jget s1.json .neg_mode)" = uniform
check "table says sampled" grep -q 'SAMPLED' err.txt
check "MR within 1..21" awk -v x="$(jget s1.json .by_ties.pessimistic.both.mr)" \
    'BEGIN { exit !(x >= 1 && x <= 21) }'
kg-eval -q --neg-sample 20 --threads 2 --batch 16 umls model >s2.json
check "same result with 2 threads" test \
    "$(jget s1.json .metrics)" = "$(jget s2.json .metrics)"
kg-eval -q --neg-sample 20 --seed 7 --batch 16 umls model >s3.json
check "seed changes the draw" test \
    "$(jget s1.json .metrics)" != "$(jget s3.json .metrics)"
kg-eval -q --neg-sample 20 --neg-mode degree umls model >d.json
check "degree mode" test "$(jget d.json .neg_mode)" = degree

# Full ranking: threads and batch sizes change nothing.
kg-eval -q --threads 1 --batch 1000 umls model >f1.json
kg-eval -q --threads 2 --batch 7 umls model >f2.json
check "full ranking: same with 2 threads, batch 7" test \
    "$(jget f1.json .by_ties)" = "$(jget f2.json .by_ties)"
check "full protocol" test "$(jget f1.json .protocol)" = full
