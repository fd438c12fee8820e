# The RDF pipeline from the bundled LitWD1K dump: ingest with literals,
# encode them with the proposed schema in 2 shards, partition, expand,
# an R-GCN over the features on 2 ranks and DistMult, both evaluated;
# metrics checked loosely; a second make finds everything up to date.
. "$KG_TOP/tests/cli/lib.sh"
plan 11
mk=$KG_TOP/pipelines/rdf.mk
vars="EPOCHS=3 DIM=16 THREADS=1 RANKS=2 SHARDS=2 OUT=$PWD/out"
if make -s -j2 -f "$mk" $vars all >log 2>&1; then
	ok "pipeline runs end to end"
else
	notok "pipeline runs end to end: $(grep -v 'bins (the others' log | tail -5)"
fi
fig() { jq -r "$2" "out/$1"; }
check "dataset: 1,533 entities, 47 relations, 14,554 literal rows" test \
    "$(fig dataset/manifest.json '[.figures.entities, .figures.relations, .figures.rdf.literals] | join(" ")')" = "1533 47 14554"
check "the proposed schema: 70 numeric, 11 date, 3 text, 1 multi_label" test \
    "$(fig dataset/literals.schema.json '[.attributes[].kind] | group_by(.) | map("\(.[0])=\(length)") | join(" ")')" = \
    "date=11 multi_label=1 numeric=70 text=3"
check "features of every attribute, from 2 shards" test \
    "$(fig features/manifest.json '.config.attributes | length')" = 85
check "two expanded partitions" test -f out/expanded/part-001/manifest.json
# Loose bounds: 3 epochs at d=16 gave the R-GCN MRR 0.109, AUC 0.955,
# and DistMult MRR 0.071, AUC 0.916 (seed 1, one thread a rank).
check "R-GCN over the features: MRR > 0.08, AUC > 0.9" python3 -c '
import json, sys
m = json.load(open("out/metrics.json"))
sys.exit(not (m["metrics"]["both"]["mrr"] > 0.08 and m["auc"] > 0.9))'
check "DistMult: MRR > 0.04, AUC > 0.85" python3 -c '
import json, sys
m = json.load(open("out/metrics-DistMult.json"))
sys.exit(not (m["metrics"]["both"]["mrr"] > 0.04 and m["auc"] > 0.85))'
check "the R-GCN read the features" test \
    "$(fig model/manifest.json '.inputs | map(.role) | index("features") != null')" = true
# Names are IRIs as written: kg-predict takes and shows them, kg-eval's
# per-relation report names relations by them.
wd=http://www.wikidata.org
printf '%s/entity/Q1000\t%s/prop/direct/P17\t?\n' $wd $wd |
    kg-predict -k 3 --no-header out/dataset out/model-DistMult >pred.tsv 2>&1
check "kg-predict: a query in IRIs, answers in IRIs" test \
    "$(cut -f3 pred.tsv | grep -c "^$wd/entity/Q")" = 3
check "kg-eval: per-relation report named by IRIs" test \
    "$(fig metrics.json '.per_relation[0].name' | cut -c1-36)" = "$wd/prop/direct/"
if make -q -f "$mk" $vars all; then
	ok "second run: everything up to date"
else
	notok "second run: make -q says something is out of date"
fi
