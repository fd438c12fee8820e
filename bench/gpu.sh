#!/usr/bin/env bash
# Issue 31's figures on a GPU, beside the same machine's CPU cores in the
# same run (a benchmark, not a test).  Runs the kg-* tools carried in
# gpu-carry/ (make gpu-carry here: built with CUDA=1 for sm_90, their
# shared libraries, FB15k and FB15k-237, kg_gen_enterprise) on the lent
# GPU machine, which has no Debian packages, no MPI and no network; the
# tools run as one process each and never call MPI_Init there.  Writes
# gpu.json and gpu.log (every command with its output, status and
# seconds) to $OUT, else bench/work/gpu/; never to bench/results/gpu.json
# itself, which is copied there by hand from a real GPU run.
#
#   device run (through bench/gpu_device.sh, which also builds and runs
#   make test-gpu):  bash bench/gpu_device.sh      carry: ["gpu-carry"]
#   this script alone:  bash bench/gpu.sh          carry: ["gpu-carry"]
#
# Stages, each with its wall time, the GPU run first and the CPU run on
# all the machine's cores ($(nproc)) second, at the same settings:
#  dglke  positives/s at DGL-KE's FB15k TransE_l2 setting
#         (examples/configs/tta/fb15k-transe_l2.json: d=400, batch 1000,
#         200 chunked negatives, self-adversarial), KG_GPU_DGL_STEPS steps
#         of 1000 positives on the GPU (default 10000: 2 s at the target)
#         and KG_GPU_DGL_CPU_STEPS on the CPU (default 2000: 8 s at the 2
#         cores' 248,000/s here); target: 5 million/s on the GPU.
#  pbg    the same at PBG's FB15k-237 setting (examples/configs/
#         pbg_fb15k237.json, as bench/roofline.sh runs it: ComplEx d=400,
#         chunks of 50 sharing 1000 uniform negatives, row-wise Adagrad,
#         softmax) LESS its in-batch negatives, which the device trainer
#         refuses ("in-batch negatives is not supported on a device yet"):
#         both runs take the config with "neg_in_batch": false;
#         KG_GPU_PBG_STEPS (default 5000) and KG_GPU_PBG_CPU_STEPS (1000:
#         20 s at the 2 cores' 50,000/s here).
#  acc    MRR of GPU against CPU at the same settings and seed:
#         FB15k-237 DistMult (examples/configs/tta/fb15k-237-distmult.json)
#         for KG_GPU_ACC_EPOCHS epochs (default 5), both models ranked by
#         the CPU evaluator (filtered, test, all entities); target: within
#         0.005.
#  eval   FB15k-237 filtered test ranking (20,466 triples, both sides, all
#         entities) of the GPU-trained model: kg-eval --device cuda
#         against kg-eval on the CPU cores; wall time of each process
#         (loading and filter index included: the load alone is timed as
#         kg-eval --neg-sample 1 on the CPU, and subtracted in
#         ranking_seconds_estimate); the ranks' MRR must equal the CPU's
#         within rounding; target: 0.1 s of ranking.
#  gpubuf a table 10x larger than --gpu_mem_budget: FB15k-237 in
#         KG_GPU_BUF_PARTS random partitions (default 40) with the budget
#         at a tenth of them (4 partitions: C=3 to train and one to read
#         ahead), KG_GPU_BUF_EPOCHS epochs (default 2) of
#         KG_GPU_BUF_MODEL (default ComplEx d=KG_GPU_BUF_DIM, 200) against
#         the same table whole in GPU memory: positives/s of each, their
#         ratio (target: at least 0.5), the uploads against the BETA
#         order's swaps and lower bound (target: within 1.1x), and MRR.
#  rgcn   the paper-scale R-GCN epoch: kg_gen_enterprise at
#         KG_GPU_RGCN_NODES nodes (default 2,800,000: about 23 million
#         edges, about 25 s to generate and ingest on 2 cores here),
#         examples/configs/rgcn_ray_paper.json (fan-outs 25,10 on blocks,
#         256 batches of 1024) for KG_GPU_RGCN_EPOCHS epochs (default 1)
#         with per-positive negatives (--neg_chunk_size 0: the device step
#         refuses shared ones) on learned embeddings (no --features: the
#         device step reads none), GPU and CPU; seconds per epoch (target:
#         20 s on the GPU) and test AUC (kg-eval --auc, CPU, MRR against
#         KG_GPU_RGCN_NEG sampled candidates, default 100).
# KG_GPU_STAGES (default "dglke pbg acc eval gpubuf rgcn") picks stages;
# KG_GPU_DEADLINE (default 420) is the seconds after which no further
# stage starts (each is skipped with the reason in gpu.json),
# KG_GPU_CMD_TIMEOUT (default 240) bounds each tool's run, and no run goes
# on past KG_GPU_HARD seconds (default the deadline + 120).  gpu.json is
# rewritten after every stage, so a run cut short still leaves what it
# measured.  Estimated on an H200 machine from the 2-core figures here
# (bench/results/{tta,roofline,paper_scale}.json): about 5 minutes.
#
# --dry-run: the same script here, without a GPU: the device runs go
# through the CPU backend (KG_TRAIN_SEAM=cpu, KG_EVAL_SEAM=cpu, the tools'
# test hooks), at tiny sizes (a few steps, 20,000 R-GCN nodes), into
# bench/work/gpu-dry/gpu.json with "device": "cpu-seam (dry run)".  Its
# figures measure nothing about GPUs.
#
# Tools from KG_GPU_BIN (default gpu-carry/bin, else bin/), datasets from
# KG_GPU_DATA (default gpu-carry/data, else ../shared/data), work files
# in KG_GPU_WORK (default a fresh folder under /tmp, removed at the end;
# the 2.8M-node graph's TSVs and dataset are the largest, not measured
# at that size here).
# Exits 1 when a run failed (a tool's nonzero status, or a run stopped
# at KG_GPU_CMD_TIMEOUT or KG_GPU_HARD), after writing gpu.json, whose
# "failed_runs" names each; a stage skipped at the deadline or for want
# of data is recorded with its reason and fails nothing.  The carried
# library path goes on the tools' command lines alone.
# Needs bash, python3 (for the JSON), nvidia-smi on a GPU; no jq.
set -u
# Paths given in the environment are taken from where it was started.
abs() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
for v in KG_GPU_CARRY KG_GPU_BIN KG_GPU_AUX KG_GPU_DATA KG_GPU_OUT KG_GPU_WORK OUT; do
	eval "[ -n \"\${$v:-}\" ] && $v=\$(abs \"\$$v\")"
