# The bundled UMLS through kg-ingest, kg-partition and kg-expand, with
# every output read back and checked by brute force.
source "$KG_TOP/tests/cli/lib.sh"
plan 5
gen=$KG_BUILD/aux/gen_graph
u=$(fixture_data umls)

if ! kg-ingest -q -o umls --train "$u/train.txt.gz" --valid "$u/valid.txt.gz" \
    --test "$u/test.txt.gz"; then
	notok "kg-ingest umls"
	exit 1
fi
for spec in "metis head 4" "metis vertex-cut 3" "random tail 5"; do
	set -- $spec
	if kg-partition -q -m "$1" -e "$2" -p "$3" -o "p-$1-$2" umls &&
	    kg-expand -q -k 2 -p "p-$1-$2" -o "x-$1-$2" umls &&
	    "$gen" check umls "p-$1-$2" "x-$1-$2"; then
		ok "umls $1 $2 P=$3 partitioned, expanded and checked"
	else
		notok "umls $1 $2 P=$3 partitioned, expanded and checked"
	fi
done
check "umls metis balanced" \
	bash -c 'grep -o "\"node_balance\": [0-9.]*" p-metis-head/manifest.json | awk "{exit !(\$2 < 1.1)}"'
check "umls capped expansion checked" \
	bash -c 'kg-expand -q -k 2 -c 5,3 -p p-metis-head -o capped umls && "$0" check umls p-metis-head capped' "$gen"
