# kg-ingest on the tiny committed fixture: IDs in first-seen order (train
# first), exact round trip of names, comments/blank/CRLF lines, unseen
# keep/drop/error, --dedup, --types.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
plan 22

tr=$fix/tiny_train.tsv va=$fix/tiny_valid.tsv te=$fix/tiny_test.tsv

kg-ingest -o keep --train "$tr" --valid "$va" --test "$te" 2>err
check "keep: exit 0, only the note of the comment line on stderr" \
    test $? -eq 0 -a "$(cat err)" = "kg-ingest: skipped 1 comment line (starting with '#' and not splitting into a record's fields), the first at $tr:1"
printf '0\talice\n1\tbob\n2\tcarol\n3\t00123\n4\tgroup x\n5\tdave\n6\terin\n7\tfrank\n8\tgina\n' >want.ent
same "keep: entities.tsv in first-seen order, train first" want.ent keep/entities.tsv
printf '0\tknows\n1\tlikes\n2\tpart_of\n3\thates\n' >want.rel
same "keep: relations.tsv" want.rel keep/relations.tsv
for s in train valid test; do
	f=$fix/tiny_$s.tsv
	grep -v '^#' "$f" | tr -d '\r' | grep -v '^$' >want.$s
	decode keep $s >got.$s
	same "keep: $s.npy decodes to the input lines" want.$s got.$s
done
check "keep: int32 [7, 3] train" test "$(shape keep/train.npy)" = "<i4 7 3"
check "keep: figures" test "$(fig keep entities) $(fig keep relations) $(fig keep triples.valid) $(fig keep unseen_kept) $(fig keep comment_lines) $(fig keep blank_lines) $(fig keep lines)" = "9 4 4 4 1 1 16"
rows keep/train.npy >got.rows
printf '0\t0\t1\n1\t0\t2\n2\t1\t0\n0\t1\t3\n3\t2\t4\n1\t0\t2\n5\t0\t0\n' >want.rows
same "keep: train.npy values" want.rows got.rows

kg-ingest -o dedup --dedup --train "$tr" --valid "$va" --test "$te"
check "dedup: duplicates dropped and counted" test "$(fig dedup triples.train) $(fig dedup triples.valid) $(fig dedup duplicates) $(fig dedup dropped.duplicates)" = "6 3 2 2"
decode dedup valid >got
printf 'alice\tknows\tcarol\nerin\tknows\tbob\nbob\thates\tcarol\n' >want
same "dedup: a valid copy of a train triple is the one dropped" want got

kg-ingest -o drop --unseen drop --train "$tr" --valid "$va" --test "$te"
check "drop: counts" test "$(fig drop entities) $(fig drop relations) $(fig drop triples.valid) $(fig drop triples.test) $(fig drop dropped.unseen)" = "6 3 2 1 4"
printf '0\talice\n1\tbob\n2\tcarol\n3\t00123\n4\tgroup x\n5\tdave\n' >want
same "drop: names only seen in dropped triples get no ID" want drop/entities.tsv
decode drop test >got
printf 'carol\tknows\tbob\n' >want
same "drop: test keeps its seen triple" want got

expect_fail "error: unseen entity is an error" 1 \
    "^kg-ingest: .*tiny_valid.tsv:2: entity 'erin' of a valid triple does not occur in train$" \
    kg-ingest -o bad --unseen error --train "$tr" --valid "$va" --test "$te"
check "error: no output left" test ! -e bad -a -z "$(ls -A | grep tmp)"

kg-ingest -o typed --types "$fix/types.tsv" --train "$tr" --valid "$va" --test "$te"
rows typed/types.npy | tr '\n' ' ' >got
pyrows typed/types.npy | tr '\n' ' ' >got.py
same "types: both .npy readers agree" got got.py
check "types: types.npy per entity, -1 untyped" test "$(cat got)" = "0 0 0 1 2 -1 -1 -1 -1 "
printf '0\tperson\n1\tnumber\n2\tgroup\n' >want
same "types: types.tsv" want typed/types.tsv
check "types: figures" test "$(fig typed types) $(fig typed typed_entities) $(fig typed types_unknown_entities)" = "3 5 1"
check "types: listed in the manifest" grep -q '"types.npy"' typed/manifest.json

# Only train: valid and test exist with zero rows.
kg-ingest -o only --train "$tr"
check "train only: empty valid and test arrays" test "$(shape only/valid.npy) $(shape only/test.npy)" = "<i4 0 3 <i4 0 3"
