#!/usr/bin/env bash
# kg-predict rejects bad queries with file:line, bad usage with exit 2,
# and leaves no output file behind on an error.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 23

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls m DistMult 8 || { notok "make model"; exit 0; }
"$MKMODEL" --rel-dim 4 umls tr TransR 8 || notok "make TransR"

printf 'acquired_abnormality\tisa\t?\nnope\tisa\t?\n' >unk_ent.tsv
golden "unknown entity" 1 "kg-predict: unk_ent.tsv:2: unknown entity 'nope'" \
    kg-predict umls m unk_ent.tsv
printf '# a comment\n\n?\tno_such\tanimal\n' >unk_rel.tsv
golden "unknown relation, comments and blanks counted" 1 \
    "kg-predict: unk_rel.tsv:3: unknown relation 'no_such'" \
    kg-predict umls m unk_rel.tsv
printf '?\tisa\t?\n' >two.tsv
golden "two holes" 1 \
    "kg-predict: two.tsv:1: expected one '?' (the part to predict) or none (a triple to score), found 2" \
    kg-predict umls m two.tsv
printf 'animal\tisa\n' >short.tsv
golden "two fields" 1 \
    "kg-predict: short.tsv:1: expected 3 fields (head, relation, tail), found 2" \
    kg-predict umls m short.tsv
printf 'animal isa ?\n' >spaces.tsv
golden "one field: a hint about tabs and --nearest" 1 \
    "kg-predict: spaces.tsv:1: expected 3 fields (head, relation, tail), found 1 (fields are separated by tabs; for the entities nearest a name, give --nearest)" \
    kg-predict umls m spaces.tsv
printf 'animal\tisa\tbird\n?\tisa\tbird\n' >none.tsv
golden "a question after a triple to score" 1 \
    "kg-predict: none.tsv:2: a question among triples to score: give them in separate runs" \
    kg-predict umls m none.tsv
printf 'animal\nno such thing\n' >near.txt
golden "unknown name with --nearest" 1 \
    "kg-predict: near.txt:2: unknown entity 'no such thing'" \
    kg-predict --nearest umls m near.txt
printf 'animal\tbird\n' >near2.txt
golden "two fields with --nearest" 1 \
    "kg-predict: near2.txt:1: expected one entity name, found 2 fields" \
    kg-predict --nearest umls m near2.txt
expect_fail "missing queries file" 1 "kg-predict: .*absent.tsv" \
    kg-predict umls m absent.tsv

# Nothing is left behind by a failed run with -o.
kg-predict -o out.tsv umls m unk_ent.tsv 2>/dev/null
check "no output after an error" test ! -e out.tsv
check "no temporary after an error" test -z "$(ls -A | grep '^\.out')"
printf 'animal\tisa\t?\n' >ok.tsv
kg-predict -q -o out.tsv umls m ok.tsv
check "-o writes the file" test "$(wc -l <out.tsv)" -eq 11
golden "existing output" 1 "kg-predict: output 'out.tsv' exists; use --force to replace it" \
    kg-predict -q -o out.tsv umls m ok.tsv
kg-predict -q -k 2 --no-header -o out.tsv --force umls m ok.tsv
check "--force replaces it" test "$(wc -l <out.tsv)" -eq 2
golden "output is an input" 1 "kg-predict: output 'umls/x.tsv' is inside the input 'umls'" \
    kg-predict -q -o umls/x.tsv umls m ok.tsv

expect_fail "no model" 2 "expected DATASET_DIR MODEL_DIR" kg-predict umls
expect_fail "-k 0" 2 "^kg-predict: --topk: 0 is out of range" kg-predict -k 0 umls m ok.tsv
expect_fail "--sim without --nearest" 2 "--sim applies to --nearest" \
    kg-predict --sim dot umls m ok.tsv
expect_fail "unknown similarity" 2 "unknown similarity 'euclid'" \
    kg-predict --nearest --sim euclid umls m ok.tsv
expect_fail "bad format" 2 "--format: 'xml' is not tsv or json" \
    kg-predict --format xml umls m ok.tsv
expect_fail "maps without arrays" 2 "apply to --entities and --relations" \
    kg-predict --entity-map x umls m ok.tsv
golden "TransR without an identity relation" 1 \
    "kg-predict: --sim model: TransR with rel_dim 4 != dim 8 has no identity relation; use cosine, dot, l2 or l1" \
    kg-predict --nearest --sim model umls tr near.txt
kg-ingest -q -o other --train "$(fixture_data nations)/train.txt.gz"
expect_fail "model of another dataset" 1 "model has 135 entities" \
    kg-predict other m ok.tsv
