# Every bad input: message "kg-ingest: file:line: message", exit status,
# and no output directory (nor temporary) left behind.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
plan 37

printf 'a\tr\tb\nc\tr\n' >cols.tsv
printf 'a\tr\tb\nc\tr\td\te\n' >cols4.tsv
printf 'a\tr\tb\nc\t\td\n' >empty.tsv
printf 'a\tr\tb\n\tr\td\n' >empty_head.tsv
printf 'a\tr\tb\nc\tr\tb\x00x\n' >nul.tsv
printf 'a,r,b\n"c\nd",r,e\n' >newline.csv
printf 'a,r,b\nc,r,"d"x\n' >quote.csv
printf 'a,r,b\nc,r,"d\n' >open.csv
seq 1 20000 | awk '{ print "e" $1 "\tr\te" ($1 + 1) }' | gzip >big.tsv.gz
head -c 2000 big.tsv.gz >cut.tsv.gz
inputs="long.tsv cols.tsv cols4.tsv empty.tsv empty_head.tsv nul.tsv newline.csv quote.csv open.csv big.tsv.gz cut.tsv.gz"

expect_fail "wrong number of columns" 1 '^kg-ingest: cols.tsv:2: expected 3 fields, found 2$' \
    kg-ingest -o out cols.tsv
expect_fail "too many columns" 1 '^kg-ingest: cols4.tsv:2: expected 3 fields, found 4$' \
    kg-ingest -o out cols4.tsv
expect_fail "empty field" 1 '^kg-ingest: empty.tsv:2: empty relation field \(column 2\)$' \
    kg-ingest -o out empty.tsv
expect_fail "empty head with --columns rht" 1 '^kg-ingest: empty_head.tsv:2: empty relation field \(column 1\)$' \
    kg-ingest -o out --columns rht empty_head.tsv
expect_fail "NUL byte in a name" 1 "^kg-ingest: nul.tsv:2: entity 'b\\\\0x' holds a NUL byte$" \
    kg-ingest -o out nul.tsv
python3 -c "print('a\tr\t' + 'x' * 300000)" >long.tsv
expect_fail "name longer than the dictionary allows" 1 "^kg-ingest: long.tsv:1: entity 'x+\.\.\.' is longer than 262128 bytes$" \
    kg-ingest -o out long.tsv
expect_fail "line break in a CSV name" 1 "^kg-ingest: newline.csv:2: entity 'c\\\\nd' holds a tab or a line break$" \
    kg-ingest -o out --format csv newline.csv
expect_fail "stray quote in CSV" 1 '^kg-ingest: quote.csv:2: malformed CSV' \
    kg-ingest -o out --format csv quote.csv
expect_fail "unterminated CSV quote" 1 '^kg-ingest: open.csv:2: unterminated quoted field$' \
    kg-ingest -o out --format csv open.csv
expect_fail "unreadable file" 1 '^kg-ingest: absent.tsv: cannot open: No such file or directory$' \
    kg-ingest -o out absent.tsv
expect_fail "unreadable valid file" 1 '^kg-ingest: absent.tsv: cannot open: No such file or directory$' \
    kg-ingest -o out --train cols4.tsv --valid absent.tsv --max-errors 1
expect_fail "truncated gzip" 1 '^kg-ingest: cut.tsv.gz: truncated gzip input$' \
    kg-ingest -o out cut.tsv.gz
expect_fail "split not summing to 1 is bad usage" 2 '^kg-ingest: --split: fractions 0.8,0.1,0.2 sum to 1.1, not 1$' \
    kg-ingest -o out --split 0.8,0.1,0.2 big.tsv.gz
expect_fail "split fraction out of range" 2 '^kg-ingest: --split: ' \
    kg-ingest -o out --split 1.5,-0.5 big.tsv.gz
expect_fail "no training triples" 1 '^kg-ingest: stdin: no training triples$' \
    kg-ingest -o out - </dev/null
nothing_left "no output after any of these errors" $inputs

