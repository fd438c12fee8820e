#!/usr/bin/env bash
# Under mpirun the ranks share the blocks of queries and rank 0 writes the
# report: the ranks are those of one plain process, bit for bit.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 7

command -v mpirun >/dev/null 2>&1 || skip_all "mpi: mpirun is not installed"
have_json || skip_all "mpi: neither jq nor python3"
make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls model ComplEx 16 || { notok "make model"; exit 0; }
MPI="timeout 60 mpirun --oversubscribe"

# Full ranking splits the candidate tiles (KG_EVAL_TILE = 1024 entities)
# among the ranks; UMLS's 135 entities are one tile, which would leave
# rank 1 nothing to rank, so this part runs on a generated graph of 3000
# entities (three tiles).
"$KG_BUILD/aux/gen_triples" -n 12000 -e 3000 -r 12 -s 5 >g.tsv &&
    kg-ingest -q -o big --split 0.8,0.1,0.1 --seed 1 g.tsv &&
    "$MKMODEL" big bigm ComplEx 16 || { notok "make the 3000-entity graph"; exit 0; }
kg-eval -q --threads 1 big bigm >plain.json
$MPI -np 2 kg-eval -q --threads 1 big bigm >mpi.json 2>mpi.err
check "2 ranks exit 0" test $? -eq 0
check "one report" test "$(grep -c '"protocol"' mpi.json)" -eq 1
check "ranks recorded" test "$(jget mpi.json .ranks)" = 2
check "2 ranks = plain (full ranking, candidates split)" test \
    "$(jget mpi.json .by_ties)" = "$(jget plain.json .by_ties)"

kg-eval -q --threads 1 --neg-sample 30 --batch 40 umls model >plain_s.json
$MPI -np 3 kg-eval -q --threads 1 --neg-sample 30 --batch 40 umls model >mpi_s.json
check "3 ranks = plain (sampled)" test \
    "$(jget mpi_s.json .by_ties)" = "$(jget plain_s.json .by_ties)"

$MPI -np 2 kg-eval -q umls nowhere >/dev/null 2>err.txt
rc=$?
check "error under mpirun: exit 1 (got $rc)" test "$rc" -eq 1
check "error under mpirun: message" grep -q "'nowhere' is not a directory" err.txt
