#!/usr/bin/env bash
# kg-eval's device ranker (lib/eval/eval_device.h) end to end without a
# GPU: the test hook KG_EVAL_SEAM=cpu runs it on the CPU backend through
# the path --device cuda takes.  Its report equals the CPU evaluator's
# (every rank, so every metric of every tie policy) for every model, raw
# and filtered, reciprocal relations, all-tied scores, streamed
# rows; only the timing and the "backend" key differ.  The options it
# does not take are refused with exit 2 and one line, writing nothing.
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 15
if ! command -v jq >/dev/null; then
	skip_all "kg-eval device ranker: jq is not installed"
fi
make_umls umls || { notok "ingest umls"; exit 0; }

# same NAME MODEL_DIR [kg-eval options]: the seam's report is the CPU's.
same() {
	local name=$1 m=$2
	shift 2
	kg-eval -q "$@" -o "cpu_$name.json" umls "$m" &&
	    KG_EVAL_SEAM=cpu kg-eval -q "$@" -o "dev_$name.json" umls "$m" ||
	    { notok "$name: kg-eval failed"; return; }
	if cmp -s <(jq -S 'del(.seconds_rank)' "cpu_$name.json") \
	    <(jq -S 'del(.seconds_rank, .backend)' "dev_$name.json"); then
		ok "$name: the device ranker's report is the CPU's"
	else
		notok "$name: the reports differ"
		diff <(jq -S 'del(.seconds_rank)' "cpu_$name.json") \
		    <(jq -S 'del(.seconds_rank, .backend)' "dev_$name.json") |
		    head -20 >&2
	fi
}

for m in TransE_l1 TransE_l2 DistMult ComplEx RotatE RESCAL "TransR --rel-dim 8"; do
	set -- $m
	"$MKMODEL" --gamma 6 ${2:+$2 $3} umls "m_$1" "$1" 16 ||
	    notok "make $1"
	same "$1" "m_$1" --per-relation
done
"$MKMODEL" --reciprocal umls m_recip ComplEx 16 || notok "make reciprocal"
same "reciprocal, raw, optimistic" m_recip --raw --ties optimistic
same "blocks of 100, pessimistic, validation split" m_DistMult --batch 100 \
    --ties pessimistic --split valid
same "streamed rows" m_RotatE --stream
"$MKMODEL" --zeros umls m_zeros DistMult 8 || notok "make zeros"
same "every score tied" m_zeros --raw
check "and they are tied: optimistic MR 1, pessimistic the entity count" \
    test "$(jq -c '[.by_ties.optimistic.both.mr, .by_ties.pessimistic.both.mr]' \
    'dev_every score tied.json')" = "[1,$(jq .n_entities 'dev_every score tied.json')]"

err=$(KG_EVAL_SEAM=cpu kg-eval -o say.json umls m_DistMult 2>&1 >/dev/null)
check "stderr says where it ranks" test \
    "$(printf '%s\n' "$err" | head -1)" = "kg-eval: ranking on $(jq -r .backend say.json)"

# What the device ranker does not take.
expect_fail "sampled ranking is refused" 2 \
    "^kg-eval: sampled ranking \(--neg-sample\) does not run on a device yet \(use --device cpu\)$" \
    env KG_EVAL_SEAM=cpu kg-eval -q --neg-sample 10 -o no1.json umls m_DistMult
check "the refusal wrote nothing" test ! -e no1.json