done
cd "$(dirname "$0")/.." || exit 1
top=$PWD
dry=0
case "${1:-}" in
--dry-run) dry=1 ;;
"") ;;
*) echo "usage: bench/gpu.sh [--dry-run]" >&2; exit 2 ;;
esac
die() { echo "bench/gpu.sh: $*" >&2; exit 1; }
carry=${KG_GPU_CARRY:-$top/gpu-carry}
rt=
if [ -n "${KG_GPU_BIN:-}" ]; then
	bin=$KG_GPU_BIN aux=${KG_GPU_AUX:-$KG_GPU_BIN/../aux}
elif [ -f "$carry/runtime.tar.xz" ]; then
	rt=$(bash "$top/bench/gpu_carry.sh" --unpack "$carry") ||
	    die "cannot unpack $carry/runtime.tar.xz"
	bin=$rt/bin aux=$rt/aux
else
	bin=$top/bin aux=$top/build/aux
fi
if [ -z "${KG_GPU_DATA:-}" ]; then
	if [ -d "$carry/data" ]; then data=$carry/data
	else data=$top/../shared/data
	fi
else
	data=$KG_GPU_DATA
fi
if [ $dry -eq 1 ]; then
	out=${KG_GPU_OUT:-$top/bench/work/gpu-dry}
else
	out=${KG_GPU_OUT:-${OUT:-$top/bench/work/gpu}}
fi
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
if [ "$out" -ef "$top/bench/results" ]; then
	echo "bench/gpu.sh: will not write into bench/results/ (copy a real GPU run's gpu.json there by hand)" >&2
	exit 2
