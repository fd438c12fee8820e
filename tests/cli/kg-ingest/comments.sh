# Comment lines (issue 32, item 3): a line starting with '#' is data when
# it splits into a whole record, so a name such as "#tag" is kept; other
# '#' lines are skipped, and kg-ingest says how many and where (unless
# -q).  --comment CHAR skips every line starting with CHAR; --no-comments
# none.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
plan 18

note1="kg-ingest: skipped 1 comment line (starting with '#' and not splitting into a record's fields), the first at a.tsv:1"

printf '# who mentions whom\n#tag\tmentions\tuser1\nuser1\tmentions\tuser2\n' >a.tsv
golden "a '#' line of three fields is data; the other is noted" 0 "$note1" \
    kg-ingest -o d a.tsv
printf '#tag\tmentions\tuser1\nuser1\tmentions\tuser2\n' >want
decode d train >got
same "the '#tag' triple is kept, name byte for byte" want got
check "figures: 2 triples, 1 comment line" \
    test "$(fig d triples.train) $(fig d comment_lines)" = "2 1"
golden "-q: no note" 0 "" kg-ingest -q -o dq a.tsv
printf 'a\tr\tb\n' >plain.tsv
golden "no comments: no note" 0 "" kg-ingest -o dp plain.tsv

# The note counts every file and names the first comment.
printf 'a\tr\tb\n\n# one\n# two\tx\n' >tr.tsv
printf '#c\tr\ta\n# three\n' >va.tsv
golden "the note counts lines of every file" 0 \
    "kg-ingest: skipped 3 comment lines (starting with '#' and not splitting into a record's fields), the first at tr.tsv:3" \
    kg-ingest -o split --train tr.tsv --valid va.tsv
check "and keeps '#c' in valid" test "$(fig split triples.valid) $(cut -f2 split/entities.tsv | tr '\n' ' ')" = "1 a b #c "

# --comment CHAR: every line starting with it is a comment.
golden "--comment '#' skips the '#tag' line too" 0 \
    "kg-ingest: skipped 2 comment lines (starting with '#'), the first at a.tsv:1" \
    kg-ingest -o dc --comment '#' a.tsv
check "--comment '#': one triple, no '#tag'" \
    test "$(fig dc triples.train) $(grep -c '#' dc/entities.tsv)" = "1 0"
printf '; note\n#tag\tr\tx\n;x\tr\ty\n' >semi.tsv
kg-ingest -q -o ds --comment ';' semi.tsv
check "--comment ';': '#tag' is data, ';' lines are not" \
    test "$(fig ds triples.train) $(cut -f2 ds/entities.tsv | tr '\n' ' ')" = "1 #tag x "
expect_fail "--no-comments: a short '#' line is a bad record" 1 \
    "kg-ingest: a.tsv:1: expected 3 fields, found 1" \
    kg-ingest -o dn --no-comments a.tsv
check "and nothing is written" test ! -e dn
expect_fail "--comment takes one character" 2 \
    "kg-ingest: --comment: 'ab' is not one character" \
    kg-ingest -o dx --comment ab a.tsv
check "and nothing is written" test ! -e dx

# CSV: the fields are counted with quotes, a quoted delimiter is text.
printf '# a, b\n#tag,mentions,user1\n#q,"x,y",z\nu,v,w\n' >c.csv
golden "csv: '#' records kept, a two-field comment skipped" 0 \
    "kg-ingest: skipped 1 comment line (starting with '#' and not splitting into a record's fields), the first at c.csv:1" \
    kg-ingest -o dcsv --format csv c.csv
printf '#tag\tmentions\tuser1\n#q\tx,y\tz\nu\tv\tw\n' >want
decode dcsv train >got
same "csv: the triples" want got

# The types file has two fields a record.
printf '#tag\tperson\n# types\nuser1\tperson\n' >types.tsv
golden "types: '#tag<TAB>type' is a record" 0 \
    "kg-ingest: skipped 2 comment lines (starting with '#' and not splitting into a record's fields), the first at a.tsv:1" \
    kg-ingest -o dt --types types.tsv a.tsv
check "types: '#tag' and user1 typed" test "$(fig dt typed_entities)" = 2
