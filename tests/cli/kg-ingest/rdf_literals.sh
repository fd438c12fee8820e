# RDF literals to attributes: the kind each datatype gives in the
# proposed literals.schema.json, and kg-encode-attrs reading the schema
# and the literal table as they are (fit, transform), also when the
# literals hold tabs, line breaks, quotes and control characters.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
rfix=$KG_TOP/tests/fixtures/rdf
plan 7

E=http://example.org
X=http://www.w3.org/2001/XMLSchema#
cat >lit.nt <<NT
<$E/a> <$E/p> <$E/b> .
<$E/b> <$E/p> <$E/c> .
<$E/a> <$E/pop> "100"^^<${X}integer> .
<$E/b> <$E/pop> "+2.5e3"^^<${X}double> .
<$E/c> <$E/pop> "-7"^^<${X}nonNegativeInteger> .
<$E/a> <$E/born> "1952-03-11T00:00:00Z"^^<${X}dateTime> .
<$E/b> <$E/born> "-0399"^^<${X}gYear> .
<$E/c> <$E/born> "2000-02-29"^^<${X}date> .
<$E/a> <$E/ym> "1960-05"^^<${X}gYearMonth> .
<$E/a> <$E/name> "Alpha"@en .
<$E/b> <$E/name> "Beta"^^<${X}string> .
<$E/c> <$E/name> "Gamma" .
<$E/a> <$E/flag> "true"^^<${X}boolean> .
<$E/a> <$E/mixed> "1"^^<${X}integer> .
<$E/b> <$E/mixed> "x" .
<$E/a> <$E/baddate> "1952-00-00"^^<${X}date> .
<$E/b> <$E/badnum> "1,5"^^<${X}decimal> .
<$E/a> <$E/other> "x"^^<$E/custom> .
<$E/z> <$E/pop> "5"^^<${X}integer> .
NT
kg-ingest -q -o lit lit.nt
kinds=$(for p in pop born ym name flag mixed baddate badnum other; do
	jq -r ".attributes[\"$E/$p\"].kind" lit/literals.schema.json; done |
    tr '\n' ' ')
check "kinds: numeric, date (dateTime, gYear, date), date (gYearMonth), text, categorical for boolean, mixed, unparsable and other types" \
    test "$kinds" = "numeric date date text categorical categorical categorical categorical categorical "
check "outputs: the IRIs' last segments" test \
    "$(jq -r '[.attributes[].output] | join(" ")' lit/literals.schema.json)" = \
    "pop born ym name flag mixed baddate badnum other"
check "figures: literals and a predicate's class counts" test \
    "$(fig lit rdf.literals) $(jq ".figures.rdf.literal_predicates[\"$E/mixed\"].numeric" lit/manifest.json)" = "17 1"

kg-encode-attrs fit -q -d lit -s lit/literals.schema.json -o am 2>/dev/null
check "kg-encode-attrs fit reads the proposed schema as it is" test $? -eq 0
kg-encode-attrs transform -q -j 1 -d lit -m am -o feat 2>/dev/null
check "transform: numeric rows of a, b, c (z has no triple: skipped)" test \
    "$(tail -c 3 feat/has_pop.npy | od -An -tu1 | tr -s ' ')" = " 1 1 1"

# The conformance literals (tabs, line breaks, quotes, control
# characters, every plane, 3,000 bytes) through the encoder.
kg-ingest -q -o nt "$rfix/nt-good.nt"
kg-encode-attrs fit -q -d nt -s nt/literals.schema.json -o ntm 2>/dev/null
check "fit over literals with escapes and every plane" test $? -eq 0
check "those literals are text, numeric (n) and text (esc, long)" test \
    "$(jq -r '[.attributes[].kind] | join(" ")' nt/literals.schema.json)" = \
    "text numeric text text text text"
