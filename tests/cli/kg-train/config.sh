# Options: DGL-KE spellings (dashes or underscores, -adv, -rc/-rn), JSON
# config files with the same keys, and the command line winning over them.
. "$KG_TOP/tests/cli/lib.sh"
# 15 fixed checks, one per example config, two per tta config.
n_ex=$(ls "$KG_TOP"/examples/configs/*.json | wc -l)
n_tta=$(ls "$KG_TOP"/examples/configs/tta/*.json | wc -l)
plan $((15 + n_ex + 2 * n_tta))
d=$(fixture_data nations)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest nations"; exit 0; }
cat >c.json <<'JSON'
{ "model_name": "RotatE", "hidden_dim": 16, "gamma": 6.0, "lr": 0.05,
  "batch_size": 128, "neg_sample_size": 16, "neg_adversarial_sampling": true,
  "adversarial_temperature": 0.5, "regularization_coef": 1e-7,
  "regularization_norm": 3, "epochs": 2, "num_thread": 1,
  "neg_sampler": "mixed", "max-step": 100 }
JSON
check "config file" kg-train -q --config c.json ds m1
check "config keys reach the manifest" sh -c \
    'jq -e ".config.model == \"RotatE\" and .config.dim == 16 and .config.gamma == 6 and .config.adversarial_temperature == 0.5 and .config.regularization_norm == 3 and .config.neg_degree_fraction == 0.5 and .config.epochs == 2 and .config.batch_size == 128" m1/manifest.json >/dev/null'
check "command line overrides the config" kg-train -q --config c.json \
    --hidden-dim 8 --batch-size 64 ds m2
check "overridden values recorded" sh -c \
    'jq -e ".config.dim == 8 and .config.batch_size == 64 and .config.model == \"RotatE\"" m2/manifest.json >/dev/null'
# Boolean keys from a config file, recorded in the manifest (false when
# not given).
for k in neg_in_batch subsampling_weight; do
	check "$k from a config file" sh -c "echo '{\"$k\": true}' >$k.json &&
	    kg-train -q --config $k.json --hidden_dim 8 --epochs 1 --num_thread 1 ds m_$k"
	check "$k recorded (and its absence)" sh -c \
	    "jq -e '.config.$k == true' m_$k/manifest.json >/dev/null &&
	    jq -e '.config.$k == false' m1/manifest.json >/dev/null"
done
check "DGL-KE short spellings" kg-train -q --model_name TransE_l2 \
    --hidden_dim 8 -adv -a 2 -rc 1e-6 -rn 2 -g 4 --epochs 1 ds m3
check "short spellings recorded" sh -c \
    'jq -e ".config.adversarial_temperature == 2 and .config.regularization_coef == 1e-6 and .config.regularization_norm == 2 and .config.gamma == 4" m3/manifest.json >/dev/null'
for c in "$KG_TOP"/examples/configs/*.json "$KG_TOP"/examples/configs/tta/*.json; do
	# GNN layers shrunk too (block weights need blocks that divide them).
	gnn=
	jq -e '.model_name == "RGCN" or .model_name == "RelGNN"' "$c" \
	    >/dev/null && gnn="--gnn_hidden 8 --num_bases 2"
	# shellcheck disable=SC2086
	check "example config ${c#"$KG_TOP"/examples/configs/} is accepted" kg-train -q \
	    --config "$c" --hidden_dim 8 $gnn --epochs 1 --max_step 2 \
	    --batch_size 64 --neg_sample_size 8 --neg_chunk_size 8 ds \
	    "m_$(basename "$c" .json)"
done
for c in "$KG_TOP"/examples/configs/tta/*.json; do
	check "tta config $(basename "$c") names its published bar" jq -e \
	    '(._bar_mrr | type) == "number" and ._bar_mrr > 0 and ._bar_mrr < 1' "$c"
done
out=$(kg-train -q --gpu -1 --mix_cpu_gpu --log_interval 100 --hidden_dim 8 \
    --epochs 1 ds m4 2>&1)
if [ $? -eq 0 ] && grep -q "ignoring DGL-KE option --mix_cpu_gpu" <<<"$out"; then
	ok "DGL-KE options without meaning are accepted with a warning"
else
	notok "DGL-KE options without meaning are accepted with a warning: $out"
fi
echo '{"model_name": "DistMult", "hidden_dim": 8, "epochs": 1, "gpu": [0], "async_update": true}' >dgl.json
expect_fail "ignored DGL-KE key still type-checked" 2 "wrong type" \
    kg-train -q --config dgl.json ds m5
echo '{"model_name": "DistMult", "hidden_dim": 8, "epochs": 1, "gpu": -1, "async_update": true}' >dgl2.json
check "DGL-KE config with GPU keys" kg-train -q --config dgl2.json ds m6
# A path from a config file outlives the file's JSON document (it was
# read after the document was freed: a garbled checkpoint directory).
cat >paths.json <<'JSON'
{ "model_name": "DistMult", "hidden_dim": 8, "epochs": 1, "num_thread": 1,
  "checkpoint_dir": "ckpt_named_in_a_config_file_of_some_length",
  "keep_checkpoint": true }
JSON
check "a shallow config's checkpoint_dir is the one named" sh -c \
    'kg-train -q --config paths.json ds m_paths &&
     test -d ckpt_named_in_a_config_file_of_some_length'
cat >gpaths.json <<'JSON'
{ "model_name": "RGCN", "learned_only": true, "hidden_dim": 8,
  "gnn_hidden": 8, "epochs": 1, "num_thread": 1,
  "checkpoint_dir": "gnn_ckpt_named_in_a_config_file_of_some_length",
  "keep_checkpoint": true }
JSON
check "a GNN config's checkpoint_dir is the one named" sh -c \
    'kg-train -q --config gpaths.json ds g_paths &&
     test -d gnn_ckpt_named_in_a_config_file_of_some_length'
