# kg-train end to end on the bundled UMLS data: a model dir that kg-eval
# reads, with the arrays, optimiser state, a JSON-lines log and a manifest
# holding the configuration; the filtered MRR measured with one thread
# and this seed (0.8431), less 0.03, so a real loss of accuracy fails
# (chance is about 0.04).
. "$KG_TOP/tests/cli/lib.sh"
plan 24
d=$(fixture_data umls)
kg-ingest -q -o umls --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" || { notok "kg-ingest umls"; exit 0; }

check "kg-train ComplEx on UMLS" kg-train -q --model_name ComplEx \
    --hidden_dim 64 --batch_size 256 --neg_sample_size 32 --epochs 12 \
    --lr 0.1 --num_thread 1 --seed 3 umls model
for f in entities.npy relations.npy entity_state.npy relation_state.npy \
    train_log.jsonl manifest.json; do
	check "model dir has $f" test -s "model/$f"
done
check "no checkpoint left after success" test ! -e model.ckpt
check "no temporary left" sh -c '! ls -a | grep -q "\.tmp\."'
check "log has one line per epoch" test "$(wc -l <model/train_log.jsonl)" -eq 12
check "log lines carry epoch, loss, seconds and throughput" sh -c \
    'jq -e "select(.epoch and .loss and .seconds >= 0 and .triples_per_second > 0)" model/train_log.jsonl >/dev/null &&
     test "$(jq -s "[.[].loss] | .[0] > .[-1]" model/train_log.jsonl)" = true'
check "manifest records tool and config" sh -c \
    'jq -e ".tool == \"kg-train\" and .config.model == \"ComplEx\" and .config.dim == 64 and .config.batch_size == 256 and .config.neg_sample_size == 32 and .config.n_entities == 135 and .config.n_relations == 46 and .config.lr == 0.1 and (.files | has(\"entity_state.npy\"))" model/manifest.json >/dev/null'
check "entities.npy shape in manifest" sh -c \
    'test "$(jq -c ".files[\"entities.npy\"].shape" model/manifest.json)" = "[135,64]"'

if kg-eval umls model >metrics.json 2>/dev/null; then
	mrr=$(jq '.by_ties.realistic.both.mrr // .mrr' metrics.json)
	if awk -v m="$mrr" 'BEGIN { exit !(m > 0.81) }'; then
		ok "kg-eval filtered MRR $mrr > 0.81"
	else
		notok "kg-eval filtered MRR $mrr > 0.81"
	fi
else
	notok "kg-eval reads the model dir"
fi

expect_fail "existing output needs --force" 1 "model' exists; use --force" \
    kg-train -q --epochs 1 --hidden_dim 8 umls model
check "--force replaces it" kg-train -q --force --epochs 1 --hidden_dim 8 \
    --model_name DistMult umls model
check "replaced model has the new config" sh -c \
    'jq -e ".config.model == \"DistMult\" and .config.dim == 8" model/manifest.json >/dev/null'

# Reciprocal relations double the relation rows; kg-eval understands them.
check "reciprocal 1-vs-all softmax N3 (kbc recipe)" kg-train -q \
    --model_name ComplEx --hidden_dim 32 --reciprocal --one_vs_all \
    --loss softmax --regularization_coef 1e-3 --regularization_norm 3 \
    --init normal --init_scale 0.1 --batch_size 128 --neg_chunk_size 128 \
    --epochs 3 umls recip
check "reciprocal: 92 relation rows" sh -c \
    'test "$(jq -c ".files[\"relations.npy\"].shape" recip/manifest.json)" = "[92,32]"'
check "kg-eval reads the reciprocal model" sh -c 'kg-eval umls recip >/dev/null 2>&1'

# Early stopping on validation MRR records the best epoch.
check "early stopping options" kg-train -q --model_name DistMult \
    --hidden_dim 32 --epochs 4 --valid_every 1 --patience 2 umls es
check "log has valid_mrr and manifest the best epoch" sh -c \
    'jq -e "select(.valid_mrr > 0)" es/train_log.jsonl >/dev/null &&
     jq -e ".figures.best_epoch >= 1 and .figures.best_valid_mrr > 0" es/manifest.json >/dev/null'

check "--help prints usage" sh -c 'kg-train --help | grep -q "^usage: kg-train"'
check "--version" sh -c 'kg-train --version | grep -q "^kg-train "'
