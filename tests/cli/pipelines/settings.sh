#!/usr/bin/env bash
# The enterprise pipeline notices changed variables: each change reruns
# exactly the stages whose command it changes and the stages after them
# (told by the times of the stage outputs), the new value reaches the
# tool, and a second make with the same variables has nothing to do.
. "$KG_TOP/tests/cli/lib.sh"
plan 38
mk=$KG_TOP/pipelines/enterprise.mk
stages="data dataset attr-model attr-shard-0 attr-shard-1 features partitions
expanded model metrics"
# Every variable is on the command line, so a case changes only its own.
vars=(NODES=200 EPOCHS=2 DIM=8 SHARDS=2 PARTS=2 HOPS=1 THREADS=1
    OUT="$PWD/out")

# times: "stage=mtime" of every stage output, one a line.
times() {
	local s f
	for s in $stages; do
		case $s in
		data) f=out/data/train.tsv ;;
		metrics) f=out/metrics.json ;;
		*) f=out/$s/manifest.json ;;
		esac
		echo "$s=$(stat -c %.9Y "$f" 2>/dev/null || echo none)"
	done
}

# unset_var VAR: drop VAR's setting from vars (back to its default).
unset_var() {
	local keep=() x
	for x in "${vars[@]}"; do
		[ "${x%%=*}" = "$1" ] || keep+=("$x")
	done
	vars=("${keep[@]}")
}

# set_var VAR=VALUE: replace VAR's setting in vars (or add it).
set_var() {
	unset_var "${1%%=*}"
	vars+=("$1")
}

# change NAME STAGES VAR=VALUE...: set the variables, rerun, and check
# that exactly STAGES (space-separated, in pipeline order) were redone,
# and that a second make has nothing to do.
change() {
	local name=$1 want=$2 v got
	shift 2
	for v in "$@"; do
		set_var "$v"
	done
	times >before
	if ! make -s -j2 -f "$mk" "${vars[@]}" all >log 2>&1; then
		notok "$name: make failed: $(tail -3 log)"
		return
	fi
	times >after
	got=$(diff before after | sed -n 's/^> \([^=]*\)=.*/\1/p' | xargs)
	if [ "$got" = "$want" ]; then ok "$name reruns: $want"; else
		notok "$name reruns '$got', wanted '$want'"; fi
	if make -q -f "$mk" "${vars[@]}" all; then
		ok "$name: a second make is up to date"
	else
		notok "$name: a second make would redo something"
	fi
}

# jq-free look-up of the model's training settings.
config() {
	python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["config"]
print(c.get(sys.argv[2]))' out/model/manifest.json "$1"
}

if ! make -s -j2 -f "$mk" "${vars[@]}" all >log 2>&1; then
	notok "first run: $(tail -5 log)"
	exit 0
fi
ok "first run"
if make -q -f "$mk" "${vars[@]}" all; then ok "second make: up to date"
else notok "second make: make -q says something is out of date"; fi
make -f "$mk" "${vars[@]}" all >log 2>&1
check "second make runs no stage" eval '! grep -q "kg-\(ingest\|encode\|partition\|expand\|train\|eval\)" log'
check "settings stamps hold the commands" grep -q -- '--epochs 2 ' out/settings/model.cmd

sleep 0.01
change "EPOCHS" "model metrics" EPOCHS=3
check "EPOCHS reaches kg-train" test "$(config epochs)" = 3
if make -q -f "$mk" "${vars[@]/EPOCHS=3/EPOCHS=2}" all; then
	notok "the old EPOCHS is seen as stale"
else
	ok "the old EPOCHS is seen as stale"
fi
change "DIM" "model metrics" DIM=12
check "DIM reaches kg-train" test "$(config dim)" = 12
change "TRAIN_FLAGS" "model metrics" TRAIN_FLAGS="--lr 0.02"
check "TRAIN_FLAGS reach kg-train" python3 -c 'import json, sys
sys.exit(abs(json.load(open("out/model/manifest.json"))["config"]["lr"] - 0.02) > 1e-9)'
sed 's/"lr": 0.01/"lr": 0.03/' "$KG_TOP/examples/configs/rgcn_ray.json" >my.json
change "CONFIG" "model metrics" CONFIG="$PWD/my.json" TRAIN_FLAGS=
check "CONFIG reaches kg-train" python3 -c 'import json, sys
sys.exit(abs(json.load(open("out/model/manifest.json"))["config"]["lr"] - 0.03) > 1e-9)'
sleep 0.01
sed -i 's/"dropout": 0.2/"dropout": 0.1/' my.json
change "an edited CONFIG file" "model metrics"
unset_var CONFIG
change "MODEL" "model metrics" MODEL=RelGNN
check "MODEL=RelGNN trains the attention encoder" test "$(config encoder)" = relgnn
check "MODEL=RelGNN reads its own config" grep -q relgnn_ray.json out/settings/model.cmd
change "EVAL_FLAGS" "metrics" EVAL_FLAGS=--auc
check "EVAL_FLAGS reach kg-eval" eval '! grep -q per_relation out/metrics.json'
change "HOPS" "expanded model metrics" HOPS=2
change "PART_METHOD" "partitions expanded model metrics" PART_METHOD=random
change "SHARDS" "attr-shard-0 attr-shard-1 features expanded model metrics" \
    SHARDS=3
check "SHARDS=3 writes a third shard" test -f out/attr-shard-2/manifest.json
change "NODES" "$(echo $stages)" NODES=250

# The shallow path builds only what it reads.
mkdir sh
if make -s -f "$mk" NODES=200 EPOCHS=2 DIM=8 THREADS=1 MODEL=ComplEx \
    RANKS=1 OUT="$PWD/sh/one" all >log 2>&1; then
	ok "shallow model on one rank"
else
	notok "shallow model on one rank: $(tail -3 log)"
fi
check "one shallow rank: metrics" test -f sh/one/metrics.json
check "one shallow rank: no features, partitions or expansion" \
    test "$(cd sh/one && ls -d attr-* features partitions expanded 2>/dev/null)" = ""
