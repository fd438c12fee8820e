#!/usr/bin/env bash
# Bin edges equal what numpy / scikit-learn's KBinsDiscretizer compute for
# the same data: quantile = numpy.percentile (linear), uniform =
# numpy.linspace, dates (strptime format) parsed to days; and every value
# is encoded as numpy.searchsorted(edges[1:-1], x, side="right").
source "$KG_TOP/tests/cli/lib.sh"
plan 1
py=$(numpy_python)
if [ -z "$py" ]; then
	skip_all "bin edges against numpy: numpy not available"
fi
"$KG_BUILD/aux/kg_gen_enterprise" -o ent -n 800 -s 3 2>/dev/null &&
    kg-ingest -q -o ds --train ent/train.tsv --valid ent/valid.tsv \
    --test ent/test.tsv &&
    kg-encode-attrs fit -q -d ds -s ent/schema.json -o model &&
    kg-encode-attrs transform -q -d ds -m model -o feat ||
    notok "generate, ingest, fit, transform"
check "edges and bins equal numpy's" "$py" - <<'PY'
import csv, datetime, sys
import numpy as np

ents = [l.rstrip("\n").split("\t")[1] for l in open("ds/entities.tsv")]
eid = {e: i for i, e in enumerate(ents)}
vals = {}
with open("ent/people.csv") as f:
    for row in csv.DictReader(f):
        if row["person.salary"]:
            vals.setdefault("person.salary", []).append(
                (row["entity"], float(row["person.salary"])))
epoch = datetime.date(1970, 1, 1).toordinal()
for line in open("ent/attrs.tsv"):
    e, a, v = line.rstrip("\n").split("\t")
    if a == "product.price":
        vals.setdefault(a, []).append((e, float(v)))
    elif a == "company.founded":
        d, m, y = map(int, v.split("/"))
        vals.setdefault(a, []).append(
            (e, float(datetime.date(y, m, d).toordinal() - epoch)))

def sk_edges(x, n, strategy):
    lo, hi = x.min(), x.max()
    if strategy == "uniform":
        return np.linspace(lo, hi, n + 1)
    e = np.asarray(np.percentile(x, np.linspace(0, 100, n + 1)))
    return e[np.ediff1d(e, to_begin=np.inf) > 1e-8]

bad = 0
for name, n, strat in (("person.salary", 8, "quantile"),
                       ("product.price", 6, "uniform"),
                       ("company.founded", 5, "uniform")):
    x = np.array([v for _, v in vals[name]])
    want = sk_edges(x, n, strat)
    got = np.load(f"model/{name}.edges.npy")
    if got.shape != want.shape or np.max(np.abs(got - want) /
                                          np.maximum(1, np.abs(want))) > 1e-12:
        print("# edges differ", name, got, want)
        bad += 1
    off = np.load(f"feat/{name}_offsets.npy")
    idx = np.load(f"feat/{name}_indices.npy")
    nb = len(want) - 1
    for e, v in vals[name]:
        i = eid[e]
        b = int(np.clip(np.searchsorted(want[1:-1], v, side="right"), 0,
                        nb - 1))
        if list(idx[off[i]:off[i + 1]]) != [b]:
            print("# bin differs", name, e, v, idx[off[i]:off[i + 1]], b)
            bad += 1
            break
    print(f"# {name}: {len(x)} values, {nb} bins")
sys.exit(1 if bad else 0)
PY
