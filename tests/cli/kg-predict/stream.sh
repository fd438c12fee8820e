#!/usr/bin/env bash
# --stream: the entity rows are read from entities.npy as they are needed
# instead of from the mapping.  Tail, head and relation answers, scored
# triples with their ranks, nearest entities and the k best combinations
# equal those of a run without it, byte for byte; an entity map (rows in
# another order than the file's) is refused before anything is written.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
echo "1..10"

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls m ComplEx 16 || { notok "make model"; exit 0; }
printf 'virus\tinteracts_with\t?\n?\tlocation_of\tvirus\nvirus\t?\thuman\n' \
    >q.tsv
printf 'virus\tinteracts_with\thuman\nbacterium\tlocation_of\tcell\n' >t.tsv
printf 'virus\nhuman\n' >near.txt
printf 'virus\nbacterium\n' >heads.txt

# same NAME ARGS...: kg-predict ARGS with and without --stream.
same() {
	local name=$1; shift
	kg-predict -q "$@" >plain.out 2>plain.err &&
	    kg-predict -q --stream "$@" >stream.out 2>stream.err
	check "$name: exit 0" test $? -eq 0
	check "$name: the same answers" eval \
	    'test -s plain.out && cmp -s plain.out stream.out'
}
same "queries" -k 5 --filter umls m q.tsv
same "scored triples with ranks" --rank umls m t.tsv
same "nearest" --nearest -k 4 --format json umls m near.txt
same "cartesian" --cartesian -k 3 --head-file heads.txt umls m

cut -f2 umls/entities.tsv | awk '{ print NR - 1 "\t" $0 }' >emap.tsv
expect_fail "--stream refuses an entity map" 1 \
    "^kg-predict: --stream reads 'm/entities.npy' in its own row order; it cannot be combined with --entity-map$" \
    kg-predict --stream -o out.tsv --entities m/entities.npy \
    --relations m/relations.npy --model ComplEx --entity-map emap.tsv \
    umls q.tsv
check "nothing written" test ! -e out.tsv
