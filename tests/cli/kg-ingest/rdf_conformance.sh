# RDF conformance: the N-Triples 1.1, N-Quads and Turtle 1.1 productions
# of tests/fixtures/rdf (written by its make.py).  Positive files give
# the expected triples and literal rows (tests/tools/rdf_rows.py prints
# both); each negative file exits 1 with the golden "file:line: message"
# of bad.stderr and writes nothing; Turtle gives what its hand-written
# N-Triples rendering gives.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
rfix=$KG_TOP/tests/fixtures/rdf
rows_of() { python3 "$KG_TOP/tests/tools/rdf_rows.py" "$1"; }
nbad=$(ls "$rfix"/*-bad-* | wc -l)
plan $((8 + nbad))

kg-ingest -q -o nt "$rfix/nt-good.nt"
rows_of nt >got
same "N-Triples: IRIs, blank labels, literals, escapes, every plane" \
    "$rfix/nt-good.expected" got
check "N-Triples: figures (7 edges, 11 literals, 1 blank line)" test \
    "$(fig nt rdf.edges) $(fig nt rdf.literals) $(fig nt blank_lines) $(fig nt dropped.bad_lines)" = "7 11 1 0"

# Lines of three plain IRIs are split without Serd: a comment after
# each sends the same lines through Serd, with the same result.
grep -v '^#' "$rfix/nt-good.nt" | sed 's/\r$//; s/$/ # through Serd/' >serd.nt
kg-ingest -q -o serd serd.nt
rows_of serd >serd.rows
same "N-Triples: the fast path and Serd agree" "$rfix/nt-good.expected" serd.rows

kg-ingest -q -o ttl "$rfix/ttl-good.ttl"
kg-ingest -q -o ttlnt "$rfix/ttl-good.nt"
rows_of ttl >ttl.rows
rows_of ttlnt >ttlnt.rows
same "Turtle gives the triples and literals of its N-Triples rendering" \
    ttlnt.rows ttl.rows
check "Turtle: 37 statements, none lost" test \
    "$(fig ttl rdf.statements) $(wc -l <ttl.rows)" = "37 37"

kg-ingest -q -o nq "$rfix/nq-good.nq"
rows_of nq >got
same "N-Quads: graphs ignored by default" "$rfix/nq-good.expected" got
kg-ingest -q -o nqg --graph http://example.org/g1 "$rfix/nq-good.nq"
check "N-Quads: --graph keeps one graph" test \
    "$(fig nqg triples.train) $(fig nqg rdf.other_graph) $(fig nqg rdf.literals)" = "1 3 0"
kg-ingest -q -o nqb --graph _:g "$rfix/nq-good.nq"
check "N-Quads: --graph names a blank graph as _:label" test \
    "$(fig nqb triples.train)" = 1

# Each negative file: exit 1, its golden message, no output.
for f in "$rfix"/*-bad-*; do
	name=${f##*/}
	want=$(grep -F "kg-ingest: $name:" "$rfix/bad.stderr")
	rm -rf out
	err=$(kg-ingest -q -o out "$f" 2>&1 >/dev/null)
	rc=$?
	err=${err//"$rfix/"/}
	if [ $rc -eq 1 ] && [ -n "$want" ] && [ "$err" = "$want" ] &&
	    [ ! -e out ]; then
		ok "refused: $name"
	else
		notok "refused: $name (exit $rc, stderr '$err', wanted '$want')"
	fi
done
