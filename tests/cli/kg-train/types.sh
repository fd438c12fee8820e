# Negatives restricted by entity type: a dataset ingested with types
# trains with --neg_types and still predicts well above chance.
. "$KG_TOP/tests/cli/lib.sh"
plan 4
d=$(fixture_data umls)
# Two synthetic types by name length; a few entities left untyped.
gzip -dc "$d/train.txt.gz" | awk -F'\t' '{ print $1; print $3 }' | sort -u |
    awk 'NR % 9 != 0 { printf "%s\tt%d\n", $0, length($0) % 2 }' >types.tsv
kg-ingest -q -o ds --types types.tsv --train "$d/train.txt.gz" \
    --valid "$d/valid.txt.gz" --test "$d/test.txt.gz" ||
    { notok "kg-ingest umls with types"; exit 0; }
check "dataset has types.npy" test -s ds/types.npy
check "train with --neg_types" kg-train -q --model_name DistMult \
    --hidden_dim 32 --epochs 10 --neg_types --num_thread 1 ds m
check "manifest records neg_types" sh -c \
    'jq -e ".config.neg_types == true" m/manifest.json >/dev/null'
mrr=$(kg-eval ds m 2>/dev/null | jq '.by_ties.realistic.both.mrr')
if awk -v m="$mrr" 'BEGIN { exit !(m > 0.3) }'; then
	ok "typed negatives: filtered MRR $mrr > 0.3"
else
	notok "typed negatives: filtered MRR $mrr > 0.3"
fi