fi
threads=$(nproc)
stages=${KG_GPU_STAGES:-dglke pbg acc eval gpubuf rgcn}
deadline=${KG_GPU_DEADLINE:-420}
cmd_timeout=${KG_GPU_CMD_TIMEOUT:-240}
hard=${KG_GPU_HARD:-$((deadline + 120))}
if [ $dry -eq 1 ]; then
	dgl_steps=${KG_GPU_DGL_STEPS:-20} dgl_cpu_steps=${KG_GPU_DGL_CPU_STEPS:-20}
	pbg_steps=${KG_GPU_PBG_STEPS:-10} pbg_cpu_steps=${KG_GPU_PBG_CPU_STEPS:-10}
	acc_epochs=${KG_GPU_ACC_EPOCHS:-1} acc_dim=${KG_GPU_ACC_DIM:-32}
	buf_parts=${KG_GPU_BUF_PARTS:-40} buf_epochs=${KG_GPU_BUF_EPOCHS:-1}
	buf_dim=${KG_GPU_BUF_DIM:-16}
	rgcn_nodes=${KG_GPU_RGCN_NODES:-20000} rgcn_epochs=${KG_GPU_RGCN_EPOCHS:-1}
	rgcn_batches=${KG_GPU_RGCN_BATCHES:-4} rgcn_neg=${KG_GPU_RGCN_NEG:-10}
else
	dgl_steps=${KG_GPU_DGL_STEPS:-10000} dgl_cpu_steps=${KG_GPU_DGL_CPU_STEPS:-2000}
	pbg_steps=${KG_GPU_PBG_STEPS:-5000} pbg_cpu_steps=${KG_GPU_PBG_CPU_STEPS:-1000}
	acc_epochs=${KG_GPU_ACC_EPOCHS:-5} acc_dim=${KG_GPU_ACC_DIM:-}
	buf_parts=${KG_GPU_BUF_PARTS:-40} buf_epochs=${KG_GPU_BUF_EPOCHS:-2}
	buf_dim=${KG_GPU_BUF_DIM:-200}
	rgcn_nodes=${KG_GPU_RGCN_NODES:-2800000} rgcn_epochs=${KG_GPU_RGCN_EPOCHS:-1}
	rgcn_batches=${KG_GPU_RGCN_BATCHES:-} rgcn_neg=${KG_GPU_RGCN_NEG:-100}
fi
buf_model=${KG_GPU_BUF_MODEL:-ComplEx}
command -v python3 >/dev/null || die "needs python3"
for t in kg-ingest kg-train kg-eval kg-partition; do
	[ -x "$bin/$t" ] || die "no $bin/$t: run make gpu-carry (or make) first"
done

# The carried libraries first; cuBLAS (dlopened by the CUDA backend) from
# the toolkit or PyTorch's nvidia-cublas wheel.  On the tools' command
# lines alone (tool, below), never exported: the lent machine's python3
# and the rest keep their own libraries.
nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)
cuda_lib=
[ -n "$nvcc" ] && cuda_lib=$(cd "$(dirname "$nvcc")/../lib64" 2>/dev/null && pwd)
pycublas=$(python3 -c 'import glob, os, nvidia
print(next((os.path.dirname(f) for p in nvidia.__path__ for f in sorted(glob.glob(
    os.path.join(p, "**", "libcublas.so.*"), recursive=True))), ""))' 2>/dev/null || true)
kglib=${rt:+$rt/lib:}${LD_LIBRARY_PATH:-}${cuda_lib:+:$cuda_lib}${pycublas:+:$pycublas}
tool="env LD_LIBRARY_PATH=$kglib"
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
cublas=none
for d in $(echo "$kglib" | tr : ' ') /usr/local/cuda/lib64; do
	for f in "$d"/libcublas.so.[0-9]*; do
		[ -e "$f" ] && { cublas=$f; break 2; }
	done
done
unset OMP_NUM_THREADS

# The device the "GPU" runs take: --device cuda, or the CPU backend
# through the test hooks in a dry run.
if [ $dry -eq 1 ]; then
	devenv="env KG_TRAIN_SEAM=cpu KG_EVAL_SEAM=cpu" devopt=
	device_name="cpu-seam (dry run)" driver="none (dry run)"
else
	devenv=env devopt="--device cuda"
	command -v nvidia-smi >/dev/null || die "no nvidia-smi: no GPU here (bench/gpu.sh --dry-run runs without one)"
	q=$(nvidia-smi --query-gpu=name,driver_version,memory.total \
	    --format=csv,noheader 2>&1 | head -1)
	case "$q" in *,*) ;; *) die "nvidia-smi: $q" ;; esac
	device_name=$(echo "$q" | cut -d, -f1 | sed 's/^ *//')
	driver=$(echo "$q" | cut -d, -f2 | sed 's/^ *//')
	gpu_mem=$(echo "$q" | cut -d, -f3 | sed 's/^ *//')
