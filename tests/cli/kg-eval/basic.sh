#!/usr/bin/env bash
# kg-eval on a model dir for UMLS: exit status, JSON keys and ranges,
# the stderr table, -q, -o FILE and --force.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 31

make_umls umls || { notok "ingest umls"; exit 0; }
"$MKMODEL" umls model TransE_l2 32 || { notok "make model"; exit 0; }
have_json || skip_all "basic: neither jq nor python3"

kg-eval umls model >out.json 2>err.txt
check "exit 0" test $? -eq 0
check "table on stderr" grep -Eq '^  both +[0-9.]+ +[0-9.]+' err.txt
check "table names the setting" grep -q 'filtered, realistic ties, all entities' err.txt

jpaths out.json >paths.txt
missing=
for k in protocol setting ties split model n_triples n_entities dim \
    reciprocal dataset model_dir threads seconds_rank; do
	grep -qFx "$k" paths.txt || missing="$missing $k"
done
for t in metrics by_ties.realistic by_ties.optimistic by_ties.pessimistic; do
	for s in tail head both; do
		for m in mrr mr hits@1 hits@3 hits@10 n; do
			grep -qFx "$t.$s.$m" paths.txt || missing="$missing $t.$s.$m"
		done
	done
done
check "JSON keys present${missing:+ (missing:$missing)}" test -z "$missing"
check "protocol full" test "$(jget out.json .protocol)" = full
check "setting filtered" test "$(jget out.json .setting)" = filtered
check "ties realistic" test "$(jget out.json .ties)" = realistic
check "split test" test "$(jget out.json .split)" = test
check "661 test triples" test "$(jget out.json .n_triples)" = 661
check "both counts 2n" test "$(jget out.json .metrics.both.n)" = 1322
mrr=$(jget out.json .metrics.both.mrr)
mr=$(jget out.json .metrics.both.mr)
check "mrr in (0, 1]" awk -v x="$mrr" 'BEGIN { exit !(x > 0 && x <= 1) }'
check "mr in [1, 135]" awk -v x="$mr" 'BEGIN { exit !(x >= 1 && x <= 135) }'
check "metrics = by_ties.realistic" test \
    "$(jget out.json .metrics.both.mrr)" = "$(jget out.json .by_ties.realistic.both.mrr)"
check "optimistic mrr >= pessimistic" awk \
    -v a="$(jget out.json .by_ties.optimistic.both.mrr)" \
    -v b="$(jget out.json .by_ties.pessimistic.both.mrr)" 'BEGIN { exit !(a >= b) }'

# Raw ranks can only be worse than filtered ones.
kg-eval -q --raw umls model >raw.json
check "raw exit 0" test $? -eq 0
check "raw setting" test "$(jget raw.json .setting)" = raw
check "raw mr >= filtered mr" awk -v r="$(jget raw.json .metrics.both.mr)" \
    -v f="$mr" 'BEGIN { exit !(r >= f) }'

# -q: nothing on stderr; -o FILE holds the same report.
kg-eval -q -o report.json umls model >stdout.txt 2>err2.txt
check "-q silent" test ! -s err2.txt
check "-o leaves stdout empty" test ! -s stdout.txt
check "-o same metrics" test "$(jget report.json .metrics.both.mrr)" = "$mrr"
expect_fail "-o existing needs --force" 1 "exists; use --force" \
    kg-eval -q -o report.json umls model
check "--force replaces" kg-eval -q --force -o report.json --split valid umls model
check "valid split written" test "$(jget report.json .split)" = valid
check "no temporary left" test "$(ls | grep -c '\.tmp\.')" -eq 0

# --help and --version.
kg-eval --help >help.txt
check "--help exit 0" test $? -eq 0
check "--help usage" grep -q '^usage: kg-eval' help.txt
check "--version" sh -c 'kg-eval --version | grep -q "^kg-eval [0-9]"'

# --progress reports on stderr, the report is unchanged.
kg-eval --progress umls model >prog.json 2>prog.txt
check "--progress exit 0" test $? -eq 0
check "--progress counts queries" grep -q '1322/1322 queries' prog.txt
check "--progress same report" test "$(jget prog.json .metrics.both.mrr)" = "$mrr"

# -o - is standard output.
kg-eval -q -o - umls model >dash.json
check "-o - writes stdout" test "$(jget dash.json .metrics.both.mrr)" = "$mrr"
