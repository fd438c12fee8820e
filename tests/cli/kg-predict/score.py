#!/usr/bin/env python3
"""Brute-force references for kg-predict's scored triples (score.sh).

  score.py triples DATASET N SEED OUT
      N test triples by name, one a line, and as three lists OUT.h,
      OUT.r, OUT.t.
  score.py check MODEL GAMMA RECIPROCAL DATASET MODELDIR TRIPLES JSON
      each triple's score against numpy's float64 score, and its tail
      and head ranks against the filtered realistic ranks over every
      entity computed here: a rank must lie between the rank counting
      only candidates clearly above the true score and the rank counting
      those within 1e-4 of it as well (float32 against float64).
  score.py cartesian MODEL GAMMA DATASET MODELDIR HEADS RELS TSV K
      the K best combinations of HEADS x RELS x every entity.

Prints "ok - ..." / "not ok - ..." lines.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from brute import names, score_all  # noqa: E402

EPS = 1e-4


def report(name, bad):
    print(("ok - " if bad is None else "not ok - ") + name +
          ("" if bad is None else ": " + bad))


def known(ds):
    s = set()
    for sp in ("train", "valid", "test"):
        for h, r, t in np.load(ds + "/" + sp + ".npy"):
            s.add((int(h), int(r), int(t)))
    return s


def rank_bounds(scores, s, true, drop):
    """1 + clearly greater, 1 + greater or close, and the ties, over the
    candidates other than the true one and those in drop."""
    keep = np.ones(len(scores), bool)
    keep[true] = False
    for c in drop:
        keep[c] = False
    x = scores[keep]
    sure = int((x > s + EPS).sum())
    close = int((np.abs(x - s) <= EPS).sum())
    return 1 + sure, 1 + sure + close


def check(model, gamma, recip, ds, md, tfile, jfile):
    E = np.load(md + "/entities.npy").astype(float)
    R = np.load(md + "/relations.npy").astype(float)
    ent, rel = names(ds + "/entities.tsv"), names(ds + "/relations.tsv")
    ei, ri = {n: i for i, n in enumerate(ent)}, {n: i for i, n in enumerate(rel)}
    kn = known(ds)
    allc = np.arange(len(ent))
    nr = len(rel)
    lines = [l.rstrip("\n").split("\t") for l in open(tfile)]
    got = [json.loads(l) for l in open(jfile)]
    bad_s = bad_t = bad_h = None
    if len(got) != len(lines):
        report(model + ": one answer per triple", "%d for %d" % (len(got), len(lines)))
        return
    for (hn, rn, tn), o in zip(lines, got):
        h, r, t = ei[hn], ri[rn], ei[tn]
        ref = score_all(model, gamma, E, R, h, r, t)
        if (o["head"], o["relation"], o["tail"]) != (hn, rn, tn) or \
                abs(o["score"] - ref) > EPS * max(1, abs(ref)):
            bad_s = bad_s or "%s: %s vs %s" % (o, o["score"], ref)
        tails = score_all(model, gamma, E, R, h, r, allc)
        lo, hi = rank_bounds(tails, tails[t], t,
                             [c for c in allc if (h, r, int(c)) in kn])
        if not lo <= o["tail_rank"] <= hi:
            bad_t = bad_t or "%s %s %s: %s not in [%d, %d]" % (hn, rn, tn, o["tail_rank"], lo, hi)
        heads = score_all(model, gamma, E, R, allc, r + nr, h) if recip else \
            score_all(model, gamma, E, R, allc, r, t)
        if recip:
            # (?, r, t) is scored as (t, r + n, ?).
            heads = score_all(model, gamma, E, R, t, r + nr, allc)
        lo, hi = rank_bounds(heads, heads[h], h,
                             [c for c in allc if (int(c), r, t) in kn])
        if not lo <= o["head_rank"] <= hi:
            bad_h = bad_h or "%s %s %s: %s not in [%d, %d]" % (hn, rn, tn, o["head_rank"], lo, hi)
    report(model + ": scores equal numpy's", bad_s)
    report(model + ": tail ranks are the filtered ranks", bad_t)
    report(model + ": head ranks are the filtered ranks", bad_h)


def cartesian(model, gamma, ds, md, hfile, rfile, tsv, k):
    E = np.load(md + "/entities.npy").astype(float)
    R = np.load(md + "/relations.npy").astype(float)
    ent, rel = names(ds + "/entities.tsv"), names(ds + "/relations.tsv")
    ei, ri = {n: i for i, n in enumerate(ent)}, {n: i for i, n in enumerate(rel)}
    H = [ei[l.strip()] for l in open(hfile)]
    Rs = [ri[l.strip()] for l in open(rfile)]
    allc = np.arange(len(ent))
    combos = []
    for h in H:
        for r in Rs:
            for t, s in zip(allc, score_all(model, gamma, E, R, h, r, allc)):
                combos.append((s, h, r, int(t)))
    combos.sort(key=lambda c: -c[0])
    rows = [l.rstrip("\n").split("\t") for l in open(tsv)][1:]
    bad = None
    if len(rows) != k:
        bad = "%d rows for k = %d" % (len(rows), k)
    for i, row in enumerate(rows):
        s, h, r, t = combos[i]
        got = float(row[3])
        if abs(got - s) > EPS * max(1, abs(s)):
            bad = bad or "row %d: score %s, the %d-th best is %s" % (i + 1, got, i + 1, s)
        elif abs(combos[i + 1][0] - s) > EPS and abs(combos[i - 1][0] - s) > EPS and \
                (row[0], row[1], row[2]) != (ent[h], rel[r], ent[t]):
            bad = bad or "row %d: %s, wanted %s" % (i + 1, row[:3], (ent[h], rel[r], ent[t]))
    report(model + ": --cartesian gives the k best combinations", bad)


def triples(ds, n, seed, out):
    rng = np.random.RandomState(int(seed))
    ent, rel = names(ds + "/entities.tsv"), names(ds + "/relations.tsv")
    test = np.load(ds + "/test.npy")
    rows = test[rng.choice(len(test), int(n), replace=False)]
    with open(out, "w") as f, open(out + ".h", "w") as fh, \
            open(out + ".r", "w") as fr, open(out + ".t", "w") as ft:
        for h, r, t in rows:
            f.write("%s\t%s\t%s\n" % (ent[h], rel[r], ent[t]))
            fh.write(ent[h] + "\n")
            fr.write(rel[r] + "\n")
            ft.write(ent[t] + "\n")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[0] == "triples":
        triples(*a[1:5])
    elif a[0] == "check":
        check(a[1], float(a[2]), a[3] == "1", *a[4:8])
    elif a[0] == "cartesian":
        cartesian(a[1], float(a[2]), *a[3:8], int(a[8]))
