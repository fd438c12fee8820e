#!/usr/bin/env bash
# The transformer text encoder on a tiny random BERT written with numpy
# (tests/tools/tiny_bert.py): token IDs equal to the reference tokenizer's,
# vectors within 1e-5 of the reference forward pass, the schema and CLI
# (distinct texts once, entity means, shards, threads, merge, a changed
# model refused) and bad model directories (one line, exit 1, no output).
source "$KG_TOP/tests/cli/lib.sh"
plan 31
py=$(numpy_python)
if [ -z "$py" ]; then
	skip_all "transformer encoder: python3 with numpy not available"
fi
tiny="$py $KG_TOP/tests/tools/tiny_bert.py"
tool=$KG_BUILD/aux/bert_tool

# close A B TOL: the float matrices of two text files agree within TOL.
close() {
	"$py" - "$1" "$2" "$3" <<'PY'
import sys, numpy as np
a, b = np.loadtxt(sys.argv[1], ndmin=2), np.loadtxt(sys.argv[2], ndmin=2)
d = abs(a - b).max() if a.shape == b.shape else float("inf")
print("# max |diff| %.3g over %s" % (d, a.shape))
sys.exit(0 if a.shape == b.shape and d <= float(sys.argv[3]) and
         abs(a).max() > 0.01 else 1)
PY
}

$tiny write m/tb && $tiny write m/cased --cased &&
    $tiny write m/max --pool max --no-normalize &&
    $tiny write m/cls --pool cls && $tiny texts texts.json
check "tiny models written" test -s m/tb/model.safetensors

# ---- Tokenizer and forward pass against the reference. ----
$tiny tokens m/tb texts.json >ref.tok
$tool tokens m/tb texts.json >got.tok
check "token IDs equal the reference's (lowercase, accents stripped)" \
    cmp -s ref.tok got.tok
check "some texts are cut at max_seq_length (24 tokens)" \
    sh -c "awk 'NF == 24' ref.tok | grep -q ."
check "accents stripped: 'Café' and 'CAFÉ' give the same pieces" \
    sh -c "[ \"\$(sed -n 2p got.tok | cut -d' ' -f1-2)\" = \"\$(sed -n 3p got.tok | cut -d' ' -f1-2)\" ]"
$tiny tokens m/cased texts.json >ref.tok
$tool tokens m/cased texts.json >got.tok
check "token IDs equal the reference's (cased, accents kept)" \
    cmp -s ref.tok got.tok
$tiny tokens m/tb texts.json 8 >ref.tok
$tool tokens m/tb texts.json 8 >got.tok
check "token IDs equal the reference's at max_length 8" cmp -s ref.tok got.tok

$tiny encode m/tb texts.json >ref.vec
$tool encode m/tb texts.json 2>/dev/null >got.vec
check "vectors within 1e-5 (mean pooling, Normalize)" close ref.vec got.vec 1e-5
$tool encode m/tb texts.json 24 3 2>/dev/null >got3.vec
check "the same with batches of 3" close ref.vec got3.vec 1e-5
$tiny encode m/max texts.json 8 >ref.vec
$tool encode m/max texts.json 8 5 2>/dev/null >got.vec
check "vectors within 1e-5 (max pooling, max_length 8)" \
    close ref.vec got.vec 1e-5
$tiny encode m/cls texts.json >ref.vec
$tool encode m/cls texts.json 2>/dev/null >got.vec
check "vectors within 1e-5 (CLS pooling)" close ref.vec got.vec 1e-5

# ---- Through kg-encode-attrs. ----
printf 'a\tr\tb\nb\tr\tc\nc\tr\td\nd\tr\te\n' >triples.tsv
kg-ingest -q -o ds --train triples.tsv || notok "ingest"
mkdir -p s
mv m/tb s/tb
printf 'a\tbio\tHello, world!\nc\tbio\tCafé crème\nc\tbio\tdoctor\n' >s/t.tsv
printf 'd\tbio\tHello, world!\ne\tbio\tdoctor\n' >>s/t.tsv
printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "encoder": "transformer",
    "model": "tb", "batch_size": 2}}}\n' >s/schema.json
check "fit with the model next to the schema" \
    kg-encode-attrs fit -q -d ds -s s/schema.json -o model
