#!/usr/bin/env bash
# Every bad input is rejected with a clear message (file:line for tables),
# the right exit status, and no output left behind.
source "$KG_TOP/tests/cli/lib.sh"
plan 45

printf 'a\tr\tb\nb\tr\tc\nc\tr\ta\n' >triples.tsv
kg-ingest -q -o ds --train triples.tsv || notok "ingest"
printf 'entity,n,c\na,1,x\nb,2,y\nc,,x\n' >good.csv
schema() {	# schema FILE: a wide table "file" with n (numeric), c (categorical)
	printf '{"tables": [{"path": "%s", "form": "wide", "header": true}],
	  "attributes": {"n": {"kind": "numeric", "n_bins": 2},
	  "c": {"kind": "categorical"}}}\n' "$1"
}
schema good.csv >good.json
nothing_left() {	# no output directory and no temporary sibling
	[ ! -e "$1" ] && ! ls -a | grep -q "^\.$1\.tmp"
}

# bad_table NAME CONTENT PATTERN: fit must fail with PATTERN, leave nothing
bad_table() {
	printf "$2" >bad.csv
	schema bad.csv >bad.json
	expect_fail "$1" 1 "$3" kg-encode-attrs fit -d ds -s bad.json -o out
	check "$1: no output left" nothing_left out
}
bad_table "unknown entity" 'entity,n,c\na,1,x\nzz,2,y\n' \
    '^kg-encode-attrs: bad.csv:3: unknown entity .zz.$'
bad_table "unparseable number" 'entity,n,c\na,1,x\nb,1.5kg,y\n' \
    "bad.csv:3: attribute 'n': cannot parse '1.5kg' as a number"
bad_table "attribute missing from the schema" 'entity,n,colour\na,1,x\n' \
    "bad.csv:1: attribute 'colour' is not in the schema"
bad_table "wrong field count" 'entity,n,c\na,1\n' \
    'bad.csv:2: expected 3 fields, found 2'
bad_table "stray quote" 'entity,n,c\na,1,"x\nb,2,y\n' \
    'bad.csv:2: unterminated quoted field'

printf 'a\td\t2020-02-30\n' >dates.tsv
printf '{"tables": [{"path": "dates.tsv", "form": "long"}],
  "attributes": {"d": {"kind": "date"}}}\n' >dates.json
expect_fail "unparseable date" 1 \
    "dates.tsv:1: attribute 'd': cannot parse '2020-02-30' as a date \(ISO 8601\)" \
    kg-encode-attrs fit -d ds -s dates.json -o out
check "unparseable date: no output left" nothing_left out

printf 'entity,n,c\na,1,x\nzz,2,y\nb,oops,y\n' >two.csv
schema two.csv >two.json
expect_fail "--max-errors 1 with two bad rows" 1 'two.csv:4: .*oops' \
    kg-encode-attrs fit --max-errors 1 -d ds -s two.json -o out
check "--max-errors 2 skips both rows" \
    kg-encode-attrs fit --max-errors 2 -d ds -s two.json -o tolerant
check "--max-errors: the skipped rows are recorded" \
    grep -q '"skipped_bad_rows": 2' tolerant/manifest.json

# Schema errors.
printf '{"tables": [{"path": "good.csv", "form": "wide", "header": true}],\n "attributes": {\n  "n": {"kind": "numeric",}\n}}\n' >syntax.json
expect_fail "schema syntax error has a line" 1 '^kg-encode-attrs: syntax.json:3: ' \
    kg-encode-attrs fit -d ds -s syntax.json -o out
printf '{"tables": [{"path": "good.csv", "form": "wide", "header": true}],
  "attributes": {"n": {"kind": "number"}}}\n' >kind.json
expect_fail "schema: unknown kind" 1 "kind.json: attributes.n.kind: unknown kind 'number'" \
    kg-encode-attrs fit -d ds -s kind.json -o out
expect_fail "schema file missing" 1 "nosuch.json" \
    kg-encode-attrs fit -d ds -s nosuch.json -o out
check "schema errors: no output left" nothing_left out

