"""Print what kg-ingest made of RDF input, for golden comparisons: one
JSON array a line, first the triples of each split as
["edge", split, head, relation, tail] (names through entities.tsv and
relations.tsv), then the rows of literals.tsv as
["literal", entity, predicate, lexical form, datatype or null,
language or null], or ["row", entity, predicate, value] for a value
that is not a literal (an rdf:type object written as an attribute).
JSON escapes keep every byte visible (control characters, every
Unicode plane).  The literal table is read with Python's csv module
(tab delimiter, double quotes), an independent reader of its quoting.

usage: python3 rdf_rows.py DATASET_DIR
"""
import csv
import json
import os
import struct
import sys
import ast


def npy_rows(path):
    with open(path, "rb") as f:
        data = f.read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + hlen].decode("latin1"))
    code = {"<i4": "i", "<i8": "q"}[header["descr"]]
    n = header["shape"][0]
    vals = struct.unpack("<%d%s" % (3 * n, code), data[10 + hlen:])
    return [vals[3 * i:3 * i + 3] for i in range(n)]


def names(path):
    out = []
    with open(path, "rb") as f:
        for line in f:
            i, name = line.rstrip(b"\n").split(b"\t", 1)
            assert int(i) == len(out), path
            out.append(name.decode("utf-8"))
    return out


def literal(value):
    """'"lex"@lang', '"lex"^^<dt>' or '"lex"' -> (lex, dt, lang)."""
    if not value.startswith('"'):
        return None
    q = value.rindex('"')
    lex, rest = value[1:q], value[q + 1:]
    if rest.startswith("@"):
        return lex, None, rest[1:]
    if rest.startswith("^^<") and rest.endswith(">"):
        return lex, rest[3:-1], None
    assert rest == "", value
    return lex, None, None


def main():
    d = sys.argv[1]
    ent = names(os.path.join(d, "entities.tsv"))
    rel = names(os.path.join(d, "relations.tsv"))
    for split in ("train", "valid", "test"):
        for h, r, t in npy_rows(os.path.join(d, split + ".npy")):
            print(json.dumps(["edge", split, ent[h], rel[r], ent[t]]))
    path = os.path.join(d, "literals.tsv")
    if not os.path.exists(path):
        return
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.reader(f, delimiter="\t", quotechar='"',
                              strict=True):
            assert len(row) == 3, row
            lit = literal(row[2])
            if lit is None:
                print(json.dumps(["row"] + row))
            else:
                print(json.dumps(["literal", row[0], row[1]] + list(lit)))


main()
