#!/usr/bin/env python3
"""Brute-force references for the kg-predict tests.

  brute.py queries DATASET N SEED OUT        sample queries from test.npy
  brute.py check MODEL GAMMA DATASET MODELDIR QUERIES RAW FILTERED K
      score every candidate of every query in float64 with numpy and
      check kg-predict's JSON answers against the ranking: each answer's
      score, the order, that nothing better was left out, and that the
      filtered answers form no known triple and are the best of the rest.
  brute.py nearest SIM DATASET MODELDIR NAMES OUT K
      the same for nearest entities under a similarity.

Prints "ok - ..." / "not ok - ..." lines for tests/run.sh.
"""
import json
import sys

import numpy as np


def names(path):
    return [l.rstrip("\n").split("\t", 1)[1] for l in open(path)]


def score_all(model, gamma, E, R, h, r, t):
    """Scores of (h, r, t) where exactly one of them is an array of ids
    (the candidates); the others are single ids.  float64."""
    E = E.astype(np.float64)
    R = R.astype(np.float64)
    H, T = E[h], E[t]
    Rr = R[r]
    d = E.shape[1]
    if model == "DistMult":
        return (H * Rr * T).sum(-1)
    if model in ("TransE_l1", "TransE_l2"):
        x = H + Rr - T
        n = np.abs(x).sum(-1) if model == "TransE_l1" else np.sqrt((x * x).sum(-1))
        return gamma - n
    if model == "ComplEx":
        k = d // 2
        hr, hi, tr, ti = H[..., :k], H[..., k:], T[..., :k], T[..., k:]
        rr, ri = Rr[..., :k], Rr[..., k:]
        return ((hr * rr - hi * ri) * tr + (hr * ri + hi * rr) * ti).sum(-1)
    if model == "RotatE":
        k = d // 2
        c, s = np.cos(Rr), np.sin(Rr)
        xr = H[..., :k] * c - H[..., k:] * s - T[..., :k]
        xi = H[..., :k] * s + H[..., k:] * c - T[..., k:]
        return gamma - np.sqrt(xr * xr + xi * xi).sum(-1)
    if model == "RESCAL":
        M = Rr.reshape(Rr.shape[:-1] + (d, d))
        return np.einsum("...i,...ij,...j->...", H, M, T)
    if model == "TransR":
        w = Rr.shape[-1]
        k = w // (d + 1)
        rv, M = Rr[..., :k], Rr[..., k:].reshape(Rr.shape[:-1] + (k, d))
        x = np.einsum("...ij,...j->...i", M, H) + rv - \
            np.einsum("...ij,...j->...i", M, T)
        return gamma - np.sqrt((x * x).sum(-1))
    raise SystemExit("unknown model " + model)


def sample_queries(ds, n, seed, out):
    rng = np.random.RandomState(int(seed))
    ent, rel = names(ds + "/entities.tsv"), names(ds + "/relations.tsv")
    test = np.load(ds + "/test.npy")
    rows = test[rng.choice(len(test), int(n), replace=False)]
    with open(out, "w") as f:
        for i, (h, r, t) in enumerate(rows):
            part = ["?", rel[r], ent[t]] if i % 3 == 0 else \
                [ent[h], rel[r], "?"] if i % 3 == 1 else [ent[h], "?", ent[t]]
            f.write("\t".join(part) + "\n")


class Checker:
    def __init__(self):
        self.bad = 0

    def check(self, name, cond, why=""):
        print(("ok - " if cond else "not ok - ") + name + ("" if cond else ": " + why))
        self.bad += not cond


def known_set(ds):
    s = set()
    for sp in ("train", "valid", "test"):
        for h, r, t in np.load(ds + "/" + sp + ".npy"):
            s.add((int(h), int(r), int(t)))
    return s


