# Usage errors of every tool (issue 32, item 10): the message begins with
# the tool's name, not the path it was run by, says what is wrong, and is
# followed by one line pointing to --help (not the whole usage); nothing
# is written.
source "$KG_TOP/tests/cli/lib.sh"
plan 46

hint() { echo "Try '$1 --help' for more information."; }

for path in "$KG_BIN"/kg-*; do
	t=$(basename "$path")
	sub=
	[ "$t" = kg-encode-attrs ] && sub=fit
	golden "$t: an unknown long option, named as typed" 2 \
	    "$t: unrecognized option '--bogus'
$(hint "$t")" "$path" $sub --bogus x y
	golden "$t: an unknown short option" 2 \
	    "$t: unrecognized option '-Z'
$(hint "$t")" "$path" $sub -Z x y
	golden "$t: --help takes no argument" 2 \
	    "$t: option '--help' takes no argument
$(hint "$t")" "$path" $sub --help=1 x y
done
for t in kg-eval kg-export kg-expand kg-ingest kg-partition kg-plot kg-predict; do
	golden "$t: -o without its argument" 2 "$t: option '-o' needs an argument
$(hint "$t")" "$KG_BIN/$t" -o
done
golden "kg-train: a long option without its argument" 2 \
    "kg-train: option '--hidden_dim' needs an argument
$(hint kg-train)" "$KG_BIN/kg-train" --hidden_dim
golden "kg-train: ambiguous abbreviation" 2 \
    "kg-train: option '--rel' is ambiguous
$(hint kg-train)" "$KG_BIN/kg-train" --rel x y

# Missing operands: what is missing, then the hint.
golden "kg-train without operands" 2 \
    "kg-train: expected DATASET_DIR MODEL_DIR, got 0 operands
$(hint kg-train)" "$KG_BIN/kg-train"
golden "kg-train GNN with one operand" 2 \
    "kg-train: expected DATASET_DIR MODEL_DIR, got 1 operand
$(hint kg-train)" kg-train --model_name RGCN ds
golden "kg-encode-attrs without a subcommand" 2 \
    "kg-encode-attrs: expected a subcommand (fit, transform, merge)
$(hint kg-encode-attrs)" kg-encode-attrs
golden "kg-eval without operands" 2 "kg-eval: expected DATASET_DIR MODEL_DIR
$(hint kg-eval)" kg-eval

# The unknown-model message names the GNN encoders too.
golden "kg-train: unknown model" 2 \
    "kg-train: unknown model 'TransF' (expected TransE_l1, TransE_l2, DistMult, ComplEx, RotatE, RESCAL, TransR, or the GNN encoders RGCN and RelGNN)" \
    kg-train --model_name TransF ds m
check "no output after the usage errors" test -z "$(ls -A)"

# kg-train takes -f for --force, as the other tools do.
printf 'a\tr\tb\nb\tr\tc\nc\tr\ta\n' >t.tsv
kg-ingest -q -o ds t.tsv || notok "ingest"
tr="kg-train -q --model_name DistMult --hidden_dim 4 --epochs 1 --num_thread 1"
$tr ds m 2>/dev/null || notok "first training"
expect_fail "kg-train refuses an existing model without -f" 1 \
    "kg-train: .*m.* exists" $tr ds m
check "kg-train -f replaces it" $tr -f --seed 9 ds m
check "the model is the new one" grep -q -- '"--seed"' m/manifest.json
gr="kg-train -q --model_name RGCN --epochs 1 --num_thread 1"
$gr ds g 2>/dev/null || notok "first GNN training"
check "kg-train -f replaces a GNN model" $gr -f ds g
