# kg-encode-attrs: a model manifest that lies about a dtype, a schema
# attribute no table has, and outputs that would replace an input
# (issue 12, items 8 and 1).  Golden stderr and exit codes.
source "$KG_TOP/tests/cli/lib.sh"
plan 13
printf 'a\tr\tb\nb\tr\tc\nc\tr\td\n' >triples.tsv
kg-ingest -q -o ds --train triples.tsv || notok "ingest"
mkdir tab
printf 'entity,age,city\na,30,x\nb,41,y\nc,,x\n' >tab/people.csv
printf '{"tables": [{"path": "people.csv", "form": "wide", "header": true}],
  "attributes": {"age": {"kind": "numeric", "n_bins": 2},
                 "city": {"kind": "categorical"}}}\n' >tab/s.json
check "fit" kg-encode-attrs fit -q -d ds -s tab/s.json -o model

# A dtype that is not a string used to skip the check.
for bad in 4 null '"<f4"'; do
	rm -rf lie; cp -r model lie
	python3 - lie/manifest.json "$bad" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["files"]["age.edges.npy"]["dtype"] = json.loads(sys.argv[2])
json.dump(m, open(sys.argv[1], "w"))
PY
	case $bad in
	'"<f4"') want="kg-encode-attrs: lie/age.edges.npy: dtype <f8, the manifest says <f4" ;;
	*) want="kg-encode-attrs: lie/manifest.json: files.age.edges.npy.dtype is missing or not a string" ;;
	esac
	golden "transform refuses a model whose manifest says dtype $bad" 1 \
	    "$want" kg-encode-attrs transform -q -d ds -m lie -o out
done
check "nothing written" test ! -e out

# A schema attribute that names a column no table has.
printf '{"tables": [{"path": "people.csv", "form": "wide", "header": true}],
  "attributes": {"age": {"kind": "numeric", "n_bins": 2},
                 "city": {"kind": "categorical"},
                 "height": {"kind": "numeric"}}}\n' >tab/s2.json
golden "an attribute without a column" 1 \
    "kg-encode-attrs: tab/s2.json: attributes.height: no table has a column 'height'" \
    kg-encode-attrs fit -q -d ds -s tab/s2.json -o m2
printf 'a\theight\t1.8\nzz\tweight\t3\n' >tab/long.tsv
printf '{"tables": [{"path": "long.tsv", "form": "long",
  "unknown_entities": "skip", "unknown_attributes": "skip"}],
  "attributes": {"height": {"kind": "numeric"},
                 "weight": {"kind": "numeric"},
                 "width": {"kind": "numeric"}}}\n' >tab/s3.json
golden "an attribute no row of a long table names" 1 \
    "kg-encode-attrs: tab/s3.json: attributes.width: no table has a column 'width'" \
    kg-encode-attrs fit -q -d ds -s tab/s3.json -o m3
printf '{"tables": [{"path": "long.tsv", "form": "long",
  "unknown_entities": "skip"}],
  "attributes": {"height": {"kind": "numeric"},
                 "weight": {"kind": "numeric"}}}\n' >tab/s4.json
check "an attribute named only by rows of unknown entities is fine" \
    kg-encode-attrs fit -q -d ds -s tab/s4.json -o m4 2>/dev/null
check "nothing else written" test ! -e m2 -a ! -e m3

# Outputs that are, or hold, an input.
golden "fit into the directory of the schema and tables" 1 \
    "kg-encode-attrs: input 'tab/s.json' is inside the output 'tab'" \
    kg-encode-attrs fit -q -f -d ds -s tab/s.json -o tab
golden "transform over its model" 1 \
    "kg-encode-attrs: output 'model' is the input 'model'" \
    kg-encode-attrs transform -q -f -d ds -m model -o model
kg-encode-attrs transform -q -d ds -m model -o s0
golden "merge over a shard" 1 \
    "kg-encode-attrs: output 's0' is the input 's0'" \
    kg-encode-attrs merge -q -f -m model -o s0 s0
check "the inputs are intact" test -f tab/people.csv -a -f model/model.json \
    -a -f s0/manifest.json
