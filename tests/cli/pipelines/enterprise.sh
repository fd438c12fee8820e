# The enterprise pipeline runs end to end on a tiny generated instance,
# from another directory, and a second make finds everything up to date.
. "$KG_TOP/tests/cli/lib.sh"
plan 20
mk=$KG_TOP/pipelines/enterprise.mk
vars="NODES=300 EPOCHS=3 DIM=16 SHARDS=2 PARTS=2 HOPS=1 THREADS=1 OUT=$PWD/out"
if make -s -j2 -f "$mk" $vars all >log 2>&1; then
	ok "pipeline runs end to end"
else
	notok "pipeline runs end to end: $(tail -5 log)"
fi
check "generated data" test -f out/data/schema.json
for d in dataset attr-model attr-shard-0 attr-shard-1 features partitions expanded model; do
	check "stage output $d has a manifest" test -f "out/$d/manifest.json"
done
check "metrics report has an MRR" grep -q '"mrr"' out/metrics.json
check "metrics report has an AUC" grep -q '"auc"' out/metrics.json
if make -q -f "$mk" $vars all; then
	ok "second run: everything up to date"
else
	notok "second run: make -q says something is out of date"
fi
# Touching the encoder model's input reruns the encoder and what follows,
# but not the partitioning.
before=$(stat -c %Y out/partitions/manifest.json)
sleep 1
touch out/data/schema.json
make -s -j2 -f "$mk" $vars all >log 2>&1
after=$(stat -c %Y out/partitions/manifest.json)
check "a changed schema does not repartition" test "$before" = "$after"
check "a changed schema re-encodes" test out/attr-model/manifest.json -nt out/data/schema.json
# The shallow path: DistMult over 4 partitions on 2 ranks (PBG buckets).
if make -s -j2 -f "$mk" NODES=300 EPOCHS=3 DIM=16 HOPS=1 THREADS=1 \
    MODEL=DistMult RANKS=2 PARTS=4 OUT=$PWD/out2 all >log2 2>&1; then
	ok "shallow model over 4 partitions on 2 ranks"
else
	notok "shallow model over 4 partitions on 2 ranks: $(tail -5 log2)"
fi
check "shallow run has metrics" grep -q '"mrr"' out2/metrics.json
check "shallow run over partitions: partitions" test -f out2/partitions/manifest.json
check "shallow run builds no features or expansion" \
    test "$(cd out2 && ls -d attr-* features expanded 2>/dev/null)" = ""
check "the default trains the R-GCN encoder" grep -q '"encoder"' out/model/manifest.json
