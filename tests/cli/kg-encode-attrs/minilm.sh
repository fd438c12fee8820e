#!/usr/bin/env bash
# The transformer encoder on the real all-MiniLM-L6-v2 (`make text-model`
# puts it in models/, or KG_TEXT_MODEL names its directory) against
# sentence-transformers' own token IDs and vectors on 20 texts
# (tests/fixtures/minilm, made by tests/tools/st_reference.py with the
# versions it records): IDs equal, cosine >= 0.9999 for every text, and
# kg-encode-attrs gives the same vectors.  Skipped without the model.
source "$KG_TOP/tests/cli/lib.sh"
plan 5
model=${KG_TEXT_MODEL:-$KG_TOP/models/all-MiniLM-L6-v2}
fix=$KG_TOP/tests/fixtures/minilm
py=$(numpy_python)
if [ ! -f "$model/model.safetensors" ]; then
	skip_all "all-MiniLM-L6-v2: no model in $model (run make text-model)"
fi
if [ -z "$py" ]; then
	skip_all "all-MiniLM-L6-v2: python3 with numpy not available"
fi
tool=$KG_BUILD/aux/bert_tool
"$py" - "$fix/texts.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
json.dump(d["texts"], open("texts.json", "w"), ensure_ascii=False)
open("ref.tok", "w").write("".join(" ".join(map(str, x)) + "\n"
                                   for x in d["token_ids"]))
open("sha", "w").write(d["model_safetensors_sha256"] + "\n")
PY
check "the model is the one the fixture was made with" \
    sh -c "[ \"\$(sha256sum '$model/model.safetensors' | cut -d' ' -f1)\" = \"\$(cat sha)\" ]"
$tool tokens "$model" texts.json >got.tok
check "token IDs equal the tokenizers library's" cmp -s ref.tok got.tok
$tool encode "$model" texts.json 256 4 2>/dev/null >got.vec
"$py" - "$fix/vectors.npy" got.vec >cos.out <<'PY'
import sys, numpy as np
a = np.load(sys.argv[1]).astype(np.float64)
b = np.loadtxt(sys.argv[2], ndmin=2)
if a.shape != b.shape:
    print("shapes %s %s" % (a.shape, b.shape)); sys.exit(1)
c = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
print("min_cosine %.9f max_abs_diff %.3g" % (c.min(), abs(a - b).max()))
sys.exit(0 if c.min() >= 0.9999 else 1)
PY
rc=$?
echo "# $(cat cos.out)"
check "cosine >= 0.9999 with sentence-transformers for every text" test $rc -eq 0

# Through kg-encode-attrs: two entities with the first two texts.
printf 'a\tr\tb\nb\tr\tc\n' >triples.tsv
kg-ingest -q -o ds --train triples.tsv || notok "ingest"
"$py" -c 'import json; t = json.load(open("texts.json"))
print("a\tname\t%s\nc\tname\t%s" % (t[0], t[1]))' >t.tsv
printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"name": {"kind": "text", "encoder": "transformer",
    "model": "%s"}}}\n' "$model" >s.json
kg-encode-attrs fit -q -d ds -s s.json -o am &&
    kg-encode-attrs transform -q -d ds -m am -o feat
check "kg-encode-attrs writes [3, 384] vectors" \
    "$py" -c 'import numpy as np, sys
sys.exit(np.load("feat/name.npy").shape != (3, 384))'
check "entity a and c get the vectors of their texts" \
    "$py" - <<'PY'
import sys, numpy as np
f = np.load("feat/name.npy")
v = np.loadtxt("got.vec")
sys.exit(not (abs(f[0] - v[0]).max() < 1e-6 and abs(f[2] - v[1]).max() < 1e-6
              and not f[1].any()))
PY
