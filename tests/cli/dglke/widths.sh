#!/usr/bin/env bash
# -de and -dr give the row widths DGL-KE's general_models.py gives
# (entity_dim = 2 hidden_dim with -de, relation_dim = 2 hidden_dim with
# -dr): a copied DGL-KE command line trains the model DGL-KE would, and
# the combinations that fail in DGL-KE are usage errors here.
source "$KG_TOP/tests/cli/lib.sh"
plan 20

py=$(numpy_python)
[ -n "$py" ] || skip_all "widths: no python3 with numpy"
U=$(fixture_data umls)
kg-ingest -q -o ds --train "$U/train.txt.gz" || { notok "ingest"; exit 0; }
t="-q --epochs 1 --max_step 2 --batch_size 64 --neg_sample_size 8 --no_checkpoint"

# shape MODEL_DIR: "entity-width relation-width"
shape() {
	"$py" -c 'import sys, numpy as np
print(np.load(sys.argv[1] + "/entities.npy").shape[1], np.load(sys.argv[1] + "/relations.npy").shape[1])' "$1"
}

# DGL-KE's FB15k ComplEx line: --hidden_dim 400 without -de, rows of 400
# floats (200 complex numbers), here scaled to 20.
kg-train $t --model_name ComplEx --hidden_dim 20 ds c0
check "ComplEx, no -de: 20 and 20 floats" test "$(shape c0)" = "20 20"
# Its biokg line: -de -dr, rows of 2 x hidden_dim.
kg-train $t --model_name ComplEx --hidden_dim 20 -de -dr ds c1
check "ComplEx -de -dr: 40 and 40 floats" test "$(shape c1)" = "40 40"
kg-train $t --model_name ComplEx --hidden-dim 20 --double_ent --double-rel ds c2
check "long spellings alike" test "$(shape c2)" = "40 40"
# RotatE's lines all have -de: entities 2 x hidden_dim, hidden_dim phases.
kg-train $t --model_name RotatE --hidden_dim 20 -de ds r1
check "RotatE -de: 40 floats, 20 phases" test "$(shape r1)" = "40 20"
# TransR: entity_dim and relation_dim double separately.
kg-train $t --model_name TransR --hidden_dim 6 -de ds t1
check "TransR -de: entity 12, relation 6 + 6 x 12" test "$(shape t1)" = "12 78"
kg-train $t --model_name TransR --hidden_dim 6 -dr ds t2
check "TransR -dr: entity 6, relation 12 + 12 x 6" test "$(shape t2)" = "6 84"
echo '{"model_name": "ComplEx", "hidden_dim": 20, "double_ent": true, "double_rel": true}' >c.json
kg-train $t --config c.json ds c3
check "-de -dr from a config" test "$(shape c3)" = "40 40"

expect_fail "ComplEx -de alone" 2 "ComplEx takes -de and -dr together" \
    kg-train $t --model_name ComplEx --hidden_dim 20 -de ds x
expect_fail "ComplEx -dr alone" 2 "ComplEx takes -de and -dr together" \
    kg-train $t --model_name ComplEx --hidden_dim 20 -dr ds x
expect_fail "RotatE -de -dr" 2 "RotatE takes -de alone" \
    kg-train $t --model_name RotatE --hidden_dim 20 -de -dr ds x
expect_fail "DistMult -de" 2 "^kg-train: -de has no meaning for DistMult" \
    kg-train $t --model_name DistMult -de ds x
expect_fail "TransE -de -dr" 2 "-de with -dr has no meaning for TransE_l2" \
    kg-train $t -de -dr ds x
expect_fail "--pairwise" 2 "--pairwise \(DGL-KE's pairwise loss\) is not supported" \
    kg-train $t -pw ds x
check "no model left by usage errors" test ! -e x

# --help says which it is, and lists the GNN options without --model_name.
kg-train --help >help.txt
check "--help: hidden_dim as DGL-KE" grep -q "hidden_dim N     floats per entity row, as DGL-KE" help.txt
check "--help: -de as DGL-KE" grep -q -- "-de, --double_ent      as DGL-KE" help.txt
check "--help lists GNN options" grep -q -- "--gnn_hidden N     attribute and hidden layer width (default 64)" help.txt
kg-train --model_name RGCN --help >help2.txt
check "--help the same with --model_name RGCN" cmp -s help.txt help2.txt
# --gpu takes several values as in DGL-KE: the operands stay operands, and
# the first GPU is refused as --device cuda:0 is (tests/cli/device).
expect_fail "--gpu 0 1 2 3 parsed" 2 "^kg-train: cuda:0: " \
    kg-train $t --gpu 0 1 2 3 --model_name DistMult --hidden_dim 8 ds g1
check "--gpu -1 (DGL-KE's CPU) accepted" sh -c \
    "kg-train $t --gpu -1 --model_name DistMult --hidden_dim 8 ds g1 2>/dev/null && test -f g1/entities.npy"
