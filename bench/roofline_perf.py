#!/usr/bin/env python3
"""Where kg-train's step time goes, from `perf script` output (bench/roofline.sh).

Reads the samples of `perf record --call-graph dwarf` as printed by
`perf script -F tid,ip,sym,dso` (inlined frames included) on stdin and
prints one JSON object: per phase of the shallow training step, its share
of the samples taken inside the training loop, and how much of that share
ran inside OpenBLAS.  A sample's phase is decided by the function that
kg_train_chunk (lib/kge/train_chunk.c) called, inlined or not, on the way to
it; samples outside kg_train_chunk are classed by the frames they hold
(deferred row updates, OpenMP threads waiting, the epoch's shuffle).
Samples of setup (argument parsing, loading, the tables' initial values,
writing the model) are counted apart and left out of the shares.
"""
import json
import sys

# The function kg_train_chunk called -> phase.
CHILD = {
    "gather_positives": "gather",
    "candidates": "negatives",
    "pool_to_other": "negatives",
    "mark_skips": "negatives",
    "grouped_backward": "backward",
    "kg_grad_chunk_backward_rows": "backward",
    "kg_grad_pairs_backward_rows": "backward",
    "collect_entity_grads": "scatter",
    "add_ent_grad": "scatter",
    "relation_slots": "scatter",
    "next_stamp": "scatter",
    "defer_chunk": "scatter",
    "sync_chunk": "scatter",
    "update_row": "optimiser",
    "apply_relations": "optimiser",
    "part_of": "optimiser",
    "prefetch_row": "optimiser",
    "kg_adagrad_row": "optimiser",
    "kg_adagrad_elem_row": "optimiser",
    "kg_adam_row": "optimiser",
    "kg_train_optim_row": "optimiser",
    "kg_clip_row": "optimiser",
}
# Inside score_and_loss: the function it called -> phase.
SCORE_CHILD = {
    "kg_grad_chunk_forward_rows": "scores",
    "kg_grad_pairs_forward_rows": "scores",
    "group_queries": "scores",
    "mark_skips": "negatives",
    "relation_slots": "scatter",
    "next_stamp": "scatter",
    "kg_regularise": "regulariser",
    "kg_grad_dura": "regulariser",
    "kg_train_relpred": "relation prediction",
}
SETUP = ("kg_trainer_init", "kg_init_fill", "kg_store_init_rows",
         "write_model", "kg_ingest", "main_setup", "_dl_start",
         "_dl_init", "kg_model_write", "kg_train_save")
PHASES = ["gather", "negatives", "scores", "loss", "backward", "scatter",
          "optimiser", "regulariser", "relation prediction",
          "epoch shuffle", "threads waiting", "other"]


def phase(frames):
    """frames: [(sym, dso)], leaf first."""
    syms = [s for s, _ in frames]
    if any(s.startswith(SETUP) for s in syms):
        return "setup"
    if "kg_train_chunk" in syms:
        k = syms.index("kg_train_chunk")
        if k == 0:
            return "other"
        child = syms[k - 1]
        if child == "score_and_loss":
            if k - 1 == 0:
                return "loss"  # the gradient's scaling loop, inlined
            inner = syms[k - 2]
            if inner in SCORE_CHILD:
                return SCORE_CHILD[inner]
            if "memset" in inner:
                return "backward"  # zeroing the gradient rows
            return "loss"
        if "memset" in child or "memmove" in child or "memcpy" in child:
            return "scatter"  # copies made in kg_train_chunk's own body
        return CHILD.get(child, "other")
    if "kg_train_defer_apply" in syms or "kg_trainer_apply" in syms:
        return "optimiser"
    if any(s.startswith("kg_neg_pool") for s in syms):
        return "negatives"
    if "kg_train_epoch_positives" in syms:
        return "epoch shuffle"
    if any("sched_yield" in s or s.startswith(("gomp_", "GOMP_"))
           for s in syms[:6]) or (syms and all(
               "libgomp" in d or "kernel" in d or "libc" in d or "[" in d
               for _, d in frames[:3])):
        return "threads waiting"
    return "other"


def samples(lines):
    frames = []
    for line in lines:
        if not line.strip():
            if frames:
                yield frames
            frames = []
            continue
        if not line.startswith(("\t", " ")):
            continue  # the sample's header (its thread)
        parts = line.split(None, 1)
        if len(parts) < 2:
            continue
        rest = parts[1]
        sym, _, dso = rest.rpartition(" (")
        frames.append((sym.strip(), dso.rstrip(")\n")))
    if frames:
        yield frames


def main():
    counts = {p: 0 for p in PHASES}
    blas = {p: 0 for p in PHASES}
    setup = total = 0
    for fr in samples(sys.stdin):
        total += 1
        p = phase(fr)
        if p == "setup":
            setup += 1
            continue
        counts[p] += 1
        if "openblas" in fr[0][1]:
            blas[p] += 1
    loop = sum(counts.values())
    out = {
        "samples": total, "setup_samples": setup, "loop_samples": loop,
        "share": {p: round(counts[p] / loop, 4) if loop else None
                  for p in PHASES},
        "share_in_openblas": {p: round(blas[p] / loop, 4) if loop else None
                              for p in PHASES},
    }
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
