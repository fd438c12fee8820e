"""Render LitWD1K (../../../../shared/data/litwd1k, or the folder given)
as a Wikidata-shaped N-Triples dump: litwd1k.nt.gz.  Run once; the
output is committed.

  items      Q42   -> <http://www.wikidata.org/entity/Q42>        (wd:)
  relations  P17   -> <http://www.wikidata.org/prop/direct/P17>   (wdt:)
  numbers and dates: LitWD1K attribute A (a property, with its unit or
             coordinate suffix: P2048_Q11573, P625_Latitude) ->
             <http://www.wikidata.org/prop/direct/A>, the typed literal
             as LitWD1K gives it ("+2025137"^^xsd:decimal,
             "1960-01-01T00:00:00Z"^^xsd:dateTime)
  classes    -> rdf:type wd:Q5 (Wikidata's P31, written as rdf:type)
  labels     -> rdfs:label "..."@en
  descriptions -> schema:description "..."@en
  aliases    -> skos:altLabel "..."@en, the field as LitWD1K gives it
             (aliases joined by ", ")

Statements: the train, valid and test triples in file order, then per
entity (in order of first appearance) its literals, types, label,
description and aliases.  Only LitWD1K's 1,533 entities.  gzip level 9,
no name or time stamp, so the bytes are reproducible.
"""
import csv
import gzip
import io
import os
import sys

src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "../../../../shared/data/litwd1k")
WD, WDT = "http://www.wikidata.org/entity/", "http://www.wikidata.org/prop/direct/"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
DESC = "http://schema.org/description"
ALT = "http://www.w3.org/2004/02/skos/core#altLabel"


def lines(path):
    with gzip.open(os.path.join(src, path), "rt", encoding="utf-8",
                   newline="") as f:
        for line in f:
            yield line.rstrip("\n")


def pairs(path, quoted=False):
    if quoted:
        with gzip.open(os.path.join(src, path), "rt", encoding="utf-8",
                       newline="") as f:
            for row in csv.reader(f, delimiter="\t"):
                yield row[0], row[1]
    else:
        for line in lines(path):
            k, v = line.split("\t", 1)
            yield k, v


def esc(s):
    out = []
    for c in s:
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20:
            out.append("\\u%04X" % ord(c))
        else:
            out.append(c)
    return "".join(out)


out = io.StringIO()
order, seen = [], set()
for split in ("train", "valid", "test"):
    for line in lines(split + ".txt.gz"):
        h, r, t = line.split("\t")
        out.write("<%s%s> <%s%s> <%s%s> .\n" % (WD, h, WDT, r, WD, t))
        for e in (h, t):
            if e not in seen:
                seen.add(e)
                order.append(e)
per = {e: [] for e in order}
for line in lines("attrs/numeric_literals.tsv.gz"):
    e, a, v = line.split("\t")
    lex, dt = v[1:].split('"^^<')
    per[e].append('<%s%s> "%s"^^<%s> .\n' % (WDT, a, esc(lex), dt[:-1]))
for e, t in pairs("attrs/entity_types.tsv.gz"):
    if e in per:
        per[e].append("<%s> <%s%s> .\n" % (RDF_TYPE, WD, t))
for path, pred, quoted in (("attrs/entity_labels_en.tsv.gz", LABEL, False),
                           ("attrs/entity_descriptions_en.tsv.gz", DESC, False),
                           ("attrs/entity_aliases_en.tsv.gz", ALT, True)):
    for e, v in pairs(path, quoted):
        if e in per:
            per[e].append('<%s> "%s"@en .\n' % (pred, esc(v)))
for e in order:
    for rest in per[e]:
        out.write("<%s%s> %s" % (WD, e, rest))
data = out.getvalue().encode("utf-8")
with open("litwd1k.nt.gz", "wb") as f:
    with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9,
                       mtime=0) as g:
        g.write(data)
print("litwd1k.nt.gz: %d statements, %d bytes uncompressed" % (
    data.count(b"\n"), len(data)))
