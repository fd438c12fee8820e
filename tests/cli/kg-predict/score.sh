#!/usr/bin/env bash
# Triples to score: a query line without '?' gives the triple's score and,
# with --rank, the filtered realistic rank of its tail and of its head
# among all entities (kg-eval's ranking); checked against numpy's
# brute force from the model's arrays.  The list files give the same
# answers as the lines; --cartesian gives the k best combinations.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
here=$KG_TOP/tests/cli/kg-predict
echo "1..32"

py=$(numpy_python)
[ -n "$py" ] || { skip "kg-predict score: no python3 with numpy"; exit 0; }
make_umls umls || { notok "ingest umls"; exit 0; }
"$py" "$here/score.py" triples umls 40 5 t.tsv || { notok "sample triples"; exit 0; }

for spec in "DistMult 16 0" "ComplEx 16 0" "TransE_l1 12 0" "RotatE 16 0" \
    "ComplEx 16 1 --reciprocal"; do
	set -- $spec
	name=$1 dim=$2 recip=$3; shift 3
	"$MKMODEL" --gamma 6 "$@" umls "m_$name$recip" "$name" "$dim" ||
	    { notok "make $name"; continue; }
	kg-predict -q --rank --format json umls "m_$name$recip" t.tsv >s.json
	check "$name$recip: exit 0" test $? -eq 0
	"$py" "$here/score.py" check "$name" 6 "$recip" umls "m_$name$recip" \
	    t.tsv s.json
done

kg-predict -q --rank umls m_DistMult0 t.tsv >lines.tsv
kg-predict -q --rank --head-file t.tsv.h --rel-file t.tsv.r \
    --tail-file t.tsv.t umls m_DistMult0 >lists.tsv
check "list files: the same answers as the lines" cmp -s lines.tsv lists.tsv
check "TSV header with ranks" test "$(head -1 lines.tsv)" = \
    "$(printf 'head\trelation\ttail\tscore\ttail_rank\thead_rank')"
kg-predict -q umls m_DistMult0 t.tsv >plain.tsv
check "without --rank: four columns, the same scores" cmp -s plain.tsv \
    <(cut -f1-4 lines.tsv)

head -3 t.tsv.h >H
head -2 t.tsv.r >R
kg-predict -q -k 7 --cartesian --head-file H --rel-file R umls m_DistMult0 >c.tsv
check "--cartesian: exit 0" test $? -eq 0
"$py" "$here/score.py" cartesian DistMult 6 umls m_DistMult0 H R c.tsv 7

# Errors: nothing written.
head -5 t.tsv.t >T5
expect_fail "lists of different lengths" 1 \
    "^kg-predict: T5 ends after 5 names, before t.tsv.h$" \
    kg-predict -q -o e.tsv --head-file t.tsv.h --rel-file t.tsv.r \
    --tail-file T5 umls m_DistMult0
check "no output after the error" test ! -e e.tsv
printf 'virus\tinteracts_with\thuman\nvirus\t?\thuman\n' >mixed.tsv
expect_fail "a question among triples" 1 \
    "^kg-predict: mixed.tsv:2: a question among triples to score: give them in separate runs$" \
    kg-predict -q -o e.tsv umls m_DistMult0 mixed.tsv
check "no output after the mixed input" test ! -e e.tsv
expect_fail "--cartesian without lists" 2 \
    "^kg-predict: --cartesian needs --head-file, --rel-file or --tail-file$" \
    kg-predict -q --cartesian umls m_DistMult0
expect_fail "two of the three lists" 2 \
    "^kg-predict: --head-file, --rel-file and --tail-file go together \(or use --cartesian\)$" \
    kg-predict -q --head-file H --rel-file R umls m_DistMult0
expect_fail "lists and a QUERIES operand" 2 \
    "^kg-predict: no QUERIES operand with --head-file" \
    kg-predict -q --head-file H --rel-file R --tail-file H umls m_DistMult0 t.tsv