mkdir out
expect_fail "existing output without --force" 1 "^kg-ingest: output 'out' exists; use --force to replace it$" \
    kg-ingest -o out big.tsv.gz
check "existing output untouched" test -z "$(ls -A out)"
kg-ingest -o out --force big.tsv.gz
check "--force replaces it" test "$(fig out triples.train)" = 20000
nothing_left "only the forced output is left" $inputs out

# --max-errors: skip up to N bad lines, each reported; one more fails.
printf 'a\tr\tb\nbad\nc\t\td\ne\tr\tf\n' >two_bad.tsv
kg-ingest -o skip --max-errors 2 two_bad.tsv 2>err
check "max-errors 2: two bad lines skipped" test $? -eq 0 -a "$(fig skip triples.train) $(fig skip dropped.bad_lines)" = "2 2"
check "max-errors 2: each skipped line reported" test "$(cat err)" = "kg-ingest: warning: two_bad.tsv:2: expected 3 fields, found 1; line skipped
kg-ingest: warning: two_bad.tsv:3: empty relation field (column 2); line skipped"
expect_fail "max-errors 1: the second bad line fails" 1 \
    '^kg-ingest: two_bad.tsv:3: empty relation field \(column 2\) \(more than 1 bad lines\)$' \
    kg-ingest -o skip1 --max-errors 1 two_bad.tsv
check "max-errors 1: no output" test ! -e skip1

# Bad lines in a types file.
printf 'a\tr\tb\n' >t.tsv
printf 'a\tX\nb\tY\na\tZ\n' >conflict.types
expect_fail "types: an entity with two types" 1 "^kg-ingest: conflict.types:3: entity 'a' already has type 'X'$" \
    kg-ingest -o ty --types conflict.types t.tsv
printf 'a\tX\tmore\n' >cols.types
expect_fail "types: wrong number of fields" 1 '^kg-ingest: cols.types:1: expected 2 fields \(entity, type\), found 3$' \
    kg-ingest -o ty --types cols.types t.tsv
kg-ingest -o ty --types conflict.types --max-errors 1 t.tsv 2>/dev/null
check "types: with --max-errors the first type stays" test "$(cat ty/types.tsv | tr '\n' ' ')" = "0	X 1	Y "
rm -rf ty t.tsv conflict.types cols.types

# Usage errors: exit 2.
expect_fail "no -o" 2 '^kg-ingest: no output directory \(-o\)$' kg-ingest big.tsv.gz
expect_fail "bad --columns" 2 "^kg-ingest: --columns: 'hrr' is not an order" kg-ingest -o x --columns hrr big.tsv.gz
expect_fail "bad --unseen" 2 "^kg-ingest: --unseen: 'maybe' is not keep, drop or error$" kg-ingest -o x --unseen maybe big.tsv.gz
expect_fail "bad --format" 2 "^kg-ingest: --format: 'xml' is not tsv, csv, ntriples, nquads, turtle, raw_udd_hrt, udd_hrt \\(or another order of h, r, t\\) or built_in$" kg-ingest -o x --format xml big.tsv.gz
expect_fail "bad --delimiter" 2 "^kg-ingest: --delimiter: 'ab' is not one character" kg-ingest -o x -d ab big.tsv.gz
expect_fail "bad --max-errors" 2 "^kg-ingest: --max-errors: '-1' is not a non-negative integer$" kg-ingest -o x --max-errors -1 big.tsv.gz
expect_fail "--valid without --train" 2 '^kg-ingest: --valid and --test need --train$' kg-ingest -o x --valid big.tsv.gz
expect_fail "--train with --split" 2 '^kg-ingest: --train cannot be combined with --split$' kg-ingest -o x --train big.tsv.gz --split 0.8,0.2
expect_fail "unknown option" 2 "^kg-ingest: unrecognized option '--bogus'$" kg-ingest -o x --bogus big.tsv.gz
nothing_left "no output after usage errors" $inputs out two_bad.tsv skip err
