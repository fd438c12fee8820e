# RDF input and kg-ingest's options: stdin and extensions, blank nodes
# scoped per file, --max-errors (N-Triples resumes at the next line,
# Turtle stops), --lang, --predicates, --exclude-predicates, --base,
# --rdf-types, and the option checks.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
rfix=$KG_TOP/tests/fixtures/rdf
plan 30

E=http://example.org
T=http://www.w3.org/1999/02/22-rdf-syntax-ns#type
printf '<%s/a> <%s/p> <%s/b> .\n<%s/b> <%s/p> _:b0 .\n' $E $E $E $E $E >one.nt
cp one.nt two.nt

# Stdin needs --format; a file's extension decides, .gz included.
kg-ingest -q -o stdin --format ntriples - <one.nt
gzip -c one.nt >one.nt.gz
kg-ingest -q -o gz one.nt.gz
same "stdin with --format ntriples and .nt.gz by extension agree" \
    stdin/entities.tsv gz/entities.tsv
expect_fail "without --format, stdin is a table" 1 \
    "^kg-ingest: stdin:1: expected 3 fields, found 1$" kg-ingest -o x - <one.nt
expect_fail "--format tsv reads a .nt file as a table" 1 \
    "^kg-ingest: one.nt:1: expected 3 fields, found 1$" \
    kg-ingest -o x --format tsv one.nt
check "one file: blank labels as written" grep -qx "2	_:b0" stdin/entities.tsv

# Two files' _:b0 are two entities.
kg-ingest -q -o two one.nt two.nt
check "two files: _:f1.b0 and _:f2.b0" test \
    "$(cut -f2 two/entities.tsv | grep '^_:' | tr '\n' ' ')" = "_:f1.b0 _:f2.b0 "
kg-ingest -q -o splits --train one.nt --test two.nt
check "split files: blank nodes of train and test (the second file) differ" \
    test "$(fig splits entities) $(fig splits unseen_kept) $(cut -f2 splits/entities.tsv | grep '^_:' | tr '\n' ' ')" = \
    "4 1 _:f1.b0 _:f2.b0 "

# --max-errors: N-Triples skips bad lines and goes on.
{ cat one.nt; echo '<bad> <x> <y> .'; echo "<$E/c> <$E/p> <$E/d> ."
  echo "<$E/c> <$E/p> \"x\" ;"; echo "<$E/d> <$E/p> <$E/e> ."; } >bad.nt
kg-ingest -q -o skip --max-errors 2 bad.nt 2>/dev/null
check "--max-errors 2: the good lines after bad ones are kept" test \
    "$(fig skip triples.train) $(fig skip dropped.bad_lines)" = "4 2"
expect_fail "--max-errors 1: the second bad line is fatal, with its line" 1 \
    "^kg-ingest: bad.nt:5: the line ends before the statement does \(a missing '.'\?\) \(more than 1 bad lines\)$" \
    kg-ingest -q -o x --max-errors 1 bad.nt
printf '@prefix ex: <%s/> .\nex:a ex:p ex:b .\nex:a ex:p ex:b\nex:c ex:p ex:d .\n' $E >bad.ttl
expect_fail "Turtle: a syntax error stops the run, --max-errors or not" 1 \
    "^kg-ingest: bad.ttl:4: .*\(a Turtle syntax error stops reading: --max-errors skips bad lines of N-Triples and N-Quads only\)$" \
    kg-ingest -q -o x --max-errors 5 bad.ttl
check "nothing written after errors" test ! -e x

# --lang keeps tagged literals of those languages, and untagged ones.
printf '<%s/a> <%s/l> "A"@en .\n<%s/a> <%s/l> "A-gb"@EN-GB .\n<%s/a> <%s/l> "B"@de .\n<%s/a> <%s/l> "C"@fr .\n<%s/a> <%s/l> "plain" .\n<%s/a> <%s/p> <%s/b> .\n' \
    $E $E $E $E $E $E $E $E $E $E $E $E $E >lang.nt
kg-ingest -q -o lang --lang en,de lang.nt
check "--lang en,de: en, en-GB, de and untagged kept, fr dropped" test \
    "$(fig lang rdf.literals) $(fig lang rdf.other_language)" = "4 1"

# --predicates, --exclude-predicates (IRIs with or without brackets).
printf '# keep these\n<%s/p>\n%s/l\n' $E $E >keep.txt
printf '%s/l\n' $E >drop.txt
kg-ingest -q -o keep --predicates keep.txt lang.nt bad.nt --max-errors 2 2>/dev/null
check "--predicates: only p and l" test \
    "$(fig keep rdf.predicate_filtered) $(fig keep rdf.literals)" = "0 5"
kg-ingest -q -o drop --exclude-predicates drop.txt lang.nt
check "--exclude-predicates drops l" test \
    "$(fig drop rdf.predicate_filtered) $(fig drop rdf.literals) $(fig drop triples.train)" = "5 0 1"

# --base resolves Turtle's relative IRIs until @base.
printf '<a> <p> <b> .\n@base <http://other/> .\n<c> <p> <d> .\n' >rel.ttl
kg-ingest -q -o base --base http://base.example/dir/ rel.ttl
check "--base, then @base" test "$(cut -f2 base/entities.tsv | tr '\n' ' ')" = \
    "http://base.example/dir/a http://base.example/dir/b http://other/c http://other/d "
