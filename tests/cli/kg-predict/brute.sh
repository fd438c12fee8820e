#!/usr/bin/env bash
# kg-predict's answers equal a brute-force ranking computed with numpy
# from the model's own arrays, raw and filtered, for every shallow model;
# filtered answers never form a known triple; nearest entities too.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 47
here=$KG_TOP/tests/cli/kg-predict

py=$(numpy_python)
[ -n "$py" ] || skip_all "kg-predict brute force: no python3 with numpy"
make_umls umls || { notok "ingest umls"; exit 0; }
"$py" "$here/brute.py" queries umls 60 3 q.tsv || { notok "sample queries"; exit 0; }

for spec in "DistMult 16" "ComplEx 16" "TransE_l2 12" "TransE_l1 12" \
    "RotatE 16" "RESCAL 8" "TransR 8 --rel-dim 4"; do
	set -- $spec
	name=$1 dim=$2; shift 2
	"$MKMODEL" --gamma 6 "$@" umls "m_$name" "$name" "$dim" ||
	    { notok "make $name"; continue; }
	kg-predict -q -k 7 --format json umls "m_$name" q.tsv >raw.json &&
	    kg-predict -q -k 7 --format json --filter umls "m_$name" <q.tsv \
	    >filt.json
	check "$name: exit 0" test $? -eq 0
	"$py" "$here/brute.py" check "$name" 6 umls "m_$name" q.tsv raw.json \
	    filt.json 7 || notok "$name: brute.py check exited with status $?"
done

# Reciprocal relations: heads are scored as tails of the inverse.
"$MKMODEL" --reciprocal umls recip ComplEx 16 || notok "make reciprocal"
kg-predict -q -k 4 --format json umls recip q.tsv >rraw.json
check "reciprocal exit 0" test $? -eq 0
"$py" - umls recip q.tsv rraw.json <<'PY' || notok "reciprocal heads: python exited with status $?"
import json, sys
import numpy as np
ds, md, qf, out = sys.argv[1:5]
E, R = np.load(md + "/entities.npy").astype(float), np.load(md + "/relations.npy").astype(float)
ent = [l.rstrip("\n").split("\t")[1] for l in open(ds + "/entities.tsv")]
rel = [l.rstrip("\n").split("\t")[1] for l in open(ds + "/relations.tsv")]
k, nr = E.shape[1] // 2, len(rel)
def cx(a): return a[..., :k] + 1j * a[..., k:]
bad = None
for (h, r, t), obj in zip((l.rstrip("\n").split("\t") for l in open(qf)),
                          (json.loads(l) for l in open(out))):
    if h != "?":
        continue
    ri, ti = rel.index(r), ent.index(t)
    # (?, r, t) is (t, r + n, ?) with the inverse relation row.
    ref = (cx(E[ti]) * cx(R[ri + nr]) * np.conj(cx(E))).real.sum(1)
    best = np.sort(ref)[::-1][:4]
    got = np.array([a["score"] for a in obj["answers"]])
    if not np.allclose(got, best, atol=1e-4):
        bad = "%s: %s vs %s" % (t, got, best)
        break
print(("ok - " if bad is None else "not ok - ") + "reciprocal heads use the inverse rows" + (": " + bad if bad else ""))
PY

# Nearest entities under each similarity.
cut -f2 umls/entities.tsv | head -20 >names.txt
for sim in cosine dot l2 l1; do
	kg-predict -q --nearest --sim $sim -k 6 --format json umls m_ComplEx \
	    names.txt >near.json
	check "nearest $sim exit 0" test $? -eq 0
	"$py" "$here/brute.py" nearest $sim umls m_ComplEx names.txt near.json 6 ||
	    notok "nearest $sim: brute.py exited with status $?"
done
# The model's own similarity: DistMult's identity relation gives x.y and
# TransE's gamma - |x - y|, the same order as dot and l2.
for pair in "DistMult dot" "TransE_l2 l2"; do
	set -- $pair
	kg-predict -q --nearest --sim model -k 6 --no-header umls "m_$1" \
	    names.txt | cut -f1,2 >a.tsv
	kg-predict -q --nearest --sim $2 -k 6 --no-header umls "m_$1" \
	    names.txt | cut -f1,2 >b.tsv
	check "--sim model of $1 ranks as $2" cmp -s a.tsv b.tsv
done
