# bench/gpu.sh --dry-run: the GPU benchmark's stages without a GPU, the
# device runs on the CPU backend through the test hooks (KG_TRAIN_SEAM,
# KG_EVAL_SEAM), at tiny sizes: the 10x-budget partition buffer on
# FB15k-237 (when the shared data is there) and the R-GCN epoch on a
# 2000-node generated graph.  gpu.json must say it is a dry run, carry
# each figure with its wall time, and the script must never write into
# bench/results/.
. "$KG_TOP/tests/cli/lib.sh"
plan 9
command -v python3 >/dev/null || skip_all "bench/gpu.sh: python3 is not installed"
[ -x "$KG_BUILD/aux/kg_gen_enterprise" ] ||
    skip_all "bench/gpu.sh: $KG_BUILD/aux/kg_gen_enterprise is not built"
fb=$(shared_data fb15k-237)
stages=rgcn
[ -n "$fb" ] && stages="gpubuf rgcn"
# jget EXPR: a Python expression over gpu.json's object j, printed.
jget() {
	python3 -c 'import json, sys
j = json.load(open("out/gpu.json"))
print(eval(sys.argv[1]))' "$1"
}
export KG_GPU_BIN=$KG_BIN KG_GPU_AUX=$KG_BUILD/aux KG_GPU_OUT=$PWD/out \
    KG_GPU_WORK=$PWD/work KG_GPU_DATA=${KG_SHARED_DATA:-$PWD/nodata} \
    KG_GPU_BUF_DIM=8 KG_GPU_RGCN_NODES=2000 KG_GPU_RGCN_BATCHES=2 \
    KG_GPU_RGCN_NEG=5
check "the dry run runs" env KG_GPU_STAGES="$stages" \
    bash "$KG_TOP/bench/gpu.sh" --dry-run
check "gpu.json says it is a dry run on the CPU backend" test \
    "$(jget '[j["device"], j["dry_run"], j["driver"]]')" = \
    "['cpu-seam (dry run)', True, 'none (dry run)']"
check "every run has its wall time" test \
    "$(jget 'all(isinstance(r.get("wall_seconds"), float) or r["run"] in ("graph", "skipped") for r in j["runs"])')" = True
if [ -n "$fb" ]; then
	# 40 partitions, the budget 4 of them: C=3 and a tenth of the table.
	check "the partition buffer's table is 10x the budget, C=3" test \
	    "$(jget '[(r["table_over_budget"], r["gpu_buffer_capacity"], r["nparts"]) for r in j["runs"] if r["run"] == "buffer"]')" = \
	    "[(10.0, 3, 40)]"
	check "its swaps within 1.1x of the order's lower bound" test \
	    "$(jget '0 < j["figures"]["gpubuf"]["swaps_over_bound"] <= 1.1')" = True
else
	skip_section 2 "bench/gpu.sh gpubuf: no FB15k-237 in the shared data"
fi
check "R-GCN: both epochs timed, the same AUC on the CPU backend" test \
    "$(jget '(lambda r: [r["nodes"], r["gpu_seconds_per_epoch"] > 0, r["cpu_seconds_per_epoch"] > 0, r["auc_difference"] < 1e-4])(j["figures"]["rgcn"])')" = \
    "[2000, True, True, True]"

# Past the deadline every stage is skipped with its reason, and gpu.json
# is written all the same.
rm -rf out
check "KG_GPU_DEADLINE=0 skips every stage" env KG_GPU_DEADLINE=0 \
    KG_GPU_STAGES="gpubuf rgcn" bash "$KG_TOP/bench/gpu.sh" --dry-run
check "and gpu.json says why" test "$(jget '[(r["stage"], r["reason"][:9]) for r in j["runs"]]')" = \
    "[('gpubuf', 'deadline:'), ('rgcn', 'deadline:')]"

# Never into bench/results/: a copy of the script in a scratch tree,
# pointed at that tree's bench/results.
mkdir -p tree/bench/results
cp "$KG_TOP/bench/gpu.sh" tree/bench/
expect_fail "output into bench/results/ is refused, nothing written" 2 \
    "^bench/gpu.sh: will not write into bench/results/" \
    sh -c 'KG_GPU_OUT=tree/bench/results bash tree/bench/gpu.sh --dry-run &&
    exit 0; rc=$?; test -z "$(ls -A tree/bench/results)" || exit 9; exit $rc'
