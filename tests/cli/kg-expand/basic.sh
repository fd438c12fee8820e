# kg-expand on generated graphs: every part read back and checked against
# a brute-force BFS (gen_graph check), fan-out caps, features, P = 1,
# determinism.
source "$KG_TOP/tests/cli/lib.sh"
plan 18
gen=$KG_BUILD/aux/gen_graph

jqcheck() {
	if ! command -v jq >/dev/null; then skip "$1: no jq"; return; fi
	if jq -e "$2" "$3" >/dev/null; then ok "$1"; else notok "$1"; fi
}

"$gen" -n 800 -m 3000 -r 5 -c 8 -l 0.9 -s 4 -o ds || { notok "gen_graph"; exit 1; }
kg-partition -q -p 4 -o parts ds
kg-partition -q -p 3 -m random -e vertex-cut -o vparts ds

for k in 1 2 3; do
	if kg-expand -q -k "$k" -p parts -o "x$k" ds && "$gen" check ds parts "x$k"; then
		ok "k = $k expansion checked"
	else
		notok "k = $k expansion checked"
	fi
done
check "vertex-cut parts, k = 2, checked" \
	bash -c 'kg-expand -q -k 2 -p vparts -o xv ds && "$0" check ds vparts xv' "$gen"
check "four part directories" test -d x1/part-003 -a ! -e x1/part-004
check "each part has its manifest" test -f x2/part-002/manifest.json
jqcheck "replication adds up" \
	'(.figures.nodes_per_part | add) / 800 == .figures.node_replication and (.figures.core_edges_per_part | add) == 3000 and .figures.node_replication >= 1' x2/manifest.json
jqcheck "deeper means more replication" \
	"$(jq .figures.edge_replication x1/manifest.json) < $(jq .figures.edge_replication x2/manifest.json)" x2/manifest.json

# Fan-out caps are seeded and shrink the halo.
kg-expand -q -k 2 -c 4,2 -s 9 -p parts -o c1 ds
kg-expand -q -k 2 -c 4,2 -s 9 -p parts -o c2 ds
check "capped expansion checked" "$gen" check ds parts c1
check "same seed, same parts" diff -r -x manifest.json c1 c2
jqcheck "caps shrink the halo" \
	".figures.edge_replication < $(jq .figures.edge_replication x2/manifest.json)" c1/manifest.json

# Features: every row array and CSR group sliced per part.
"$gen" features feat 800
check "features sliced and checked" \
	bash -c 'kg-expand -q -k 1 -F feat -p parts -o xf ds && "$0" check ds parts xf' "$gen"
check "feature files in each part" \
	test -f xf/part-001/features/dense.npy -a -f xf/part-001/features/tags_indices.npy

# One part: the whole graph in one directory.
kg-partition -q -p 1 -o one ds
kg-expand -q -k 2 -p one -o xone ds
check "P = 1 checked" "$gen" check ds one xone
check "P = 1 keeps every triple" cmp -s <(tail -c 36000 xone/part-000/edges.npy) <(tail -c 36000 ds/train.npy)

err=$(kg-expand -k 1 -p parts -o stats ds 2>&1 >/dev/null)
check "statistics on stderr" grep -q 'replication: entities' <<<"$err"
check "progress per part" bash -c 'kg-expand -q --progress -p parts -o prog ds 2>&1 | grep -q "part 4/4"'

# No training triples at all: every part holds its own entities only.
"$gen" -n 20 -m 0 -o empty
check "empty training set partitioned and expanded" \
	bash -c 'kg-partition -q -p 3 -o ep empty && kg-expand -q -k 2 -p ep -o ex empty && "$0" check empty ep ex' "$gen"
