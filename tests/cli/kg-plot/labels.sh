#!/usr/bin/env bash
# One name for a model everywhere (issue 32, item 11): a GNN model is
# "R-GCN + DistMult" in kg-eval's table, in its JSON report ("model",
# with "encoder" and "decoder" apart), in kg-plot's title of the training
# curves and of the metrics; a shallow model is its decoder's name.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-plot/lib.inc"
echo "1..9"

make_model g --model_name RGCN --layers 1 --gnn_hidden 8 --epochs 2 \
    --valid_every 1 --no_checkpoint || { notok "train a GNN"; exit 0; }
make_model s --model_name ComplEx --epochs 2 --valid_every 1 ||
	{ notok "train a shallow model"; exit 0; }
kg-eval -o g.json umls g 2>g.table || { notok "kg-eval"; exit 0; }
kg-eval -q -o s.json umls s || { notok "kg-eval"; exit 0; }

check "kg-eval's table: R-GCN + DistMult" \
    grep -q '^kg-eval: R-GCN + DistMult, test split' g.table
check "report: model R-GCN + DistMult, encoder R-GCN, decoder DistMult" \
    jq -e '.model == "R-GCN + DistMult" and .encoder == "R-GCN" and
    .decoder == "DistMult"' g.json
check "report of a shallow model: ComplEx, no encoder" \
    jq -e '.model == "ComplEx" and .decoder == "ComplEx" and
    (has("encoder") | not)' s.json
# title SCRIPT: the page title of a kg-plot script.
title() { sed -n "s/^set multiplot .* title '\(.*\)'$/\1/p" "$1"; }
kg-plot --script g >g.gp && kg-plot --script g.json >gr.gp &&
    kg-plot --script s >s.gp || notok "kg-plot --script"
check "training curves: R-GCN + DistMult" \
    test "$(title g.gp)" = "R-GCN + DistMult, d=8 (g)"
check "metrics: R-GCN + DistMult" \
    test "$(title gr.gp)" = "R-GCN + DistMult on umls, test split, filtered (g.json)"
check "shallow training curves: ComplEx" test "$(title s.gp)" = "ComplEx, d=8 (s)"
# An older report: the decoder as "model", the encoder apart.
jq '.model = "DistMult" | .encoder = "rgcn" | del(.decoder)' g.json >old.json
kg-plot --script old.json >old.gp
check "an older report: the same label" \
    test "$(title old.gp)" = "R-GCN + DistMult on umls, test split, filtered (old.json)"
# The curves have no key inside a panel, where it sat on the validation
# curve.
check "training curves: no key on the panels" \
    sh -c 'grep -qx "unset key" g.gp && ! grep -q "^set key" g.gp'
check "the legend-less curves still name each panel" \
    test "$(grep -c "^set ylabel '\(training loss\|validation MRR\)'" g.gp)" -eq 4
