"""Write TSV triples (head<TAB>relation<TAB>tail, plain or gzip) as
N-Triples: entity NAME becomes <PREFIX/e/NAME>, relation NAME
<PREFIX/r/NAME>, NAME percent-encoded (RFC 3986 unreserved bytes kept),
one statement a line in input order.  With --names, instead map a
kg-ingest dictionary (id<TAB>iri) back to the TSV names, so that a
dataset ingested from the N-Triples can be compared with the TSV one.

usage: python3 tsv_to_ntriples.py [--prefix IRI] IN.tsv[.gz] > OUT.nt
       python3 tsv_to_ntriples.py [--prefix IRI] --names e|r DICT.tsv
"""
import gzip
import sys
import urllib.parse


def main():
    args = sys.argv[1:]
    prefix = "http://kg.example"
    if args[:1] == ["--prefix"]:
        prefix, args = args[1], args[2:]
    out = sys.stdout.buffer
    if args[:1] == ["--names"]:
        kind, path = args[1], args[2]
        start = "%s/%s/" % (prefix, kind)
        with open(path, "rb") as f:
            for line in f:
                i, iri = line.rstrip(b"\n").decode("utf-8").split("\t", 1)
                assert iri.startswith(start), iri
                name = urllib.parse.unquote(iri[len(start):])
                out.write(("%s\t%s\n" % (i, name)).encode("utf-8"))
        return
    path = args[0]
    opener = gzip.open if path.endswith(".gz") else open
    q = lambda s: urllib.parse.quote(s, safe="")
    with opener(path, "rb") as f:
        for line in f:
            h, r, t = line.rstrip(b"\n").decode("utf-8").split("\t")
            out.write(("<%s/e/%s> <%s/r/%s> <%s/e/%s> .\n" % (
                prefix, q(h), prefix, q(r), prefix, q(t))).encode("utf-8"))


main()