fi
commit=unknown dirty=
if [ -n "$rt" ]; then
	commit=$(awk '$1 == "commit" { print $2 }' "$carry/BUILD_INFO")
	dirty=$(awk '$1 == "dirty" { print ($2 ? "true" : "false") }' "$carry/BUILD_INFO")
elif c=$(git rev-parse HEAD 2>/dev/null); then
	commit=$c
fi

# A folder of our own, removed at the end (KG_GPU_KEEP=1 keeps it); a
# KG_GPU_WORK given is used and left as it is.
if [ -n "${KG_GPU_WORK:-}" ]; then
	work=$KG_GPU_WORK
	mkdir -p "$work" || exit 1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/kg-gpu.XXXXXX") || exit 1
	[ -z "${KG_GPU_KEEP:-}" ] && trap 'rm -rf "$work"' EXIT
fi
work=$(cd "$work" && pwd)
cd "$work" || exit 1
runs=$work/runs.jsonl glog=$out/gpu.log
: >"$runs"
: >"$glog"
: >failed.txt
t0=$(date +%s.%N) t0s=$(date +%s)
since() { python3 -c "import sys; print(round($(date +%s.%N) - float(sys.argv[1]), 3))" "$1"; }
log() { echo "bench/gpu.sh: $*" >&2; echo "bench/gpu.sh: $*" >>"$glog"; }

# The JSON: one line per run in gpu.runs.jsonl, assembled into gpu.json.
cat >j.py <<'PY'
import json, os, sys

def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except Exception:
        return None

def rec(argv):
    # rec STAGE NAME key=value... (manifest=, eval=: files to read)
    r = {"stage": argv[0], "run": argv[1]}
    for kv in argv[2:]:
        k, v = kv.split("=", 1)
        if k == "manifest":
            m = load(v) or {}
            f, c = m.get("figures", {}), m.get("config", {})
            for a in ("triples_per_second", "train_seconds", "steps",
                      "seconds_per_epoch", "backend", "device", "trainer",
                      "swaps", "order_swaps", "swaps_lower_bound",
                      "gpu_fills", "nparts", "gpu_buffer_capacity",
                      "partition_bytes", "mean_step_seconds"):
                if a in f:
                    r[a if a != "triples_per_second" else
                      "positives_per_second"] = f[a]
            for a in ("device", "backend"):
                if a in m and a not in r:
                    r[a] = m[a]
            r["config"] = {a: c.get(a) for a in (
                "model", "encoder", "fanout", "dim", "batch_size", "neg_sample_size",
                "neg_chunk_size", "neg_in_batch", "loss", "epochs")
                if a in c}
        elif k == "eval":
            e = load(v) or {}
            b = e.get("metrics", {}).get("both", {})
            if "mrr" in b:
                r["mrr"] = b["mrr"]
            if "auc" in e:
                r["auc"] = e["auc"]
            if "n_triples" in e:
                r["eval_triples"] = e["n_triples"]
        else:
            try:
                r[k] = json.loads(v)
            except ValueError:
                r[k] = v
    print(json.dumps(r))

