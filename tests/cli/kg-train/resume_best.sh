# A run with early stopping, killed between its best epoch and its stop
# and resumed, keeps the best epoch, its parameters and the patience count
# from the checkpoint: it stops where the uninterrupted run stops and
# keeps the same epoch's parameters, bit for bit (one thread, fixed seed).
. "$KG_TOP/tests/cli/lib.sh"
echo "1..9"
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }
t="kg-train -q --model_name DistMult --hidden_dim 16 --num_thread 1"
t="$t --seed 5 --batch_size 256 --neg_sample_size 16 --lr 0.5 --epochs 30"
t="$t --valid_every 1 --patience 4"
fig() { jq -r ".figures.$2" "$1/manifest.json"; }

check "uninterrupted run" $t ds full
best=$(fig full best_epoch) last=$(fig full epochs)
# The kill must fall after the best epoch and before the stop, with a
# validation or more since the best: else the test proves nothing.
kill_at=$((last - 2))
check "the setting stops early, 2+ validations after its best ($best < $kill_at < $last)" \
    test "$(fig full stopped_by)" = early_stopping -a "$best" -lt "$kill_at"
KG_TEST_KILL_AFTER_CKPT=$kill_at:KILL $t ds part 2>/dev/null
check "killed after checkpoint $kill_at" test $? -ne 0 -a ! -e part
check "the checkpoint keeps the best epoch and the patience count" sh -c \
    "jq -e '.best_epoch == $best and .bad_rounds == $((kill_at - best))' part.ckpt/state.json >/dev/null"
check "the killed run resumes" $t --resume ds part
check "resumed: stops where the uninterrupted run stops" test \
    "$(fig part stopped_by) $(fig part epochs)" = "early_stopping $last"
check "resumed: keeps the same best epoch and MRR" test \
    "$(fig part best_epoch) $(fig part best_valid_mrr)" = \
    "$best $(fig full best_valid_mrr)"
check "resumed: the best epoch's entities, bit for bit" cmp -s \
    full/entities.npy part/entities.npy
check "resumed: the best epoch's relations, bit for bit" cmp -s \
    full/relations.npy part/relations.npy