sum=$(sha256sum s/tb/model.safetensors | cut -d' ' -f1)
check "the model records the weights' sha256" grep -q "$sum" model/model.json
sum=$(sha256sum s/tb/tokenizer.json | cut -d' ' -f1)
check "the model records the tokenizer's sha256" grep -q "$sum" model/model.json
check "transform" kg-encode-attrs transform -q -j 2 -d ds -m model -o feat
printf '["Hello, world!", "Café crème", "doctor"]' >cli.json
$tiny encode s/tb cli.json >ref4.vec
"$py" - ref4.vec feat/bio.npy feat/has_bio.npy >ent.out <<'PY'
import sys, numpy as np
r = np.loadtxt(sys.argv[1])
f, has = np.load(sys.argv[2]), np.load(sys.argv[3])
m = (r[1] + r[2]) / 2
want = np.stack([r[0], np.zeros(32), m / np.linalg.norm(m), r[0], r[2]])
print("max_diff %.3g has %s" % (abs(f - want).max(), "".join(map(str, has))))
PY
check "entity vectors: its text, or the normalised mean of its texts" \
    sh -c "awk '{ exit !(\$2 < 1e-5 && \$4 == \"10111\") }' ent.out"
check "each distinct text encoded once (3 of 5 values)" \
    grep -q '"distinct_texts": 3,' feat/manifest.json
kg-encode-attrs transform -q -j 1 -d ds -m model -o feat1
check "one thread gives the same bytes as two" cmp -s feat/bio.npy feat1/bio.npy
kg-encode-attrs transform -q -d ds -m model -o sh0 --shard 0/2 &&
    kg-encode-attrs transform -q -d ds -m model -o sh1 --shard 1/2 &&
    kg-encode-attrs merge -q -m model -o merged sh0 sh1
check "two shards merged give the same bytes" cmp -s feat/bio.npy merged/bio.npy
kg-encode-attrs transform -q --merge --shards 3 -d ds -m model -o tm
check "transform --merge (3 shards) gives the same bytes" \
    cmp -s feat/bio.npy tm/bio.npy

cp -r s/tb s/tb.orig
printf ' ' >>s/tb/tokenizer.json
expect_fail "a changed tokenizer is refused" 1 \
    "tokenizer.json: changed since fit" \
    kg-encode-attrs transform -d ds -m model -o changed
check "nothing written for it" test ! -e changed
rm -rf s/tb && mv s/tb.orig s/tb

printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "encoder": "transformer",
    "model": "tb", "dim": 16}}}\n' >s/dim.json
expect_fail "dim other than the model's width" 1 "gives 32 values" \
    kg-encode-attrs fit -d ds -s s/dim.json -o o1
# The schema's max_length reaches the encoder: an 11-token text cut at 8.
printf 'b\tbio\tthe long text over max, the long text\n' >s/long.tsv
printf '{"tables": [{"path": "long.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "encoder": "transformer",
    "model": "tb", "max_length": 8, "batch_size": 1}}}\n' >s/cut.json
printf '["the long text over max, the long text"]' >long.json
$tiny encode s/tb long.json 8 >ref8.vec
kg-encode-attrs fit -q -d ds -s s/cut.json -o mcut &&
    kg-encode-attrs transform -q -d ds -m mcut -o fcut &&
    "$py" -c 'import numpy as np; np.savetxt("got8.vec", np.load("fcut/bio.npy")[1:2])'
check "max_length 8 from the schema cuts the text as the reference does" \
    close ref8.vec got8.vec 1e-5
printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "encoder": "transformer",
    "model": "tb", "max_length": 33}}}\n' >s/len.json
expect_fail "max_length past the model's positions" 1 \
    "max_length 33 exceeds the 32 positions" \
    kg-encode-attrs fit -d ds -s s/len.json -o o3
printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "encoder": "transformer",
    "model": "tb", "max_features": 10}}}\n' >s/key.json
expect_fail "a TF-IDF option with the transformer" 1 \
    "max_features: only for the tfidf encoder" \
    kg-encode-attrs fit -d ds -s s/key.json -o o2

# ---- Bad model directories: one line, exit 1, nothing written. ----
one_line() {
	local name=$1 pat=$2 dir=$3 err rc
	sed "s|\"tb\"|\"$dir\"|" s/schema.json >s/bad.json
	err=$(kg-encode-attrs fit -d ds -s s/bad.json -o bad 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] &&
	    grep -Eq -- "$pat" <<<"$err" && [ ! -e bad ]; then
		ok "$name"
	else
		notok "$name (exit $rc, stderr '$err', output: $(ls -d bad 2>&1))"
	fi
}
for k in no-weights truncated bad-shape bad-offset roberta no-cls; do
	$tiny break s/tb "$k" "s/$k"
done
one_line "a directory without weights" \
    "no-weights/model.safetensors': No such file" no-weights
one_line "a truncated safetensors file" \
    "tensor '.*': data_offsets .* outside the [0-9]+ bytes" truncated
one_line "a header that lies about a shape" \
    "key.weight': its shape needs 4224 bytes, data_offsets give 4096" bad-shape
one_line "a header that lies about an offset" \
    "key.weight': data_offsets \[[0-9]+, [0-9]+\] outside" bad-offset
one_line "an unknown architecture" "unsupported model_type 'roberta'" roberta
one_line "a tokenizer without [CLS]" \
    "classifier token '\[CLS\]' is not in the vocabulary" no-cls
