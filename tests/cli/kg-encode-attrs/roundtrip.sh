#!/usr/bin/env bash
# fit / transform / merge on the enterprise generator's tiny instance:
# one shard equals a merge of four shards byte for byte, and the feature
# arrays are well formed.
source "$KG_TOP/tests/cli/lib.sh"
plan 13
gen=$KG_BUILD/aux/kg_gen_enterprise

check "generate a tiny enterprise graph" \
    "$gen" -o ent -n 600 -s 7 2>/dev/null
check "generator is deterministic" \
    sh -c "'$gen' -o ent2 -n 600 -s 7 2>/dev/null && diff -r ent ent2"
check "--one-file writes the same triples in one file" sh -c "
    '$gen' -o ent1 -n 600 -s 7 --one-file 2>/dev/null &&
    cat ent/train.tsv ent/valid.tsv ent/test.tsv | sort >split.txt &&
    sort ent1/triples.tsv | cmp -s - split.txt"
check "its schema is examples/enterprise/schema.json" \
    cmp -s ent/schema.json "$KG_TOP/examples/enterprise/schema.json"
check "ingest it" kg-ingest -q -o ds --types ent/types.tsv \
    --train ent/train.tsv --valid ent/valid.tsv --test ent/test.tsv
check "fit" kg-encode-attrs fit -q -d ds -s ent/schema.json -o model
check "model has a manifest and the text projections" \
    test -f model/manifest.json -a -f model/person.bio.proj.npy
check "transform, one shard" \
    kg-encode-attrs transform -q -d ds -m model -o one
for i in 0 1 2 3; do
	kg-encode-attrs transform -q -d ds -m model -o s$i --shard $i/4 ||
	    notok "transform shard $i/4"
done
check "merge four shards (any order)" \
    kg-encode-attrs merge -q -m model -o four s2 s0 s3 s1
check "merge one shard" kg-encode-attrs merge -q -m model -o merged1 one

# 13 index attributes (3 arrays each) and 3 text ones (2 each)
same=1 n=0
for f in one/*.npy; do
	b=$(basename "$f")
	n=$((n + 1))
	cmp -s "$f" "four/$b" || { same=0; echo "# differs: $b"; }
	cmp -s "$f" "merged1/$b" || { same=0; echo "# differs (1): $b"; }
done
if [ "$same" = 1 ] && [ "$n" -eq 45 ]; then
	ok "1 shard == merge of 4 shards, byte for byte ($n arrays)"
else
	notok "1 shard == merge of 4 shards ($n arrays)"
fi
check "no temporary directory left" \
    sh -c '! ls -a | grep -q "\.tmp\."'

py=$(numpy_python)
if [ -z "$py" ]; then
	skip "feature arrays well formed: numpy not available"
else
	check "feature arrays well formed" "$py" - four model <<'PY'
import json, sys
import numpy as np
feat, model = sys.argv[1], sys.argv[2]
man = json.load(open(feat + "/manifest.json"))
n = man["figures"]["entities"]
for a in man["config"]["attributes"]:
    out, kind = a["output"], a["kind"]
    has = np.load(f"{feat}/has_{out}.npy")
    assert has.shape == (n,) and has.dtype == np.uint8, out
    if kind == "text":
        x = np.load(f"{feat}/{out}.npy")
        assert x.shape == (n, a["dim"]) and x.dtype == np.float32, out
        norms = np.linalg.norm(x, axis=1)
        # rows with text are unit vectors (or zero when out of vocabulary)
        assert np.all((np.abs(norms[has == 1] - 1) < 1e-5) |
                      (norms[has == 1] == 0)), out
        assert np.all(norms[has == 0] == 0), out
        continue
    off = np.load(f"{feat}/{out}_offsets.npy")
    idx = np.load(f"{feat}/{out}_indices.npy")
    assert off.dtype == np.int64 and idx.dtype == np.int32, out
    assert off.shape == (n + 1,) and off[0] == 0 and off[-1] == len(idx), out
    assert np.all(np.diff(off) >= 0), out
    assert np.all((idx >= 0) & (idx < a["slots"])), out
    for e in range(n):
        row = idx[off[e]:off[e + 1]]
        assert np.all(np.diff(row) > 0), (out, e)
        if kind in ("numeric", "date"):
            # exactly the missing bin without a value
            if has[e] == 0:
                assert list(row) == [a["slots"] - 1], (out, e)
            else:
                assert len(row) >= 1 and row.max() < a["slots"] - 1
        elif has[e] == 0:
            assert len(row) == 0, (out, e)
# planted structure: person.department is known for every person
dep = np.load(f"{feat}/has_person.department.npy")
ent = [l.rstrip("\n").split("\t")[1] for l in open("ds/entities.tsv")]
isp = np.array([e.startswith("person:") for e in ent])
assert np.all(dep[isp] == 1) and np.all(dep[~isp] == 0)
PY
fi