def final(argv):
    head = json.loads(argv[0])
    runs = [json.loads(l) for l in open(argv[1]) if l.strip()]
    by = {(r["stage"], r["run"]): r for r in runs}
    def g(stage, run, key):
        return by.get((stage, run), {}).get(key)
    def ratio(a, b):
        return round(a / b, 3) if a and b else None
    fig = {}
    for s in ("dglke", "pbg"):
        gp, cp = g(s, "gpu", "positives_per_second"), g(s, "cpu", "positives_per_second")
        if gp or cp:
            fig[s] = {"gpu_positives_per_second": gp,
                      "cpu_positives_per_second": cp,
                      "gpu_over_cpu": ratio(gp, cp)}
    if "dglke" in fig:
        fig["dglke"]["target_positives_per_second"] = 5e6
        fig["dglke"]["meets_target"] = bool(g("dglke", "gpu", "positives_per_second") or 0) and g("dglke", "gpu", "positives_per_second") >= 5e6
    if ("acc", "gpu") in by:
        a, b = g("acc", "gpu", "mrr"), g("acc", "cpu", "mrr")
        fig["acc"] = {"gpu_mrr": a, "cpu_mrr": b,
                      "difference": None if a is None or b is None else round(abs(a - b), 5),
                      "target": 0.005}
    if ("eval", "gpu") in by:
        ge, ce, ld = (g("eval", x, "wall_seconds") for x in ("gpu", "cpu", "load"))
        fig["eval"] = {"gpu_wall_seconds": ge, "cpu_wall_seconds": ce,
                       "load_wall_seconds": ld,
                       "gpu_ranking_seconds_estimate": None if ge is None or ld is None else round(ge - ld, 3),
                       "cpu_ranking_seconds_estimate": None if ce is None or ld is None else round(ce - ld, 3),
                       "gpu_mrr": g("eval", "gpu", "mrr"), "cpu_mrr": g("eval", "cpu", "mrr"),
                       "target_seconds": 0.1}
    if ("gpubuf", "buffer") in by:
        bu, wh = by[("gpubuf", "buffer")], by.get(("gpubuf", "whole"), {})
        fig["gpubuf"] = {
            "table_over_budget": bu.get("table_over_budget"),
            "buffer_positives_per_second": bu.get("positives_per_second"),
            "whole_positives_per_second": wh.get("positives_per_second"),
            "speed_ratio": ratio(bu.get("positives_per_second"), wh.get("positives_per_second")),
            "target_speed_ratio": 0.5,
            "swaps": bu.get("swaps"), "order_swaps": bu.get("order_swaps"),
            "swaps_lower_bound": bu.get("swaps_lower_bound"),
            "swaps_over_bound": ratio(bu.get("swaps"), bu.get("swaps_lower_bound")),
            "target_swaps_over_bound": 1.1,
            "buffer_mrr": bu.get("mrr"), "whole_mrr": wh.get("mrr")}
    if ("rgcn", "gpu") in by or ("rgcn", "cpu") in by:
        fig["rgcn"] = {"nodes": g("rgcn", "graph", "nodes"),
                       "gpu_seconds_per_epoch": g("rgcn", "gpu", "seconds_per_epoch"),
                       "cpu_seconds_per_epoch": g("rgcn", "cpu", "seconds_per_epoch"),
                       "target_gpu_seconds": 20,
                       "gpu_auc": g("rgcn", "gpu", "auc"), "cpu_auc": g("rgcn", "cpu", "auc"),
                       "gpu_mrr_sampled": g("rgcn", "gpu", "mrr"), "cpu_mrr_sampled": g("rgcn", "cpu", "mrr")}
    def within(a, b, t):
        return None if a is None or b is None else abs(a - b) <= t
    def at_most(a, t):
        return None if a is None else a <= t
    if "acc" in fig:
        fig["acc"]["meets_target"] = within(fig["acc"]["gpu_mrr"], fig["acc"]["cpu_mrr"], 0.005)
    if "eval" in fig:
        fig["eval"]["meets_target"] = at_most(fig["eval"]["gpu_ranking_seconds_estimate"], 0.1)
    if "gpubuf" in fig:
        b = fig["gpubuf"]
        b["meets_target"] = None if b["speed_ratio"] is None or b["swaps_over_bound"] is None else (
            b["speed_ratio"] >= 0.5 and b["swaps_over_bound"] <= 1.1)
    if "rgcn" in fig:
        r = fig["rgcn"]
        r["auc_difference"] = None if r["gpu_auc"] is None or r["cpu_auc"] is None else round(abs(r["gpu_auc"] - r["cpu_auc"]), 5)
        r["meets_target"] = None if r["gpu_seconds_per_epoch"] is None or r["auc_difference"] is None else (
            r["gpu_seconds_per_epoch"] <= 20 and r["auc_difference"] <= 0.005)
    head["figures"] = fig
    head["runs"] = runs
    print(json.dumps(head, indent=1))

{"rec": rec, "final": final}[sys.argv[1]](sys.argv[2:])
PY

