#!/usr/bin/env bash
# "demo" prints the metrics table once, whether it had to evaluate or
# not; "plot" writes PNG and SVG pictures next to the metrics, and a
# second "plot" has nothing to do.
. "$KG_TOP/tests/cli/lib.sh"
plan 17
mk=$KG_TOP/pipelines/enterprise.mk
vars=(NODES=200 EPOCHS=2 DIM=8 SHARDS=2 PARTS=2 HOPS=1 THREADS=1)

# tables LOG: how many metrics tables the log holds.
tables() { grep -c '^ *both ' "$1"; }

if make -s -j2 -f "$mk" "${vars[@]}" OUT="$PWD/gnn" demo >log 2>&1; then
	ok "demo runs"
else
	notok "demo runs: $(tail -5 log)"
fi
check "demo prints the table once" test "$(tables log)" -eq 1
check "demo names its settings" grep -q '^enterprise demo: 200 nodes' log
before=$(stat -c %.9Y gnn/metrics.json)
make -s -f "$mk" "${vars[@]}" OUT="$PWD/gnn" demo >log 2>&1
check "demo again: the table once" test "$(tables log)" -eq 1
check "demo again: no new evaluation" \
    test "$(stat -c %.9Y gnn/metrics.json)" = "$before"
make -s -f "$mk" "${vars[@]}" OUT="$PWD/gnn" EPOCHS=3 all >log 2>&1
check "all prints the table when it evaluates" test "$(tables log)" -eq 1

if ! command -v gnuplot >/dev/null 2>&1; then
	skip_section 11 "plot: gnuplot not installed (apt-get install gnuplot-nox)"
	exit 0
fi
# png FILE: a PNG signature.
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; }
# A GNN model: metrics pictures and training curves.
make -s -f "$mk" "${vars[@]}" OUT="$PWD/gnn" EPOCHS=3 plot >log 2>&1
check "GNN plot: metrics PNG" png gnn/metrics.png
check "GNN plot: metrics SVG" grep -q '<svg' gnn/metrics.svg
# The GNN trainer writes its training log: curves, no note.
check "GNN plot: training curves" png gnn/training.png
check "GNN plot: no note of a missing log" sh -c '! grep -q "no train_log.jsonl" log' 
# A shallow model with validation: every picture.
shallow=(MODEL=ComplEx RANKS=1 "TRAIN_FLAGS=--valid_every 1 --lr 0.1" OUT="$PWD/sh")
if make -s -f "$mk" "${vars[@]}" "${shallow[@]}" plot >log 2>&1; then
	ok "shallow plot runs"
else
	notok "shallow plot runs: $(tail -5 log)"
fi
for f in training metrics; do
	check "shallow plot: $f PNG" png sh/$f.png
	check "shallow plot: $f SVG" grep -q '<svg' sh/$f.svg
done
check "shallow plot: validation curves drawn" grep -q 'validation MRR' sh/training.svg
if make -q -f "$mk" "${vars[@]}" "${shallow[@]}" plot; then
	ok "a second plot is up to date"
else
	notok "a second plot would redo something"
fi
