# The N-Triples reader's buffer: statements are found with their line
# ends in the reader's buffer, which is filled 256 KiB at a time, so a
# statement (fast or for Serd) often lies across the end of what is
# buffered.  A 3 MB file of mixed lines (plain IRI triples of varied
# length, literals with escaped quotes and IRI-like text inside, CRLF,
# blank and "\r"-only lines, comments, leading tabs, no final break)
# gives the same rows as the same lines sent through Serd, from a file,
# stdin and gzip, and read as Turtle (as they are, and with prefixed
# names for most plain triples, which go Turtle's fast path in
# batches); bad lines across a buffer end give the messages and line
# numbers they give alone.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-ingest/helpers.bash"
rows_of() { python3 "$KG_TOP/tests/tools/rdf_rows.py" "$1"; }
plan 13

python3 - <<'EOF'
import random
r = random.Random(38)
out, ttl, edges, lits, blanks = [], [], 0, 0, 0
for i in range(24000):
    k = r.random()
    s = "<http://www.wikidata.org/entity/Q%x%s>" % (r.randrange(5000), "x" * r.randrange(40))
    p = "<http://www.wikidata.org/prop/direct/P%d>" % r.randrange(30)
    o = "<http://www.wikidata.org/entity/Q%x>" % r.randrange(5000)
    if k < 0.70:
        out.append("%s %s %s .\n" % (s, p, o)); edges += 1
        # Turtle: prefixed names, but for some plain IRIs.
        if r.random() < 0.8:
            ttl.append("wd:%s wdt:%s wd:%s .\n" % (s[32:-1], p[37:-1],
                                                   o[32:-1]))
    elif k < 0.76:
        out.append("%s %s %s .\r\n" % (s, p, o)); edges += 1
    elif k < 0.80:
        out.append("\t%s  %s\t%s\t. \n" % (s, p, o)); edges += 1
    elif k < 0.86:
        out.append('%s %s "a \\" %s ." .\n' % (s, p, o)); lits += 1
    elif k < 0.89:
        out.append('%s %s "x\\"y"@en .\r\n' % (s, p)); lits += 1
    elif k < 0.92:
        out.append("%s %s %s . # a comment\n" % (s, p, o)); edges += 1
    elif k < 0.95:
        out.append("\n"); blanks += 1
    elif k < 0.97:
        out.append("\r\n"); blanks += 1
    else:
        out.append("# %s %s %s .\n" % (s, p, o))
    if len(ttl) < len(out):
        ttl.append(out[-1])
out.append("%s %s %s ." % (s, p, o)); edges += 1
open("mixed.nt", "w").write("".join(out))
open("mixed.ttl", "w").write(
    "@prefix wd: <http://www.wikidata.org/entity/> .\n"
    "@prefix wdt: <http://www.wikidata.org/prop/direct/> .\n" +
    "".join(ttl) + "wd:%s wdt:%s wd:%s ." % (s[32:-1], p[37:-1], o[32:-1]))
open("want.txt", "w").write("%d %d %d\n" % (edges, lits, blanks))
# Through Serd: every line with a comment after it (a CRLF line's "\r"
# before the comment would be a syntax error: dropped).
open("serd.nt", "w").write("".join(
    (l.rstrip("\r\n") + " # Serd\n") if l.strip() else l for l in out))

# Bad lines across the end of the first 256 KiB read (cut in their
# middle, and an escape right after its backslash), after good lines
# and a comment that fill the bytes up to there.
good = "<http://e.org/a> <http://e.org/p> <http://e.org/b> .\n"
def pad(k):
    t = good * ((k - 2) // len(good) - 1)
    return t + "#" * (k - len(t) - 1) + "\n"
bad = {"nul": '<http://e.org/a> <http://e.org/p> "a\0b" .\n',
       "escape": '<http://e.org/a> <http://e.org/p> "abc\\q" .\n',
       "dot": "<http://e.org/a> <http://e.org/p> <http://e.org/b>\n",
       "iri": "<http://e.org/a> <http://e.org/p> <http://e.org/b c> .\n"}
for name, line in bad.items():
    cut = len(line) // 2 if name != "escape" else line.index("\\") + 1
    before = pad(262144 - cut)
    open("alone-%s.nt" % name, "w").write(line)
    open("edge-%s.nt" % name, "w").write(before + line + good)
    assert len(before) + cut == 262144
    open("edge-%s.line" % name, "w").write("%d\n" % (before.count("\n") + 1))
EOF
read -r nedges nlits nblanks <want.txt

kg-ingest -q -o fast mixed.nt
rows_of fast >fast.rows
kg-ingest -q -o serd serd.nt
rows_of serd >serd.rows
same "the buffer's statements: the rows Serd gives" serd.rows fast.rows
check "every edge, literal and blank line counted" test \
    "$(fig fast rdf.edges) $(fig fast rdf.literals) $(fig fast blank_lines)" = \
    "$nedges $nlits $nblanks"
check "the lines, the last without a break, all read" test \
    "$(fig fast lines)" = "$(($(wc -l <mixed.nt) + 1))"
cmp -s fast/entities.tsv serd/entities.tsv && cmp -s fast/train.npy serd/train.npy
check "IDs as Serd's: entities.tsv and train.npy" test $? = 0

kg-ingest -q -o pipe --format ntriples - <mixed.nt
rows_of pipe >pipe.rows
same "stdin gives the same rows" fast.rows pipe.rows
gzip -c mixed.nt >mixed.nt.gz
kg-ingest -q -o gz mixed.nt.gz
rows_of gz >gz.rows
same "gzip gives the same rows" fast.rows gz.rows
kg-ingest -q -o ttlnt --format turtle mixed.nt
rows_of ttlnt >ttlnt.rows
same "the same lines as Turtle: the same rows" fast.rows ttlnt.rows
kg-ingest -q -o ttl mixed.ttl
rows_of ttl >ttl.rows
same "Turtle with prefixed names: the same rows" fast.rows ttl.rows

for name in nul escape dot iri; do
	edge_line=$(cat "edge-$name.line")
	want=$(kg-ingest -q -o alone "alone-$name.nt" 2>&1)
	want=${want/alone-$name.nt:1:/edge-$name.nt:$edge_line:}
	rm -rf out
	err=$(kg-ingest -q -o out "edge-$name.nt" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [ "$err" = "$want" ] && [ ! -e out ]; then
		ok "bad line across the buffer's end ($name): '${want#*: }'"
	else
		notok "$name: exit $rc, '$err', wanted '$want'"
	fi
done
rm -rf out
kg-ingest -q --max-errors 1 -o out edge-escape.nt 2>err.txt
check "--max-errors: the line skipped, the next statement read" test \
    "$(fig out rdf.edges) $(fig out dropped.bad_lines)" = \
    "$(($(cat edge-escape.line) - 1)) 1"
