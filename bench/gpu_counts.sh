#!/usr/bin/env bash
# The device trainer's launches, copies, host syncs and event waits per
# chunk and per step (backend.h's counters) at DGL-KE's FB15k TransE_l2
# setting (d 400, batch 1000, 200 negatives shared by chunks of 200,
# self-adversarial, N3 1e-9), read on the CPU backend, which counts what
# the CUDA backend makes for the same calls: tests/gpu/gpu_train.c's
# dglke_step_counts with KG_GPU_DEVICE=cpu (the device trainer on UMLS, whose size changes
# no count; on a GPU the same case checks that the GPU's counts are
# these).  Writes bench/results/gpu_counts.json (KG_GPU_COUNTS_OUT
# elsewhere); a second or two.
#
# Usage: bench/gpu_counts.sh [BUILD_DIR]    (default build; make first)
set -u
cd "$(dirname "$0")/.." || exit 1
build=${1:-build}
out=${KG_GPU_COUNTS_OUT:-bench/results/gpu_counts.json}
prog=$build/gpu/gpu_train
[ -x "$prog" ] || { echo "bench/gpu_counts.sh: no $prog: run make first" >&2; exit 1; }
log=$(KG_TOP=$PWD KG_GPU_DEVICE=cpu "$prog" 2>&1) || {
	printf '%s\n' "$log" >&2
	echo "bench/gpu_counts.sh: $prog failed" >&2
	exit 1
}
line=$(printf '%s\n' "$log" | grep '^# counts ') ||
    { echo "bench/gpu_counts.sh: no '# counts' line from $prog" >&2; exit 1; }
python3 - "$line" "$out" "$(git rev-parse HEAD 2>/dev/null || echo unknown)" <<'PY'
import json, os, re, sys, datetime
line, out, commit = sys.argv[1:]
num = r"([0-9.]+)"
m = re.search(r"per step launches (\d+) copies (\d+) syncs (\d+) waits (\d+); "
              r"per chunk launches %s copies %s syncs %s waits %s; an epoch of 1 "
              r"step launches (\d+) copies (\d+) syncs (\d+) waits (\d+)"
              % (num, num, num, num), line)
if not m:
    sys.exit("bench/gpu_counts.sh: cannot read: " + line)
v = [float(x) for x in m.groups()]
keys = ("launches", "copies", "syncs", "waits")
step = dict(zip(keys, map(int, v[0:4])))
chunk = dict(zip(keys, v[4:8]))
ep = dict(zip(keys, map(int, v[8:12])))
# The record this one replaces keeps its "before" (the counts of the
# step before it streamed, measured the same way at the commit it names).
before = None
try:
    with open(out) as f:
        before = json.load(f).get("before")
except (OSError, ValueError):
    pass
j = {
    "benchmark": "gpu_counts",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "commit": commit,
    "how": "tests/gpu/gpu_train.c dglke_step_counts with KG_GPU_DEVICE=cpu: the device "
           "trainer (lib/kge/train_device.c) on the CPU backend, whose counters count the "
           "launches the CUDA backend makes for the same calls (backend.h); a step is the "
           "difference of epochs of 2 and 1 steps, a chunk a fifth of a step; syncs: the "
           "host waits for all the device's work, waits: for an event (the copy of the "
           "index batch two chunks back)",
    "setting": {"model": "TransE_l2", "dim": 400, "batch_size": 1000,
                "neg_sample_size": 200, "chunk_size": 200, "adversarial": True,
                "regulariser": "N3 1e-9", "chunks_per_step": 5,
                "data": "UMLS (the counts do not depend on the data set's size)"},
    "per_step": step,
    "per_chunk": chunk,
    "epoch_of_one_step": ep,
    "epoch_overhead": {k: ep[k] - step[k] for k in step},
    "per_chunk_calls": {
        "copies": ["kg_be_upload_ordered of the index batch (cudaMemcpyAsync from pinned "
                   "memory on the compute stream, no host wait), then an event recorded"],
        "waits": ["kg_be_event_wait on the event of the other host batch, recorded after "
                  "its copy two chunks back, before the host refills it"],
        "launches": ["gather_sets (entity rows, the pool's rows, relation rows)",
                     "query", "pairs", "chunk (tiled L2)",
                     "loss_sum (the loss, its per-block sum into the epoch's sum, the "
                     "1 / chunk scaling of both gradients)",
                     "zero (every gradient buffer: one allocation)",
                     "regularise_sets (N3 over fixed rows, relations and positives, "
                     "per-block sums)",
                     "chunk_backward (one tiled launch, both sides)",
                     "query_backward x2 (one launch each, both gradients)",
                     "pairs_backward",
                     "scatter_add_sets (entity rows' and relation rows' sums)",
                     "adagrad x2 (entities, relations)"]},
    "per_epoch_blocking": ["kg_be_download of the loss sum (the epoch's one sync); its "
                           "zero is a kg_be_zero launch"],
}
if before is not None:
    j["before"] = before
with open(out + ".tmp", "w") as f:
    json.dump(j, f, indent=1)
    f.write("\n")
os.replace(out + ".tmp", out)
print("bench/gpu_counts.sh: per chunk %(launches).1f launches, %(copies).1f copies, "
      "%(syncs).1f host syncs, %(waits).1f event waits" % chunk, "->", out)
PY