# run LOG CMD...: the command (a carried tool) under the timeout, with
# the tools' library path, its output to LOG; sets wall to its wall
# seconds; returns its status.  A run that fails is counted in nfailed
# and named in failed.txt (gpu.json's "failed_runs"): the script then
# exits 1.
nfailed=0
run() {
	local lg=$1 s rc to
	shift
	s=$(date +%s.%N)
	to=$((hard - ($(date +%s) - t0s)))
	[ "$to" -gt "$cmd_timeout" ] && to=$cmd_timeout
	echo "+ [${lg%.log}] $*" >>"$glog"
	if [ "$to" -lt 5 ]; then
		echo "  not run: KG_GPU_HARD ($hard s) reached" >>"$glog"
		rc=124
	else
		timeout "$to" $tool "$@" >>"$glog" 2>&1
		rc=$?
	fi
	wall=$(since "$s")
	echo "  [${lg%.log}] status $rc, $wall s" >>"$glog"
	if [ $rc -ne 0 ]; then
		log "${lg%.log}: status $rc: $* (see gpu.log)"
		nfailed=$((nfailed + 1))
		echo "${lg%.log}: status $rc: $*" >>failed.txt
	fi
	return $rc
}
rec() { python3 j.py rec "$@" >>"$runs"; }
skip() { rec "$1" skipped "reason=$2"; log "$1 skipped: $2"; }
write_json() {
	local head
	head=$(python3 -c 'import json, sys; a = sys.argv[1:]
print(json.dumps({"benchmark": "gpu", "device": a[0], "driver": a[1],
    "gpu_memory": a[2] or None, "commit": a[3], "dirty": json.loads(a[4]),
    "dry_run": a[5] == "1", "date": a[6], "cpu": a[7],
    "cpu_threads": int(a[8]), "wall_seconds": float(a[9]),
    "sizes": json.loads(a[10]), "cublas": a[11],
    "failed_runs": [l.rstrip("\n") for l in open("failed.txt")],
    "note": "figures with wall times in runs; GPU runs first, CPU runs on all cores second, same settings" +
        (" -- DRY RUN on the CPU backend through the test hooks: no GPU figure" if a[5] == "1" else "")}))' \
	    "$device_name" "$driver" "${gpu_mem:-}" "$commit" "${dirty:-null}" "$dry" \
	    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')" \
	    "$threads" "$(since "$t0")" "$sizes" "$cublas")
	python3 j.py final "$head" "$runs" >"$out/gpu.json.tmp" &&
	    mv "$out/gpu.json.tmp" "$out/gpu.json"
}
sizes=$(python3 -c 'import json, sys; k = sys.argv[1::2]; v = sys.argv[2::2]
print(json.dumps({a: (int(b) if b.isdigit() else (b or None)) for a, b in zip(k, v)}))' \
    dgl_gpu_steps "$dgl_steps" dgl_cpu_steps "$dgl_cpu_steps" \
    pbg_gpu_steps "$pbg_steps" pbg_cpu_steps "$pbg_cpu_steps" \
    acc_epochs "$acc_epochs" acc_dim "$acc_dim" buf_parts "$buf_parts" \
    buf_epochs "$buf_epochs" buf_dim "$buf_dim" buf_model "$buf_model" \
    rgcn_nodes "$rgcn_nodes" rgcn_epochs "$rgcn_epochs" \
    rgcn_batches "$rgcn_batches" rgcn_neg "$rgcn_neg" deadline "$deadline")
late() {	# STAGE: true (and recorded) when past the deadline
	local el
	el=$(since "$t0")
	if python3 -c "import sys; sys.exit(not float(sys.argv[1]) > float(sys.argv[2]))" "$el" "$deadline"; then
		skip "$1" "deadline: ${el} s of ${deadline} gone"
		return 0
	fi
	return 1
}
ingest() {	# NAME: the dataset NAME from $data, once
	[ -d "$1" ] && return 0
	[ -f "$data/$1/train.txt.gz" ] || { log "no $data/$1"; return 1; }
	run ingest.log "$bin/kg-ingest" -q -o "$1" --train "$data/$1/train.txt.gz" \
	    --valid "$data/$1/valid.txt.gz" --test "$data/$1/test.txt.gz"
}
# train STAGE RUN DATASET MODEL_DIR ARGS...: kg-train on the GPU (RUN gpu,
# or any RUN with DEV=1) or on the CPU cores, recorded.
train() {
	local st=$1 name=$2 ds=$3 m=$4 pre=env dv=
	shift 4
	if [ "$name" = gpu ] || [ "${DEV:-0}" = 1 ]; then pre=$devenv dv=$devopt; fi
	if run "$st.log" $pre "$bin/kg-train" -q --no_checkpoint --force \
	    --num_thread "$threads" $dv "$@" "$ds" "$m"; then
		rec "$st" "$name" "wall_seconds=$wall" "manifest=$m/manifest.json"
	else
		rec "$st" "$name" "wall_seconds=$wall" "failed=true"
		return 1
	fi
}
evaluate() {	# STAGE RUN DATASET MODEL_DIR ARGS...: kg-eval on the CPU cores
	local st=$1 name=$2 ds=$3 m=$4
	shift 4
	run "$st.log" "$bin/kg-eval" -q --threads "$threads" -o "$m.eval.json" \
	    --force "$@" "$ds" "$m" &&
	    rec "$st" "$name-eval" "wall_seconds=$wall" "eval=$m.eval.json"
}

log "device: $device_name; tools: $bin; data: $data; out: $out; work: $work"
for st in $stages; do
	late "$st" && continue
	s0=$(date +%s.%N)
	log "$st"
	case $st in
	dglke)
		ingest fb15k || { skip dglke "no fb15k"; continue; }
		cfg=$top/examples/configs/tta/fb15k-transe_l2.json
		train dglke gpu fb15k m_dgl_gpu --config "$cfg" --max_step "$dgl_steps"
		train dglke cpu fb15k m_dgl_cpu --config "$cfg" --max_step "$dgl_cpu_steps"
		rm -rf m_dgl_gpu m_dgl_cpu ;;
	pbg)
		ingest fb15k-237 || { skip pbg "no fb15k-237"; continue; }
		python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); c["neg_in_batch"] = False
