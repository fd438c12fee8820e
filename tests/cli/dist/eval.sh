# kg-eval under mpirun: every rank ranks the test triples against its own
# range of candidate entities and rank 0 reports the summed counts, which
# must give exactly the single-process report (full and sampled ranking,
# filtered and raw, per relation, reciprocal relations).  t_dist checks
# the same sums without MPI, NaN scores included.
source "$KG_TOP/tests/cli/lib.sh"
plan 5

if ! command -v mpirun >/dev/null || ! command -v jq >/dev/null; then
	skip_all "dist eval: mpirun or jq is not installed"
fi
MPI="timeout 60 mpirun --oversubscribe"
# 3000 entities: three candidate tiles, so ranks really split them.
"$KG_BUILD/aux/gen_triples" -n 12000 -e 3000 -r 12 -s 5 >g.tsv &&
    kg-ingest -q -o ds --split 0.8,0.1,0.1 --seed 1 g.tsv &&
    "$KG_BUILD/aux/eval_mkmodel" ds m DistMult 16 &&
    "$KG_BUILD/aux/eval_mkmodel" --reciprocal ds mc ComplEx 16 ||
    { notok "dist eval: make the dataset and models"; exit 1; }

# same NAME MODEL ARGS...: plain and 1, 2 and 3 ranks give one report.
same() {
	local name=$1 model=$2 n bad=""
	shift 2
	kg-eval -q "$@" ds "$model" >plain.json 2>err.txt ||
	    { notok "dist eval: $name: plain run failed: $(cat err.txt)"; return; }
	jq -S 'del(.seconds_rank, .seconds_auc, .threads, .ranks)' plain.json >want.json
	for n in 1 2 3; do
		$MPI -np "$n" kg-eval -q "$@" ds "$model" >got.json 2>err.txt ||
		    { bad="$bad $n(failed: $(tail -n 3 err.txt))"; continue; }
		jq -S 'del(.seconds_rank, .seconds_auc, .threads, .ranks)' got.json >have.json
		cmp -s want.json have.json || bad="$bad $n"
	done
	if [ -z "$bad" ]; then
		ok "dist eval: $name: 1, 2 and 3 ranks equal one process"
	else
		notok "dist eval: $name: differs with ranks:$bad"
	fi
}
same "DistMult filtered, per relation" m --per-relation
same "DistMult raw, pessimistic" m --raw --ties pessimistic
same "ComplEx, reciprocal relations" mc
same "sampled, degree negatives" m --neg-sample 300 --neg-mode degree --seed 3
if [ "$(jq '.ranks' got.json)" = 3 ]; then
	ok "dist eval: the report names the rank count"
else
	notok "dist eval: no ranks in the report"
fi
