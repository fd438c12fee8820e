#!/usr/bin/env bash
# kg-predict's device scoring (lib/eval/eval_device.h's scorer) end to end
# without a GPU: the test hook KG_PREDICT_SEAM=cpu scores the entity
# queries on the CPU backend through the path --device cuda takes, and the
# host keeps the top k.  The answers are the CPU's byte for byte for
# every model, filtered or not, reciprocal relations, small blocks, JSON,
# and mixed with relation and nearest queries (which stay on the CPU).
source "$KG_TOP/tests/cli/lib.sh"
source "$KG_TOP/tests/cli/kg-eval/lib.inc"
plan 11
make_umls umls || { notok "ingest umls"; exit 0; }
# 40 test triples as tail queries, head queries and relation queries.
gzip -dc "$(fixture_data umls)/test.txt.gz" | head -40 >t.tsv
awk -F'\t' '{ print $1 "\t" $2 "\t?"; print "?\t" $2 "\t" $3 }' t.tsv >q.tsv
awk -F'\t' '{ print $1 "\t?\t" $3 }' t.tsv >rel.tsv

# same NAME MODEL_DIR QUERIES [kg-predict options]
same() {
	local name=$1 m=$2 q=$3
	shift 3
	if kg-predict -q "$@" -o "cpu_$name.out" umls "$m" "$q" &&
	    KG_PREDICT_SEAM=cpu kg-predict -q "$@" -o "dev_$name.out" umls \
	    "$m" "$q" && test -s "cpu_$name.out" &&
	    cmp -s "cpu_$name.out" "dev_$name.out"; then
		ok "$name: the device's answers are the CPU's"
	else
		notok "$name: the answers differ"
	fi
}

for m in TransE_l1 TransE_l2 DistMult ComplEx RotatE RESCAL "TransR --rel-dim 8"; do
	set -- $m
	"$MKMODEL" --gamma 6 ${2:+$2 $3} umls "m_$1" "$1" 16 ||
	    notok "make $1"
	same "$1" "m_$1" q.tsv -k 5 --filter
done
"$MKMODEL" --reciprocal umls m_recip ComplEx 16 || notok "make reciprocal"
same "reciprocal, unfiltered, JSON" m_recip q.tsv -k 7 --format json
same "blocks of 3, k 200" m_DistMult q.tsv -k 200 --batch 3 --filter
cat q.tsv rel.tsv >mixed.tsv
same "entity and relation queries" m_RotatE mixed.tsv -k 4 --filter
err=$(KG_PREDICT_SEAM=cpu kg-predict -k 1 -o say.tsv umls m_DistMult q.tsv 2>&1 >/dev/null)
check "stderr says where it scores" sh -c \
    'printf "%s\n" "$1" | head -1 | grep -Eq "^kg-predict: scoring on cpu:[a-z]+:[A-Za-z0-9]+$"' \
    _ "$err"