gzip -c rel.ttl >rel.ttl.gz
kg-ingest -q -o ttlgz --base http://base.example/dir/ rel.ttl.gz
kg-ingest -q -o ttlin --format turtle --base http://base.example/dir/ - <rel.ttl
check "Turtle: .ttl.gz by extension and stdin with --format turtle agree" \
    sh -c 'cmp -s base/entities.tsv ttlgz/entities.tsv &&
    cmp -s base/entities.tsv ttlin/entities.tsv'

# --rdf-types: edges, node types (the first type wins) or an attribute.
printf '<%s/a> <%s> <%s/T1> .\n<%s/a> <%s/p> <%s/b> .\n<%s/a> <%s> <%s/T2> .\n<%s/b> <%s> <%s/T2> .\n' \
    $E $T $E $E $E $E $E $T $E $E $T $E >types.nt
kg-ingest -q -o tedge types.nt
check "--rdf-types edge (default): types are triples" test "$(fig tedge triples.train)" = 4
kg-ingest -q -o ttypes --rdf-types types types.nt
check "--rdf-types types: types.tsv, first type kept, one ignored" test \
    "$(cut -f2 ttypes/types.tsv | tr '\n' ' ')$(fig ttypes typed_entities) $(fig ttypes rdf.types_ignored) $(fig ttypes triples.train)" = \
    "$E/T1 $E/T2 2 1 1"
check "--rdf-types types: types.npy" test "$(pyrows ttypes/types.npy | tr '\n' ' ')" = "0 1 "
kg-ingest -q -o tattr --rdf-types attribute types.nt
check "--rdf-types attribute: rows and a multi_label attribute" test \
    "$(fig tattr rdf.type_rows) $(jq -r ".attributes[\"$T\"].kind" tattr/literals.schema.json)" = \
    "3 multi_label"

# Checks of the options.
expect_fail "--graph without N-Quads input" 2 \
    "^kg-ingest: --graph selects a graph of N-Quads input, and no input is N-Quads$" \
    kg-ingest -o x --graph http://g one.nt
expect_fail "RDF options without RDF input" 2 \
    "^kg-ingest: --base, --graph, --lang, --rdf-types, --predicates, --exclude-predicates, --compact and --prefix need RDF input" \
    kg-ingest -o x --lang en "$fix/tiny_train.tsv"
expect_fail "--rdf-types: a bad value" 2 \
    "^kg-ingest: --rdf-types: 'nodes' is not edge, types or attribute$" \
    kg-ingest -o x --rdf-types nodes one.nt

# --compact: names by --prefix, the longest namespace first, reversibly.
printf '<%s/a> <%s/p> <%s/dir/b> .\n<%s/dir/b> <%s/p> <http://other/c> .\n<%s/a> <%s/p> "x" .\n' \
    $E $E $E $E $E $E $E >c.nt
kg-ingest -q -o full c.nt
kg-ingest -q -o cmp --compact --prefix e=$E/ --prefix ed=$E/dir/ c.nt
check "--compact: prefixed names, longest namespace, others as written" test \
    "$(cut -f2 cmp/entities.tsv cmp/relations.tsv | tr '\n' ' ')$(cut -f1,2 cmp/literals.tsv)" = \
    "e:a ed:b http://other/c e:p e:a	e:p"
sed "s|	ed:|	$E/dir/|; s|	e:|	$E/|" cmp/entities.tsv >back.tsv
check "--compact: the same triples, names expand back" sh -c \
    'cmp -s full/train.npy cmp/train.npy && cmp -s full/entities.tsv back.tsv'
printf '<e:a> <%s/p> <%s/b> .\n' $E $E >amb.nt
expect_fail "--compact: an IRI that reads as a prefixed name is refused" 1 \
    "^kg-ingest: amb.nt:1: IRI 'e:a' reads as a name of --prefix e, so --compact could not be undone$" \
    kg-ingest -q -o x --compact --prefix e=$E/ amb.nt
expect_fail "--prefix: a bad name" 2 \
    "^kg-ingest: --prefix: '1e=http://x/' is not NAME=IRI" \
    kg-ingest -o x --compact --prefix 1e=http://x/ c.nt

# Table options are refused when every input is RDF, and apply to the
# tables among mixed inputs.
expect_fail "--columns with RDF input only" 2 \
    "^kg-ingest: --columns applies to tables, and every input is RDF$" \
    kg-ingest -o x --columns trh one.nt
expect_fail "--header with RDF input only" 2 \
    "^kg-ingest: --header applies to tables, and every input is RDF$" \
    kg-ingest -o x --header one.nt two.nt
expect_fail "--delimiter with RDF input only" 2 \
    "^kg-ingest: --delimiter applies to tables, and every input is RDF$" \
    kg-ingest -o x -d , one.nt
printf 'h\tr\tt\n%s/a\t%s/p\t%s/z\n' $E $E $E >mixed.tsv
kg-ingest -q -o mixed --header one.nt mixed.tsv
check "--header with a table among RDF inputs skips the table's first line" \
    test "$(cut -f2 mixed/entities.tsv | tr '\n' ' ')" = "$E/a $E/b _:f1.b0 $E/z "