c["_bench_gpu"] = "bench/gpu.sh: neg_in_batch false (the device trainer refuses in-batch negatives)"
json.dump(c, open("pbg.json", "w"), indent=1)' "$top/examples/configs/pbg_fb15k237.json"
		train pbg gpu fb15k-237 m_pbg_gpu --config pbg.json --max_step "$pbg_steps"
		train pbg cpu fb15k-237 m_pbg_cpu --config pbg.json --max_step "$pbg_cpu_steps"
		rm -rf m_pbg_gpu m_pbg_cpu ;;
	acc)
		ingest fb15k-237 || { skip acc "no fb15k-237"; continue; }
		cfg=$top/examples/configs/tta/fb15k-237-distmult.json
		a="--config $cfg --epochs $acc_epochs --seed 1${acc_dim:+ --hidden_dim $acc_dim}"
		train acc gpu fb15k-237 m_acc_gpu $a &&
		    evaluate acc gpu fb15k-237 m_acc_gpu
		train acc cpu fb15k-237 m_acc_cpu $a &&
		    evaluate acc cpu fb15k-237 m_acc_cpu
		# The two models ranked by the CPU evaluator: the MRR pair.
		for x in gpu cpu; do
			python3 - "$runs" "$x" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
e = [r for r in rs if r["stage"] == "acc" and r["run"] == sys.argv[2] + "-eval"]
t = [r for r in rs if r["stage"] == "acc" and r["run"] == sys.argv[2]]
if e and t:
    t[-1]["mrr"] = e[-1].get("mrr")
    with open(sys.argv[1], "w") as f:
        for r in rs:
            f.write(json.dumps(r) + "\n")
PY
		done ;;
	eval)
		ingest fb15k-237 || { skip eval "no fb15k-237"; continue; }
		[ -f m_acc_gpu/manifest.json ] || { skip eval "no model: the acc stage did not train one"; continue; }
		# The load alone (dataset, filter index, model): one sampled
		# candidate per query on the CPU.
		run eval.log "$bin/kg-eval" -q --threads "$threads" --neg-sample 1 \
		    -o ev_load.json --force fb15k-237 m_acc_gpu &&
		    rec eval load "wall_seconds=$wall"
		run eval.log $devenv "$bin/kg-eval" -q --threads "$threads" $devopt \
		    -o ev_gpu.json --force fb15k-237 m_acc_gpu &&
		    rec eval gpu "wall_seconds=$wall" eval=ev_gpu.json
		run eval.log "$bin/kg-eval" -q --threads "$threads" \
		    -o ev_cpu.json --force fb15k-237 m_acc_gpu &&
		    rec eval cpu "wall_seconds=$wall" eval=ev_cpu.json ;;
	gpubuf)
		ingest fb15k-237 || { skip gpubuf "no fb15k-237"; continue; }
		run gpubuf.log "$bin/kg-partition" -q -f -m random -p "$buf_parts" \
		    -s 1 -o parts fb15k-237 || { skip gpubuf "kg-partition failed"; continue; }
		a="--model_name $buf_model --hidden_dim $buf_dim --epochs $buf_epochs --seed 1"
		# The bytes of one partition on the device, from kg-train's own
		# refusal of a budget too small (it writes nothing).
		pb=$($tool $devenv "$bin/kg-train" -q $devopt $a --partitions parts \
		    --gpu_mem_budget 1 fb15k-237 m_probe 2>&1 |
		    sed -n 's/.*holds [0-9]* partitions of \([0-9]*\) bytes.*/\1/p')
		if [ -z "$pb" ]; then
			skip gpubuf "no partition size from kg-train --gpu_mem_budget 1"
			continue
		fi
		budget=$((pb * buf_parts / 10))
		DEV=1 train gpubuf whole fb15k-237 m_whole $a &&
		    evaluate gpubuf whole fb15k-237 m_whole
		DEV=1 train gpubuf buffer fb15k-237 m_buf $a --partitions parts \
		    --gpu_mem_budget "$budget" &&
		    evaluate gpubuf buffer fb15k-237 m_buf
		python3 - "$runs" "$buf_parts" "$pb" "$budget" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
