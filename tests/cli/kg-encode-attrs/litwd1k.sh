#!/usr/bin/env bash
# The real LitWD1K attributes (numbers, dates, Wikidata classes, labels,
# descriptions, aliases) with examples/schemas/litwd1k.json.
source "$KG_TOP/tests/cli/lib.sh"
plan 11
d=$(shared_data litwd1k)
if [ -z "$d" ]; then
	skip_all "litwd1k attributes: KG_SHARED_DATA not set or litwd1k absent"
fi
schema=$KG_TOP/examples/schemas/litwd1k.json
check "ingest litwd1k" kg-ingest -q -o ds --train "$d/train.txt.gz" \
    --valid "$d/valid.txt.gz" --test "$d/test.txt.gz"
check "fit" kg-encode-attrs fit -q -d ds -s "$schema" \
    --tables-dir "$d/attrs" -o model 2>/dev/null
# Every table skips entities the dataset lacks, so a dataset of some of
# LitWD1K's entities fits too.
zcat "$d/train.txt.gz" | head -n 2000 >sub.tsv
check "fit on a dataset of a subset of the entities" sh -c '
    kg-ingest -q -o dsub --train sub.tsv &&
    kg-encode-attrs fit -q -d dsub -s "$1" --tables-dir "$2" -o msub' \
    sh "$schema" "$d/attrs"
check "transform in two shards" sh -c '
    kg-encode-attrs transform -q -d ds -m model -o s0 --shard 0/2 &&
    kg-encode-attrs transform -q -d ds -m model -o s1 --shard 1/2'
check "merge" kg-encode-attrs merge -q -m model -o feat s1 s0
# Coverage as the dataset's README states it.
count() { tail -c "$(( $(stat -c %s "feat/has_$1.npy") - 256 ))" \
    "feat/has_$1.npy" | od -An -v -tu1 | tr -s ' ' '\n' | grep -c '^1$'; }
for pair in type:1533 label:1533 description:1451 aliases:582; do
	a=${pair%%:*} want=${pair#*:}
	got=$(count "$a")
	if [ "$got" = "$want" ]; then ok "$a on $want entities"; else
		notok "$a on $want entities (got $got)"; fi
done
py=$(numpy_python)
if [ -z "$py" ]; then
	skip_section 2 "litwd1k edges against numpy: numpy not available"
	exit 0
fi
check "population edges equal numpy's percentiles" "$py" - "$d" <<'PY'
import gzip, sys
import numpy as np
d = sys.argv[1]
ents = set(l.rstrip("\n").split("\t")[1] for l in open("ds/entities.tsv"))
x = []
for line in gzip.open(d + "/attrs/numeric_literals.tsv.gz", "rt"):
    e, a, v = line.rstrip("\n").split("\t")
    if a == "P1082_Q199" and e in ents:
        x.append(float(v.split('"')[1]))
x = np.array(x)
e = np.percentile(x, np.linspace(0, 100, 6))
e = e[np.ediff1d(e, to_begin=np.inf) > 1e-8]
got = np.load("model/P1082_Q199.edges.npy")
print("#", len(x), "values; edges", got)
sys.exit(0 if got.shape == e.shape and np.allclose(got, e, rtol=1e-12) else 1)
PY
check "description vectors are unit length" "$py" -c '
import numpy as np
x = np.load("feat/description.npy"); h = np.load("feat/has_description.npy")
n = np.linalg.norm(x, axis=1)
assert x.shape == (1533, 32) and np.all(np.abs(n[h == 1] - 1) < 1e-5)'
