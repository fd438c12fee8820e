#!/usr/bin/env bash
# The device trainer's launches, copies and host waits per chunk and per
# step (backend.h's counters) at DGL-KE's FB15k TransE_l2 setting (d 400,
# batch 1000, 200 negatives shared by chunks of 200, self-adversarial,
# N3 1e-9), read on the CPU backend, which counts what the CUDA backend
# makes for the same calls: tests/gpu/gpu_train.c's dglke_step_counts
# with KG_GPU_DEVICE=cpu (the device trainer on UMLS, whose size changes
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
import json, re, sys, datetime
line, out, commit = sys.argv[1:]
num = r"([0-9.]+)"
m = re.search(r"per step launches (\d+) copies (\d+) syncs (\d+); per chunk "
              r"launches %s copies %s syncs %s; an epoch of 1 step launches "
              r"(\d+) copies (\d+) syncs (\d+)" % (num, num, num), line)
if not m:
    sys.exit("bench/gpu_counts.sh: cannot read: " + line)
v = [float(x) for x in m.groups()]
step = dict(zip(("launches", "copies", "syncs"), map(int, v[0:3])))
chunk = dict(zip(("launches", "copies", "syncs"), v[3:6]))
ep = dict(zip(("launches", "copies", "syncs"), map(int, v[6:9])))
j = {
    "benchmark": "gpu_counts",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "commit": commit,
    "how": "tests/gpu/gpu_train.c dglke_step_counts with KG_GPU_DEVICE=cpu: the device "
           "trainer (lib/kge/train_device.c) on the CPU backend, whose counters count the "
           "launches the CUDA backend makes for the same calls (backend.h); a step is the "
           "difference of epochs of 2 and 1 steps, a chunk a fifth of a step",
    "setting": {"model": "TransE_l2", "dim": 400, "batch_size": 1000,
                "neg_sample_size": 200, "chunk_size": 200, "adversarial": True,
                "regulariser": "N3 1e-9", "chunks_per_step": 5,
                "data": "UMLS (the counts do not depend on the data set's size)"},
    "per_step": step,
    "per_chunk": chunk,
    "epoch_of_one_step": ep,
    "epoch_overhead": {k: ep[k] - step[k] for k in step},
    "per_chunk_calls": {
        "blocking": ["kg_be_upload of the index batch (cudaMemcpyAsync on the compute "
                     "stream, then cudaStreamSynchronize: the host waits for the previous "
                     "chunk's whole work before it uploads, and the device idles while the "
                     "host draws the next chunk's negatives and builds its indices)"],
        "launches": ["gather x2 (entity rows, relation rows; the pool's gather is empty "
                     "without partitions)", "query", "pairs", "chunk (tiled L2)", "loss",
                     "dsum", "scale x2", "zero x2 (row and relation gradients)",
                     "regularise x3 (N3: fixed rows, relations, positives)",
                     "chunk_backward (one tiled launch, both sides)",
                     "query_backward x2 (two launches each)", "pairs_backward",
                     "zero + scatter_add (entity rows)", "zero + scatter_add (relation rows)",
                     "adagrad x2 (entities, relations)"]},
    "per_epoch_blocking": ["kg_be_upload of the zero loss sum", "kg_be_download of the loss sum"],
}
with open(out + ".tmp", "w") as f:
    json.dump(j, f, indent=1)
    f.write("\n")
import os
os.replace(out + ".tmp", out)
print("bench/gpu_counts.sh: per step %(launches)d launches, %(copies)d copies, "
      "%(syncs)d host waits" % step, "->", out)
PY
