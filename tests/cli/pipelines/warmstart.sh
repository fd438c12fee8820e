#!/usr/bin/env bash
# INIT_FROM=MODEL_DIR: a pipeline run twice, the second from the first's
# model (kg-train --init_from), names it in its manifest; INIT_FROM is
# part of the training stage's settings (set, dropped, or its model
# retrained: the model and metrics are redone, the dataset not); a warm
# start runs on 2 ranks over the partitions too; the combinations that
# cannot warm start are refused before any stage runs.
. "$KG_TOP/tests/cli/lib.sh"
plan 15
mk=$KG_TOP/pipelines/enterprise.mk
vars=(MODEL=DistMult RANKS=1 NODES=200 EPOCHS=2 DIM=8 THREADS=1)
mtime() { stat -c %.9Y "$1"; }
# init_from DIR: the model DIR's config.init_from.path, and its matched
# entity count > 0.
init_from() {
	python3 -c 'import json, sys
c = json.load(open(sys.argv[1] + "/manifest.json"))["config"]
i = c.get("init_from")
print(i["path"] if i and i["entities"]["matched"] > 0 else None)' "$1"
}

if make -s -f "$mk" "${vars[@]}" OUT="$PWD/day1" all >log 2>&1; then
	ok "day 1"
else
	notok "day 1: $(tail -5 log)"; exit 0
fi
check "day 1 starts afresh" test "$(init_from day1/model)" = None
if make -s -f "$mk" "${vars[@]}" OUT="$PWD/day2" INIT_FROM=day1/model all \
    >log 2>&1; then
	ok "day 2 from day 1's model"
else
	notok "day 2: $(tail -5 log)"; exit 0
fi
check "day 2's manifest names day 1's model" \
    test "$(init_from day2/model)" = "$PWD/day1/model"
check "day 2 was evaluated" test -s day2/metrics.json
check "the stamp holds --init_from" grep -q -- "--init_from $PWD/day1/model" \
    day2/settings/model.cmd
if make -q -f "$mk" "${vars[@]}" OUT="$PWD/day2" INIT_FROM=day1/model all; then
	ok "a second make is up to date"
else
	notok "a second make would redo something"
fi

# Dropping INIT_FROM retrains day 2 afresh, the dataset kept.
ds=$(mtime day2/dataset/manifest.json)
make -s -f "$mk" "${vars[@]}" OUT="$PWD/day2" all >log 2>&1
check "without INIT_FROM day 2 retrains afresh" \
    test "$(init_from day2/model)" = None
check "... keeping the dataset" test "$(mtime day2/dataset/manifest.json)" = "$ds"
make -s -f "$mk" "${vars[@]}" OUT="$PWD/day2" INIT_FROM=day1/model all \
    >log 2>&1
# Day 1's model retrained: day 2 is out of date.
make -s -f "$mk" "${vars[@]}" EPOCHS=3 OUT="$PWD/day1" all >log 2>&1
if make -q -f "$mk" "${vars[@]}" OUT="$PWD/day2" INIT_FROM=day1/model all; then
	notok "a retrained INIT_FROM model leaves day 2 up to date"
else
	ok "a retrained INIT_FROM model makes day 2 out of date"
fi

# The benchmark pipelines take it too.
umls=$(fixture_data umls)
cat >tiny.json <<'JSON'
{"model_name": "DistMult", "hidden_dim": 8, "lr": 0.1, "batch_size": 512,
 "neg_sample_size": 16, "epochs": 1}
JSON
bm=$KG_TOP/pipelines/fb15k237.mk
bvars=(DATA="$umls" CONFIG="$PWD/tiny.json" THREADS=1)
make -s -f "$bm" "${bvars[@]}" OUT="$PWD/b1" all >log 2>&1 &&
make -s -f "$bm" "${bvars[@]}" OUT="$PWD/b2" INIT_FROM=b1/model-tiny all \
    >>log 2>&1
check "fb15k237.mk: the second run names the first's model" \
    test "$(init_from b2/model-tiny)" = "$PWD/b1/model-tiny"

# Refused before any stage runs.
refused() {
	local name=$1 pat=$2 err
	shift 2
	err=$(make -n -f "$mk" "$@" OUT="$PWD/no" all 2>&1 >/dev/null)
	if [ $? -ne 0 ] && grep -q -- "$pat" <<<"$err" && [ ! -e no ]; then
		ok "$name"
	else
		notok "$name: '$err'"
	fi
}
refused "a GNN has no warm start" "MODEL=RGCN has no warm start" \
    MODEL=RGCN INIT_FROM=day1/model
if command -v mpirun >/dev/null; then
	make -s -f "$mk" "${vars[@]/RANKS=1/RANKS=2}" OUT="$PWD/day2r" \
	    INIT_FROM=day1/model all >log 2>&1
	check "a warm start on 2 ranks names day 1's model" \
	    test "$(init_from day2r/model)" = "$PWD/day1/model"
else
	skip "a warm start on 2 ranks: mpirun is not installed"
fi
refused "a warm start into its own model" "is the model this run writes" \
    MODEL=DistMult RANKS=1 INIT_FROM=no/model
err=$(make -n -f "$bm" "${bvars[@]}" OUT="$PWD/b1" INIT_FROM=b1/model-tiny all \
    2>&1 >/dev/null)
check "fb15k237.mk: a warm start into its own model" \
    grep -q "is the model this run writes" <<<"$err"