def check_answers(c, label, ref, ids_of, answers, k, allowed):
    """ref: reference score per candidate id; answers: [(id, score)];
    allowed: boolean mask of candidates that may be answered."""
    cand = np.nonzero(allowed)[0]
    want = min(k, len(cand))
    if len(answers) != want:
        return "%d answers, wanted %d" % (len(answers), want)
    got = [ids_of(a) for a in answers]
    scores = [a["score"] for a in answers]
    tol = 1e-4 * (1 + np.abs(ref[cand]).max())
    for g, s in zip(got, scores):
        if g is None or not allowed[g]:
            return "answer %r may not be given" % (g,)
        if abs(ref[g] - s) > tol:
            return "score %g, reference %g" % (s, ref[g])
    if any(scores[i] < scores[i + 1] for i in range(len(scores) - 1)):
        return "answers not best first"
    rest = np.setdiff1d(cand, np.array(got, dtype=np.int64))
    if len(rest) and want and ref[rest].max() > scores[-1] + tol:
        return "missed a candidate scoring %g > %g" % (ref[rest].max(), scores[-1])
    return None


def check(model, gamma, ds, md, queries, raw, filt, k):
    c = Checker()
    gamma, k = float(gamma), int(k)
    E, R = np.load(md + "/entities.npy"), np.load(md + "/relations.npy")
    ent, rel = names(ds + "/entities.tsv"), names(ds + "/relations.tsv")
    eid = {n: i for i, n in enumerate(ent)}
    rid = {n: i for i, n in enumerate(rel)}
    known = known_set(ds)
    qs = [l.rstrip("\n").split("\t") for l in open(queries)]
    ne, nr = len(ent), len(rel)
    for path, filtered in ((raw, False), (filt, True)):
        lines = [json.loads(l) for l in open(path)]
        c.check("%s %s: one object per query" % (model, path), len(lines) == len(qs))
        bad = None
        for (h, r, t), obj in zip(qs, lines):
            if t == "?":
                hi, ri = eid[h], rid[r]
                ref = score_all(model, gamma, E, R, hi, ri, np.arange(ne))
                allowed = np.array([not filtered or (hi, ri, x) not in known
                                    for x in range(ne)])
                ids_of = lambda a: eid.get(a.get("tail"))
            elif h == "?":
                ri, ti = rid[r], eid[t]
                ref = score_all(model, gamma, E, R, np.arange(ne), ri, ti)
                allowed = np.array([not filtered or (x, ri, ti) not in known
                                    for x in range(ne)])
                ids_of = lambda a: eid.get(a.get("head"))
            else:
                hi, ti = eid[h], eid[t]
                ref = score_all(model, gamma, E, R, hi, np.arange(nr), ti)
                allowed = np.array([not filtered or (hi, x, ti) not in known
                                    for x in range(nr)])
                ids_of = lambda a: rid.get(a.get("relation"))
            bad = check_answers(c, model, ref, ids_of, obj["answers"], k, allowed)
            if bad:
                bad = "line %d (%s): %s" % (obj["line"], "\t".join((h, r, t)), bad)
                break
        c.check("%s %s answers equal brute force" % (model,
                "filtered" if filtered else "raw"), bad is None, bad or "")
    return c.bad


def similarity(sim, E, q):
    E = E.astype(np.float64)
    x = E[q]
    if sim == "cosine":
        return E @ x / (np.linalg.norm(E, axis=1) * np.linalg.norm(x))
    if sim == "dot":
        return E @ x
    if sim == "l2":
        return -np.linalg.norm(E - x, axis=1)
    if sim == "l1":
        return -np.abs(E - x).sum(1)
    raise SystemExit("unknown similarity " + sim)


def nearest(sim, ds, md, names_file, out, k):
    c = Checker()
    E = np.load(md + "/entities.npy")
    ent = names(ds + "/entities.tsv")
    eid = {n: i for i, n in enumerate(ent)}
    qs = [l.rstrip("\n") for l in open(names_file)]
    lines = [json.loads(l) for l in open(out)]
    bad = None if len(lines) == len(qs) else "%d objects" % len(lines)
    for q, obj in zip(qs, lines):
        if bad:
            break
        ref = similarity(sim, E, eid[q])
        allowed = np.ones(len(ent), dtype=bool)
        allowed[eid[q]] = False
        bad = check_answers(c, sim, ref, lambda a: eid.get(a.get("entity")),
                            obj["answers"], int(k), allowed)
    c.check("nearest by %s equals brute force" % sim, bad is None, bad or "")
    return c.bad


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "queries":
        sample_queries(*sys.argv[2:6])
    elif cmd == "check":
        check(*sys.argv[2:10])
    elif cmd == "nearest":
        nearest(*sys.argv[2:8])
