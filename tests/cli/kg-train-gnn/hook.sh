# kg-train routes --model_name RGCN|RelGNN (on the command line or in a
# --config file) to lib/gnn_train: the same bytes as build/aux/gnn_train
# with the same options, the example configs run, --help shows the GNN
# options, and shallow models are untouched.
source "$KG_TOP/tests/cli/lib.sh"
plan 9

d=$(fixture_data nations)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "gnn hook: ingest nations"; exit 1; }
args="-q --model_name RGCN --layers 2 --gnn_hidden 16 --hidden_dim 16 --epochs 3 --batch_size 256"
kg-train $args ds via_train 2>err || notok "gnn hook: kg-train RGCN failed: $(cat err)"
"$KG_BUILD/aux/gnn_train" $args ds via_aux 2>/dev/null
if cmp -s via_train/entities.npy via_aux/entities.npy &&
    cmp -s via_train/gnn_weights.npy via_aux/gnn_weights.npy; then
	ok "gnn hook: kg-train --model_name RGCN trains through lib/gnn_train"
else
	notok "gnn hook: kg-train and gnn_train differ"
fi
check "gnn hook: kg-eval ranks the model" sh -c 'kg-eval -q ds via_train >/dev/null'
for c in "$KG_TOP"/examples/configs/rgcn_*.json "$KG_TOP"/examples/configs/relgnn_*.json; do
	[ -e "$c" ] || continue
	check "gnn hook: example config $(basename "$c")" kg-train -q \
	    --config "$c" --epochs 1 --max_step 3 --batch_size 128 ds \
	    "m_$(basename "$c" .json)"
done
if kg-train --model_name RelGNN --help | grep -q -- "--fanout"; then
	ok "gnn hook: --model_name RelGNN --help shows the GNN options"
else
	notok "gnn hook: GNN --help"
fi
expect_fail "gnn hook: GNN options are checked" 2 "layers" \
    kg-train -q --model_name RGCN --layers 7 ds bad
check "gnn hook: shallow models unchanged" kg-train -q --model_name DistMult \
    --hidden_dim 8 --epochs 1 --num_thread 1 ds shallow