# Usage errors: exit 2.
expect_fail "no subcommand" 2 "^kg-encode-attrs: expected a subcommand \(fit, transform, merge\)$" kg-encode-attrs
expect_fail "unknown subcommand" 2 "unknown subcommand 'encode'" \
    kg-encode-attrs encode -d ds
expect_fail "fit without -s" 2 "missing" kg-encode-attrs fit -d ds -o out
expect_fail "--shard out of range" 2 "--shard" \
    kg-encode-attrs transform -d ds -m m -o out --shard 4/4
expect_fail "--shard malformed" 2 "--shard" \
    kg-encode-attrs transform -d ds -m m -o out --shard 1
expect_fail "--max-errors not a number" 2 "--max-errors" \
    kg-encode-attrs fit -d ds -s good.json -o out --max-errors x
expect_fail "--shard with fit" 2 "not used" \
    kg-encode-attrs fit -d ds -s good.json -o out --shard 0/2

# A good model, then errors downstream of it.
check "fit the good schema" kg-encode-attrs fit -d ds -s good.json -o model
expect_fail "existing output needs --force" 1 "exists" \
    kg-encode-attrs fit -d ds -s good.json -o model
check "--force replaces it" \
    kg-encode-attrs fit -f -d ds -s good.json -o model
kg-encode-attrs transform -d ds -m model -o s0 --shard 0/2 &&
    kg-encode-attrs transform -d ds -m model -o s1 --shard 1/2 ||
    notok "transform shards"
expect_fail "merge with a missing shard" 1 "merge needs shards" \
    kg-encode-attrs merge -m model -o out s0
expect_fail "merge with a repeated shard" 1 "merge needs shards" \
    kg-encode-attrs merge -m model -o out s0 s0
check "merge: no output left" nothing_left out
kg-encode-attrs fit -d ds -s good.json -o model2 --max-errors 3 ||
    notok "second model"
expect_fail "merge shards of another model" 1 "another model" \
    kg-encode-attrs merge -m model2 -o out s0 s1
check "merge: no output left (2)" nothing_left out
printf 'entity,n,c\na,1,x\nb,3,y\nc,,x\n' >good.csv
expect_fail "table changed since fit" 1 "good.csv: table changed since fit" \
    kg-encode-attrs transform -d ds -m model -o out
check "transform: no output left" nothing_left out
printf 'a\tr\tb\nb\tr\tc\nc\tr\td\n' >t2.tsv
kg-ingest -q -o ds2 --train t2.tsv
printf 'entity,n,c\na,1,x\nb,2,y\nc,,x\n' >good.csv
kg-encode-attrs transform -q -d ds2 -m model -o x0 --shard 0/2
expect_fail "merge of shards of two datasets" 1 \
    "x0 encodes a dataset of 4 entities, s0 one of 3" \
    kg-encode-attrs merge -m model -o out s0 x0
printf 'entity,n,c\na,1,x\nb,3,y\nc,,x\n' >good.csv	# changed again

# Unknown format version: exit 3.
sed 's/"format_version": 1/"format_version": 99/' model/manifest.json >m.json &&
    cp -r model model99 && cp m.json model99/manifest.json
expect_fail "model of an unknown format version" 3 "99" \
    kg-encode-attrs transform -d ds -m model99 -o out
check "no output left (version)" nothing_left out

# transform --merge: its options, and a failure in one process.
expect_fail "--merge with --shard" 2 \
    "transform --merge encodes every shard: --shard i/n is for one shard" \
    kg-encode-attrs transform --merge --shard 0/2 -d ds -m model -o out
expect_fail "--ship-inputs without --merge" 2 \
    "^kg-encode-attrs: --shards and --ship-inputs need transform --merge$" \
    kg-encode-attrs transform --ship-inputs -d ds -m model -o out
expect_fail "merge --merge" 2 "^kg-encode-attrs: --merge is an option of transform" \
    kg-encode-attrs merge --merge -m model -o out s0
expect_fail "--shards 0" 2 "--shards" \
    kg-encode-attrs transform --merge --shards 0 -d ds -m model -o out
expect_fail "transform --merge: a table changed since fit" 1 \
    "good.csv: table changed since fit" \
    kg-encode-attrs transform --merge --shards 2 -d ds -m model -o out
check "transform --merge: no output left" nothing_left out