for name in ("whole", "buffer"):
    e = [r for r in rs if r["stage"] == "gpubuf" and r["run"] == name + "-eval"]
    t = [r for r in rs if r["stage"] == "gpubuf" and r["run"] == name]
    if e and t:
        t[-1]["mrr"] = e[-1].get("mrr")
    if t and name == "buffer":
        p, pb, b = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        t[-1].update(gpu_mem_budget=b, table_bytes=p * pb,
                     table_over_budget=round(p * pb / b, 2))
with open(sys.argv[1], "w") as f:
    for r in rs:
        f.write(json.dumps(r) + "\n")
PY
		rm -rf m_whole m_buf parts ;;
	rgcn)
		[ -x "$aux/kg_gen_enterprise" ] || { skip rgcn "no kg_gen_enterprise"; continue; }
		run rgcn.log "$aux/kg_gen_enterprise" -f -o gen -n "$rgcn_nodes" -s 1 &&
		    rec rgcn generate "wall_seconds=$wall" &&
		    run rgcn.log "$bin/kg-ingest" -q -f -o ent --types gen/types.tsv \
		    --train gen/train.tsv --valid gen/valid.tsv --test gen/test.tsv &&
		    rec rgcn ingest "wall_seconds=$wall" ||
		    { skip rgcn "generating or ingesting the graph failed"; continue; }
		rec rgcn graph "nodes=$rgcn_nodes" "edges=$(cat gen/train.tsv gen/valid.tsv gen/test.tsv | wc -l)"
		rm -rf gen
		python3 -c 'import json, sys
c = json.load(open(sys.argv[1])); c.pop("neg_chunk_size", None); c.pop("neg_exchange", None)
c["_bench_gpu"] = "bench/gpu.sh: no neg_chunk_size (per-positive negatives: the device step refuses shared ones) and no neg_exchange (it needs them; one process exchanges nothing)"
json.dump(c, open("rgcn.json", "w"), indent=1)' "$top/examples/configs/rgcn_ray_paper.json"
		a="--config rgcn.json --epochs $rgcn_epochs --seed 1${rgcn_batches:+ --batches_per_epoch $rgcn_batches}"
		for x in gpu cpu; do
			late rgcn-$x && continue
			train rgcn $x ent m_rgcn_$x $a &&
			    evaluate rgcn $x ent m_rgcn_$x --auc --neg-sample "$rgcn_neg" &&
			    python3 - "$runs" "$x" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
e = [r for r in rs if r["stage"] == "rgcn" and r["run"] == sys.argv[2] + "-eval"]
t = [r for r in rs if r["stage"] == "rgcn" and r["run"] == sys.argv[2]]
if e and t:
    t[-1]["auc"], t[-1]["mrr"] = e[-1].get("auc"), e[-1].get("mrr")
with open(sys.argv[1], "w") as f:
    for r in rs:
        f.write(json.dumps(r) + "\n")
PY
			rm -rf m_rgcn_$x
		done ;;
	*)
		skip "$st" "unknown stage" ;;
	esac
	log "$st: $(since "$s0") s"
	write_json
done
write_json
log "wrote $out/gpu.json ($(since "$t0") s)"
if [ $nfailed -gt 0 ]; then
	log "$nfailed run(s) failed:"
	sed 's/^/  /' failed.txt >&2
	exit 1
fi
