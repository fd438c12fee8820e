# kg-partition on generated graphs: outputs read back and checked by
# brute force (gen_graph check), determinism, P = 1, --force.
source "$KG_TOP/tests/cli/lib.sh"
plan 22
gen=$KG_BUILD/aux/gen_graph

# jqcheck NAME FILTER FILE: a jq -e assertion, skipped without jq.
jqcheck() {
	if ! command -v jq >/dev/null; then skip "$1: no jq"; return; fi
	if jq -e "$2" "$3" >/dev/null; then ok "$1"; else notok "$1"; fi
}

"$gen" -n 600 -m 5000 -r 7 -c 6 -v 50 -t 50 -s 3 -o ds || { notok "gen_graph"; exit 1; }

for method in metis random; do
	for edges in head tail vertex-cut; do
		name="$method-$edges"
		if kg-partition -q -p 4 -m "$method" -e "$edges" -s 5 -o "p-$name" ds &&
		    "$gen" check ds "p-$name"; then
			ok "partition $name checked"
		else
			notok "partition $name checked"
		fi
	done
done

# The manifest: tool, config, partition book and figures.
man=p-metis-head/manifest.json
check "manifest names tool and input" \
	grep -q '"tool": "kg-partition"' "$man"
jqcheck "manifest has the partition book" \
	'.partition_book.nparts == 4 and (.partition_book.offsets | length) == 5 and .partition_book.offsets[4] == 600' "$man"
jqcheck "figures add up" \
	'(.figures.nodes_per_part | add) == 600 and (.figures.edges_per_part | add) == 5000 and .figures.node_balance <= 1.06 and .figures.inside_fraction > 0 and (.figures.bucket_sizes | flatten | add) == 5000' "$man"
cut() { grep -o '"edge_cut": [0-9]*' "$1/manifest.json" | grep -o '[0-9]*$'; }
check "metis cuts fewer triples than random" \
	test "$(cut p-metis-head)" -lt "$(cut p-random-head)"
jqcheck "vertex-cut balances triples" \
	'.figures.edge_balance < 1.01' p-random-vertex-cut/manifest.json

# Same seed, same bytes.
kg-partition -q -p 4 -e vertex-cut -s 5 -o again ds
same=1
for f in node_part old2new new2old part_offsets edge_part train_buckets bucket_offsets; do
	cmp -s "again/$f.npy" "p-metis-vertex-cut/$f.npy" || same=0
done
check "deterministic for a seed" test "$same" -eq 1
kg-partition -q -p 4 -m random -s 6 -o other ds
if cmp -s other/node_part.npy p-random-head/node_part.npy; then
	notok "another seed, another random cut"
else
	ok "another seed, another random cut"
fi

# One part: the identity relabelling and one bucket holding train.npy.
kg-partition -q -p 1 -o one ds
check "P = 1 checked" "$gen" check ds one
check "P = 1 keeps IDs" cmp -s one/old2new.npy one/new2old.npy
check "P = 1 bucket is the training set" \
	cmp -s <(tail -c 60000 one/train_buckets.npy) <(tail -c 60000 ds/train.npy)

# Statistics on stderr, none under -q.
err=$(kg-partition -p 2 -o stats ds 2>&1 >/dev/null)
check "statistics on stderr" grep -q 'balance (max/mean)' <<<"$err"
check "quiet is quiet" test -z "$(kg-partition -q -p 2 -o quiet ds 2>&1)"

# An existing output needs --force; with it the output is replaced.
expect_fail "existing output refused" 1 "exists" kg-partition -q -p 2 -o stats ds
check "existing output kept" test -f stats/manifest.json
check "--force replaces" kg-partition -q -f -p 3 -o stats ds
jqcheck "replaced output has 3 parts" '.partition_book.nparts == 3' stats/manifest.json
