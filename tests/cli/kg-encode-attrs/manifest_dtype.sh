#!/usr/bin/env bash
# A feature directory whose manifest records a dtype or a shape that the
# array's own .npy header does not have is refused by its readers (here
# kg-train's GNN, through kg_features_load), as the encoder model's is by
# kg-encode-attrs transform: one line, exit 1, nothing written.
source "$KG_TOP/tests/cli/lib.sh"
plan 6
py=$(numpy_python)
[ -n "$py" ] || py=python3
printf 'a\tr\tb\nb\tr\tc\nc\tr\td\nd\tr\ta\na\tr\tc\n' >triples.tsv
kg-ingest -q -o ds --train triples.tsv || notok "ingest"
printf 'a\tbio\thello world\nc\tbio\tbye now\n' >t.tsv
printf '{"tables": [{"path": "t.tsv", "form": "long"}],
  "attributes": {"bio": {"kind": "text", "dim": 2}}}\n' >s.json
kg-encode-attrs fit -q -d ds -s s.json -o model &&
    kg-encode-attrs transform -q -d ds -m model -o feat ||
    notok "encode the features"
gnn="--model_name RGCN --layers 1 --gnn_hidden 8 --hidden_dim 8 --epochs 1
  --batch_size 4 --neg_sample_size 2"
# shellcheck disable=SC2086
check "the GNN reads the features as written" \
    kg-train -q $gnn --features feat ds good
# lie KEY JSON: a copy of feat whose manifest records bio.npy's KEY as JSON.
lie() {
	rm -rf lie && cp -r feat lie && "$py" - "$1" "$2" <<'PY'
import json, sys
m = json.load(open("lie/manifest.json"))
m["files"]["bio.npy"][sys.argv[1]] = json.loads(sys.argv[2])
json.dump(m, open("lie/manifest.json", "w"))
PY
}
lie dtype '"<f8"'
# shellcheck disable=SC2086
golden "a manifest that records another dtype" 1 \
    "kg-train: lie/bio.npy: dtype <f4, the manifest says <f8" \
    kg-train -q $gnn --features lie ds out
check "nothing written" test ! -e out
lie shape '[4, 3]'
# shellcheck disable=SC2086
golden "a manifest that records another shape" 1 \
    "kg-train: lie/bio.npy: shape does not match the manifest entry for 'bio.npy'" \
    kg-train -q $gnn --features lie ds out
check "nothing written" test ! -e out
lie dtype '"<f8"'
golden "merge refuses a shard whose manifest records another dtype" 1 \
    "kg-encode-attrs: lie/bio.npy: dtype <f4, the manifest says <f8" \
    kg-encode-attrs merge -q -m model -o merged lie
