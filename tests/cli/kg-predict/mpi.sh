#!/usr/bin/env bash
# Under mpirun every rank scores its tiles of candidates and rank 0
# merges the top-k lists: the output equals one plain process's, byte for
# byte, for tail, head and relation queries, filtered, and nearest.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 9

command -v mpirun >/dev/null 2>&1 || skip_all "mpi: mpirun is not installed"
MPI="timeout 120 mpirun --oversubscribe"
# 3000 entities: three candidate tiles, so the ranks really split them.
"$KG_BUILD/aux/gen_triples" -n 20000 -e 3000 -r 12 -s 4 all.tsv
kg-ingest -q --split 0.9,0.05,0.05 --seed 1 -o ds all.tsv ||
    { notok "ingest"; exit 0; }
"$MKMODEL" ds m ComplEx 16 || { notok "make model"; exit 0; }
awk -F'\t' 'NR % 97 == 1 {
	n++
	if (n % 3 == 0) print "?\t" $2 "\t" $3
	else if (n % 3 == 1) print $1 "\t" $2 "\t?"
	else print $1 "\t?\t" $3
}' all.tsv >q.tsv
check "some queries" test "$(wc -l <q.tsv)" -gt 100

kg-predict -q --threads 1 -k 15 --filter ds m q.tsv >plain.tsv
$MPI -np 2 kg-predict -q --threads 1 -k 15 --filter ds m q.tsv >np2.tsv \
    2>np2.err
check "2 ranks exit 0" test $? -eq 0
check "2 ranks = 1 process" cmp -s plain.tsv np2.tsv
$MPI -np 3 kg-predict -q --threads 1 -k 15 --format json ds m q.tsv \
    >np3.json
kg-predict -q --threads 2 -k 15 --format json ds m q.tsv >plain.json
check "3 ranks = 1 process (json, 2 threads)" cmp -s plain.json np3.json

# Scored triples with their filtered ranks: the ranks split the candidate
# tiles and sum their counts.
awk -F'\t' 'NR % 89 == 1' all.tsv >t.tsv
kg-predict -q --rank ds m t.tsv >rank1.tsv
$MPI -np 2 kg-predict -q --rank ds m t.tsv >rank2.tsv
check "scored triples with --rank: 2 ranks = 1 process" cmp -s rank1.tsv rank2.tsv
check "ranks beyond the first tile" awk -F'\t' 'NR > 1 && $5 > 1024 { f = 1 } END { exit !f }' rank1.tsv

cut -f2 ds/entities.tsv | sed -n '1~50p' >names.txt
kg-predict -q --nearest -k 9 ds m names.txt >near1.tsv
$MPI -np 2 kg-predict -q --nearest -k 9 ds m names.txt >near2.tsv
check "nearest: 2 ranks = 1 process" cmp -s near1.tsv near2.tsv

printf 'nope\t/rel/1\t?\n' >bad.tsv
$MPI -np 2 kg-predict -q ds m bad.tsv >/dev/null 2>err.txt
rc=$?
check "bad query under mpirun: exit 1 (got $rc)" test "$rc" -eq 1
check "bad query under mpirun: message" grep -q "bad.tsv:1: unknown entity 'nope'" err.txt
