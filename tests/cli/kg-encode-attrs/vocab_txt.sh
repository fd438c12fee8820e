#!/usr/bin/env bash
# A BERT directory with BertTokenizer's vocab.txt and tokenizer_config.json
# in place of tokenizer.json (tests/tools/tiny_bert.py vocab-form writes
# the same tokenizer both ways): the same token IDs and vectors as the
# tokenizer.json form on the tiny random BERT (lowercased and cased) and
# on all-MiniLM-L6-v2 with its own tokenizer_config.json when it is
# there; fit records the SHA-256 of vocab.txt followed by
# tokenizer_config.json and transform refuses a changed config; bad
# directories get one line, exit 1, nothing written.
source "$KG_TOP/tests/cli/lib.sh"
plan 14
py=$(numpy_python)
if [ -z "$py" ]; then
	skip_all "vocab.txt tokenizer: python3 with numpy not available"
fi
tiny="$py $KG_TOP/tests/tools/tiny_bert.py"
tool=$KG_BUILD/aux/bert_tool

$tiny write m/tb && $tiny write m/cased --cased && $tiny texts texts.json &&
    $tiny vocab-form m/tb m/tbv && $tiny vocab-form m/cased m/casedv
check "both forms written, the vocab form without tokenizer.json" \
    sh -c 'test -s m/tbv/vocab.txt && test ! -e m/tbv/tokenizer.json'
$tiny tokens m/tb texts.json >ref.tok
$tool tokens m/tbv texts.json >got.tok
check "vocab.txt: token IDs equal the reference's (lowercase)" \
    cmp -s ref.tok got.tok
$tool tokens m/tb texts.json 8 >json8.tok
$tool tokens m/tbv texts.json 8 >v8.tok
check "vocab.txt: the same at max_length 8" cmp -s json8.tok v8.tok
$tool tokens m/cased texts.json >json_cased.tok
$tool tokens m/casedv texts.json >v_cased.tok
check "vocab.txt, do_lower_case false: the cased form's IDs" \
    cmp -s json_cased.tok v_cased.tok
check "... which differ from the lowercased ones" \
    sh -c '! cmp -s v_cased.tok got.tok'
$tool encode m/tb texts.json 2>/dev/null >json.vec
$tool encode m/tbv texts.json 2>/dev/null >v.vec
check "vocab.txt: the same vectors" cmp -s json.vec v.vec

# ---- Through kg-encode-attrs. ----
printf 'a\tr\tb\nb\tr\tc\n' >triples.tsv
kg-ingest -q -o ds --train triples.tsv || notok "ingest"
mkdir -p s && cp -r m/tb s/tb && rm -f s/tb/tokenizer.json &&
    cp m/tbv/vocab.txt m/tbv/tokenizer_config.json s/tb/
printf 'a\tbio\tHello, world!\nc\tbio\tCafé crème\n' >s/t.tsv
printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "encoder": "transformer",
    "model": "tb"}}}\n' >s/schema.json
kg-encode-attrs fit -q -d ds -s s/schema.json -o model ||
    notok "fit with a vocab.txt model"
sum=$(cat s/tb/vocab.txt s/tb/tokenizer_config.json | sha256sum | cut -d' ' -f1)
check "fit records the sha256 of vocab.txt + tokenizer_config.json" \
    grep -q "$sum" model/model.json
sed -i 's/"do_lower_case": true/"do_lower_case": false/' \
    s/tb/tokenizer_config.json
expect_fail "a changed tokenizer_config.json is refused" 1 \
    "vocab.txt: changed since fit" \
    kg-encode-attrs transform -d ds -m model -o changed
check "nothing written for it" test ! -e changed

# ---- Bad directories. ----
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
cp -r s/tb s/none && rm s/none/vocab.txt
one_line "neither tokenizer.json nor vocab.txt" \
    "none/tokenizer.json: no such file, nor a vocab.txt beside it" none
cp -r m/tbv s/nocls && sed -i '/^\[CLS\]$/d' s/nocls/vocab.txt
one_line "a vocab.txt without [CLS]" \
    "vocab.txt: the classifier token '\[CLS\]' is not in the vocabulary" nocls
cp -r m/tbv s/rob && printf '{"tokenizer_class": "RobertaTokenizer"}' \
    >s/rob/tokenizer_config.json
one_line "another tokenizer class" \
    "unsupported tokenizer_class 'RobertaTokenizer'" rob

# ---- all-MiniLM-L6-v2 (make text-model), skipped without it. ----
model=${KG_TEXT_MODEL:-$KG_TOP/models/all-MiniLM-L6-v2}
if [ ! -f "$model/model.safetensors" ]; then
	skip_section 2 "all-MiniLM-L6-v2: no model in $model (run make text-model)"
	exit 0
fi
$tiny vocab-form "$model" mv
"$py" - "$KG_TOP/tests/fixtures/minilm/texts.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
json.dump(d["texts"], open("mt.json", "w"), ensure_ascii=False)
open("mref.tok", "w").write("".join(" ".join(map(str, x)) + "\n"
                                    for x in d["token_ids"]))
PY
$tool tokens mv mt.json >mv.tok
check "MiniLM as vocab.txt + its tokenizer_config.json: the tokenizers library's IDs" \
    cmp -s mref.tok mv.tok
$tool encode "$model" mt.json 256 4 2>/dev/null >mj.vec
$tool encode mv mt.json 256 4 2>/dev/null >mvv.vec
check "MiniLM: the same vectors as its tokenizer.json form" cmp -s mj.vec mvv.vec
