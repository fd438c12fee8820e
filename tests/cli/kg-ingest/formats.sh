# Input formats: CSV quoting through libcsv, headers, comments, column
# orders, delimiters, stdin, gzip (files and stdin).
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
plan 16

kg-ingest -o csv --format csv --header "$fix/quoted.csv"
check "csv: exit 0" test $? -eq 0
printf 'Smith, John\tknows\tO"Brien\nSmith, John\tworks at\tAcme, Inc.\nplain\tknows\tplain2\nO"Brien\tlikes\tSmith, John\n' >want
decode csv train >got
same "csv: quoted fields, embedded commas and doubled quotes" want got
check "csv: figures" test "$(fig csv entities) $(fig csv relations) $(fig csv comment_lines)" = "5 3 1"

# A quoted field may span lines (here the relation); names with line
# breaks are refused (see errors.sh), relations the same.
printf 'h;r;t\n"a;1";"rel\n2";b\nc;"r";"d"\n' >multi.csv
expect_fail "csv: a relation with a line break is refused" 1 \
    "^kg-ingest: multi.csv:2: relation 'rel\\\\n2' holds a tab or a line break$" \
    kg-ingest -o multi --format csv -d ';' --header multi.csv
printf 'h;r;t\n"a;1";rel;"b\n"\n' >multi2.csv
expect_fail "csv: record line is where it starts" 1 "^kg-ingest: multi2.csv:2: entity 'b\\\\n'" \
    kg-ingest -o multi --format csv -d ';' --header multi2.csv
printf 'x;y;z\n"a;1";rel;b\n# not skipped? yes, a comment\nc;"r";"d"\n' >semi.csv
kg-ingest -o semi --format csv -d ';' --header semi.csv
printf 'a;1\trel\tb\nc\tr\td\n' >want
decode semi train >got
same "csv: --delimiter ';' and comment lines" want got

# TSV column orders and headers.
printf 'tail\thead\trel\nB\tA\tR\nC\tB\tS\n' >thr.tsv
kg-ingest -o thr --columns thr --header thr.tsv
printf 'A\tR\tB\nB\tS\tC\n' >want
decode thr train >got
same "tsv: --columns thr with --header" want got
check "tsv: header not counted as a triple" test "$(fig thr triples.train)" = 2

# A '#' line of three fields is a record unless --comment asks for
# comments (tests/cli/kg-ingest/comments.sh has the rest).
printf '#x\tr\ty\na\tr\tb\n' >hash.tsv
kg-ingest -o c1 hash.tsv && kg-ingest -q -o c2 --comment '#' hash.tsv
check "comments: a record by default, skipped with --comment '#'" \
    test "$(fig c2 triples.train) $(fig c1 triples.train) $(head -1 c1/entities.tsv)" = "1 2 0	#x"

# Space-separated, from stdin, plain and gzip.
printf 'a r b\nb r c\n' >sp.txt
kg-ingest -o sp -d ' ' - <sp.txt
check "stdin with -d ' '" test "$(fig sp triples.train) $(fig sp entities)" = "2 3"
gzip -c "$fix/tiny_train.tsv" | kg-ingest -o gzstdin -
kg-ingest -o plain "$fix/tiny_train.tsv"
same "gzip on stdin gives the same triples as the plain file" plain/train.npy gzstdin/train.npy
same "and the same entities" plain/entities.tsv gzstdin/entities.tsv
check "stdin is recorded as '-'" python3 -c 'import json, sys
sys.exit(json.load(open("gzstdin/manifest.json"))["config"]["inputs"] != ["-"])'

# Several input files are read in order, as one stream.
kg-ingest -o two "$fix/tiny_train.tsv" "$fix/tiny_test.tsv"
check "several inputs: counts add up" test "$(fig two triples.train)" = 10

# Final line without a newline, CRLF everywhere.
printf 'a\tr\tb\r\nc\tr\td' >crlf.tsv
kg-ingest -o crlf crlf.tsv
printf 'a\tr\tb\nc\tr\td\n' >want
decode crlf train >got
same "CRLF and a last line without newline" want got

# numpy, when present, reads the same arrays.
py=$(numpy_python)
if [ -n "$py" ]; then
	"$py" "$here/npyrows.py" --numpy csv/train.npy >np.rows
	rows csv/train.npy >plain.rows
	same "numpy.load agrees with the plain reader" plain.rows np.rows
else
	skip "numpy.load agrees with the plain reader: no numpy"
fi
