#!/usr/bin/env bash
# The transformer encoder's device path (lib/attrs/bert_device.c: the whole
# forward pass as compute-backend operations, the activations resident)
# against the host path, on the CPU backend: bert_tool encode-dev, and
# kg-encode-attrs transform --device cuda under the test hook
# KG_ENCODE_SEAM=cpu.  Vectors within 1e-5 and cosine >= 0.99999 of the
# host path's on a tiny random BERT (mean, max and CLS pooling) and on
# all-MiniLM-L6-v2 when it is there; one token upload and one vector
# download a batch; --device refused where it cannot run.
source "$KG_TOP/tests/cli/lib.sh"
plan 16
py=$(numpy_python)
if [ -z "$py" ]; then
	skip_all "transformer device path: python3 with numpy not available"
fi
tiny="$py $KG_TOP/tests/tools/tiny_bert.py"
tool=$KG_BUILD/aux/bert_tool

# same A B: the vectors of two text files agree within 1e-5 and each
# row's cosine is >= 0.99999 (and they are not all zero).
same() {
	"$py" - "$1" "$2" <<'PY'
import sys, numpy as np
def load(p):
    return np.load(p) if p.endswith(".npy") else np.loadtxt(p, ndmin=2)
a, b = load(sys.argv[1]).astype(np.float64), load(sys.argv[2]).astype(np.float64)
if a.shape != b.shape:
    print("# shapes %s %s" % (a.shape, b.shape)); sys.exit(1)
na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
live = (na > 0) | (nb > 0)
c = ((a * b).sum(1)[live] / na[live] / nb[live]).min() if live.any() else 0
d = abs(a - b).max()
print("# max |diff| %.3g, min cosine %.9f over %s" % (d, c, a.shape))
sys.exit(0 if d <= 1e-5 and c >= 0.99999 and abs(a).max() > 0.01 else 1)
PY
}

$tiny write m/tb && $tiny write m/max --pool max --no-normalize &&
    $tiny write m/cls --pool cls && $tiny texts texts.json
check "tiny models written" test -s m/tb/model.safetensors

$tool encode m/tb texts.json 2>/dev/null >host.vec
$tool encode-dev m/tb texts.json 2>dev.err >dev.vec
check "device path = host path (mean pooling, Normalize)" same host.vec dev.vec
$tiny encode m/tb texts.json >ref.vec
check "device path = the numpy reference" same ref.vec dev.vec
n=$("$py" -c 'import json; print(len(json.load(open("texts.json"))))')
check "one token upload and one vector download a batch" \
    grep -qx "batches $(( (n + 31) / 32 )) copies $(( 2 * ((n + 31) / 32) ))" dev.err
$tool encode m/tb texts.json 24 3 2>/dev/null >host3.vec
$tool encode-dev m/tb texts.json 24 3 2>dev3.err >dev3.vec
check "the same with batches of 3" same host3.vec dev3.vec
check "batches of 3: two copies a batch" \
    grep -qx "batches $(( (n + 2) / 3 )) copies $(( 2 * ((n + 2) / 3) ))" dev3.err
$tool encode m/max texts.json 8 5 2>/dev/null >hmax.vec
$tool encode-dev m/max texts.json 8 5 2>/dev/null >dmax.vec
check "max pooling, no Normalize, max_length 8" same hmax.vec dmax.vec
$tool encode m/cls texts.json 2>/dev/null >hcls.vec
$tool encode-dev m/cls texts.json 2>/dev/null >dcls.vec
check "CLS pooling" same hcls.vec dcls.vec

# ---- kg-encode-attrs transform --device. ----
printf 'a\tr\tb\nb\tr\tc\nc\tr\td\nd\tr\te\n' >triples.tsv
kg-ingest -q -o ds --train triples.tsv || notok "ingest"
mkdir -p s && mv m/tb s/tb
printf 'a\tbio\tHello, world!\nc\tbio\tCafé crème\nc\tbio\tdoctor\n' >s/t.tsv
printf 'd\tbio\tHello, world!\ne\tbio\tthe long text over max\n' >>s/t.tsv
printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "encoder": "transformer",
    "model": "tb", "batch_size": 2}}}\n' >s/schema.json
kg-encode-attrs fit -q -d ds -s s/schema.json -o model &&
    kg-encode-attrs transform -q -d ds -m model -o host ||
    notok "fit and host transform"
KG_ENCODE_SEAM=cpu kg-encode-attrs transform -q --device cuda -d ds \
    -m model -o dev || notok "device transform"
check "transform --device cuda (CPU backend) = the host path" \
    same host/bio.npy dev/bio.npy
check "its manifest names the backend and two copies a batch" \
    "$py" -c 'import json, sys
f = json.load(open("dev/manifest.json"))["figures"]["attributes"]["bio"]
print("#", f["backend"], f["batches"], f["device_copies"])
sys.exit(not (f["backend"].startswith("cpu:") and f["batches"] == 2 and
              f["device_copies"] == 4))'
expect_fail "--device is an option of transform only" 2 \
    "option or argument not used by this subcommand" \
    kg-encode-attrs fit --device cuda -d ds -s s/schema.json -o o1
expect_fail "a bad --device value" 2 "--device" \
    kg-encode-attrs transform --device gpu -d ds -m model -o o2
if grep -q '^KG_CUDA=1$' "$KG_BUILD/cuda.cfg" 2>/dev/null &&
    nvidia-smi -L 2>/dev/null | grep -q GPU; then
	skip "--device cuda with no GPU: a GPU is visible here"
	skip "nothing written: a GPU is visible here"
else
	expect_fail "--device cuda with no GPU (or no CUDA build): one line" \
	    2 "cuda|CUDA" kg-encode-attrs transform --device cuda -d ds \
	    -m model -o o3
	check "nothing written for it" test ! -e o3
fi

# ---- all-MiniLM-L6-v2 (make text-model), skipped without it. ----
model=${KG_TEXT_MODEL:-$KG_TOP/models/all-MiniLM-L6-v2}
if [ ! -f "$model/model.safetensors" ]; then
	skip_section 2 "all-MiniLM-L6-v2: no model in $model (run make text-model)"
	exit 0
fi
"$py" -c 'import json, sys
json.dump(json.load(open(sys.argv[1], encoding="utf-8"))["texts"],
          open("mt.json", "w"), ensure_ascii=False)' \
    "$KG_TOP/tests/fixtures/minilm/texts.json"
$tool encode "$model" mt.json 256 4 2>/dev/null >mh.vec
$tool encode-dev "$model" mt.json 256 4 2>/dev/null >md.vec
check "MiniLM: device path = host path" same mh.vec md.vec
check "MiniLM: device path = sentence-transformers (cosine >= 0.9999)" \
    "$py" - "$KG_TOP/tests/fixtures/minilm/vectors.npy" md.vec <<'PY'
import sys, numpy as np
a = np.load(sys.argv[1]).astype(np.float64)
b = np.loadtxt(sys.argv[2], ndmin=2)
c = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
print("# min cosine %.9f" % c.min())
sys.exit(0 if a.shape == b.shape and c.min() >= 0.9999 else 1)
PY
