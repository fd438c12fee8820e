# Bad input to kg-train: every case exits with the right status and a
# clear message, and leaves no model dir behind.
. "$KG_TOP/tests/cli/lib.sh"
plan 30
d=$(fixture_data nations)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest nations"; exit 0; }
t="kg-train -q --hidden_dim 8 --epochs 1"

expect_fail "unknown model" 2 "unknown model 'TransF'" \
    $t --model_name TransF ds out
expect_fail "unknown loss" 2 "unknown loss 'hinge2'" $t --loss hinge2 ds out
expect_fail "dim not a number" 2 "hidden_dim" $t --hidden_dim 12x ds out
expect_fail "zero dim" 2 "hidden_dim" $t --hidden_dim 0 ds out
expect_fail "odd dim for ComplEx" 2 "even --hidden_dim" \
    $t --model_name ComplEx --hidden_dim 7 ds out
expect_fail "regularization norm 4" 2 "regularization_norm" \
    $t --regularization_norm 4 ds out
expect_fail "negative learning rate" 2 "--lr" $t --lr -1 ds out
expect_fail "unknown sampler" 2 "unknown negative sampler" \
    $t --neg_sampler zipf ds out
expect_fail "unknown option" 2 "^kg-train: unrecognized option '--frobnicate'$" $t --frobnicate ds out
expect_fail "missing operands" 2 "^kg-train: expected DATASET_DIR MODEL_DIR, got 1 operand$" $t ds
expect_fail "softmax with self-adversarial" 2 "softmax" \
    $t --loss softmax -adv ds out
expect_fail "missing dataset" 1 "nope" $t nope out
expect_fail "types not in dataset" 1 "no entity types" $t --neg_types ds out
check "no output after failures" test ! -e out

# A dataset dir whose train split is empty.
cp -r ds empty
python3 - empty/train.npy <<'PY'
import sys
h = "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 3), }"
pad = 64 - (10 + len(h) + 1) % 64
h = h + " " * pad + "\n"
with open(sys.argv[1], "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode())
PY
jq --argjson b "$(stat -c %s empty/train.npy)" \
    '.files["train.npy"].shape = [0, 3] | .files["train.npy"].bytes = $b' \
    empty/manifest.json >m.json && mv m.json empty/manifest.json
expect_fail "dataset without train triples" 1 "no train triples" \
    $t empty out
check "no output for empty train" test ! -e out

# Training that diverges: NaN/inf is caught, no model dir appears.
expect_fail "diverging training" 1 "no longer finite|diverged" \
    kg-train -q --model_name DistMult --hidden_dim 8 --epochs 3 \
    --lr 1e30 --init_scale 10 --rel_optimizer adam --rel_lr 1e30 ds out
check "no model dir after divergence" test ! -e out

# A checkpoint of another shape is refused on --resume.
check "run that keeps its checkpoint" $t --keep_checkpoint ds m1
expect_fail "resume with another dim" 1 "has dim 8, but --hidden_dim gives 16" \
    kg-train -q --hidden_dim 16 --epochs 2 --resume \
    --checkpoint_dir m1.ckpt ds m2
check "no model dir after refused resume" test ! -e m2

# Config files: unknown keys, wrong types, unreadable files.
echo '{"model_name": "DistMult", "hidden_dimension": 8}' >bad.json
expect_fail "config with unknown key" 2 "unknown key 'hidden_dimension'" \
    kg-train --config bad.json ds out
echo '{"hidden_dim": [8]}' >bad2.json
expect_fail "config value of wrong type" 2 "wrong type" \
    kg-train --config bad2.json ds out
echo '{"hidden_dim": ' >bad3.json
expect_fail "config not JSON" 2 "bad3.json" kg-train --config bad3.json ds out

# A diverging run with --force leaves the old model dir as it was.
check "a model to keep" $t --model_name DistMult ds keep
cp keep/entities.npy before.npy
expect_fail "diverging run over an existing model" 1 "no longer finite|diverged" \
    kg-train -q --force --model_name DistMult --hidden_dim 8 --epochs 3 \
    --lr 1e30 --init_scale 10 --rel_optimizer adam --rel_lr 1e30 ds keep
check "old model dir intact after divergence" cmp -s before.npy \
    keep/entities.npy

expect_fail "output parent missing (before training)" 1 \
    "cannot write the output into 'no/such'" $t ds no/such/model
expect_fail "checkpoint parent missing (before training)" 1 \
    "cannot write the checkpoint into 'no/such'" \
    $t --checkpoint_dir no/such/ck ds out
check "no output when the checkpoint cannot be written" test ! -e out
