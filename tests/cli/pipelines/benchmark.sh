#!/usr/bin/env bash
# The benchmark pipelines on the bundled UMLS splits with a small config:
# EPOCHS and TRAIN_FLAGS reach kg-train, a changed one (or an edited
# config) retrains without ingesting again, a second make has nothing to
# do, and "plot" draws next to the metrics.
. "$KG_TOP/tests/cli/lib.sh"
plan 25
umls=$(fixture_data umls)
cat >tiny.json <<'JSON'
{"model_name": "DistMult", "hidden_dim": 8, "lr": 0.1, "batch_size": 512,
 "neg_sample_size": 16, "epochs": 2}
JSON
vars=(DATA="$umls" CONFIG="$PWD/tiny.json" THREADS=1 OUT="$PWD/out")
mk=$KG_TOP/pipelines/fb15k237.mk
mtime() { stat -c %.9Y "$1"; }
epochs() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["config"]["epochs"])' out/model-tiny/manifest.json
}

if make -s -f "$mk" "${vars[@]}" all >log 2>&1; then ok "first run"
else notok "first run: $(tail -5 log)"; exit 0; fi
check "the config's epochs" test "$(epochs)" = 2
check "metrics per relation" grep -q per_relation out/model-tiny.metrics.json
if make -q -f "$mk" "${vars[@]}" all; then ok "second make: up to date"
else notok "second make would redo something"; fi

# rerun NAME VAR=VALUE...: the model and metrics are redone, the dataset
# not, and a second make is up to date.
rerun() {
	local name=$1 ds model
	shift
	ds=$(mtime out/dataset/manifest.json)
	model=$(mtime out/model-tiny/manifest.json)
	if ! make -s -f "$mk" "${vars[@]}" "$@" all >log 2>&1; then
		notok "$name: $(tail -3 log)"
		return
	fi
	check "$name retrains" test "$(mtime out/model-tiny/manifest.json)" != "$model"
	check "$name keeps the dataset" test "$(mtime out/dataset/manifest.json)" = "$ds"
	check "$name evaluates again" test out/model-tiny.metrics.json -nt out/model-tiny/manifest.json
	if make -q -f "$mk" "${vars[@]}" "$@" all; then ok "$name: then up to date"
	else notok "$name: a second make would redo something"; fi
}
rerun "EPOCHS=3" EPOCHS=3
check "EPOCHS overrides the config" test "$(epochs)" = 3
rerun "TRAIN_FLAGS" EPOCHS=3 TRAIN_FLAGS="--valid_every 1"
check "TRAIN_FLAGS reach kg-train" grep -q valid_mrr out/model-tiny/train_log.jsonl
sleep 0.01
sed -i 's/"lr": 0.1/"lr": 0.05/' tiny.json
rerun "an edited config" EPOCHS=3 TRAIN_FLAGS="--valid_every 1"

# wn18rr.mk is the same pipeline with another default config.
check "wn18rr.mk passes EPOCHS" eval "make -n -f '$KG_TOP/pipelines/wn18rr.mk' \
    DATA='$umls' EPOCHS=4 OUT='$PWD/wn' all | grep -q -- '--epochs 4 '"

if ! command -v gnuplot >/dev/null 2>&1; then
	skip_section 6 "plot: gnuplot not installed (apt-get install gnuplot-nox)"
	exit 0
fi
vars+=(EPOCHS=3 TRAIN_FLAGS="--valid_every 1")
if make -s -f "$mk" "${vars[@]}" plot >log 2>&1; then ok "plot runs"
else notok "plot runs: $(tail -3 log)"; fi
for f in training metrics; do
	for x in png svg; do
		check "plot writes model-tiny.$f.$x" test -s out/model-tiny.$f.$x
	done
done
if make -q -f "$mk" "${vars[@]}" plot; then ok "second plot: up to date"
else notok "second plot would redo something"; fi
