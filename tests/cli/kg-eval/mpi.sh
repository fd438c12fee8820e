#!/usr/bin/env bash
# Under mpirun the ranks share the blocks of queries and rank 0 writes the
# report: the ranks are those of one plain process, bit for bit.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"

command -v mpirun >/dev/null 2>&1 || { skip "mpi: mpirun is not installed"; exit 0; }
have_json || { skip "mpi: neither jq nor python3"; exit 0; }
make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls model ComplEx 16 || { notok "make model"; exit 0; }
MPI="timeout 60 mpirun --oversubscribe"

kg-eval -q --threads 1 umls model >plain.json
$MPI -np 2 kg-eval -q --threads 1 umls model >mpi.json 2>mpi.err
check "2 ranks exit 0" test $? -eq 0
check "one report" test "$(grep -c '"protocol"' mpi.json)" -eq 1
check "ranks recorded" test "$(jget mpi.json .ranks)" = 2
check "2 ranks = plain (full ranking)" test \
    "$(jget mpi.json .by_ties)" = "$(jget plain.json .by_ties)"

kg-eval -q --threads 1 --neg-sample 30 --batch 40 umls model >plain_s.json
$MPI -np 3 kg-eval -q --threads 1 --neg-sample 30 --batch 40 umls model >mpi_s.json
check "3 ranks = plain (sampled)" test \
    "$(jget mpi_s.json .by_ties)" = "$(jget plain_s.json .by_ties)"

$MPI -np 2 kg-eval -q umls nowhere >/dev/null 2>err.txt
rc=$?
check "error under mpirun: exit 1 (got $rc)" test "$rc" -eq 1
check "error under mpirun: message" grep -q "'nowhere' is not a directory" err.txt
