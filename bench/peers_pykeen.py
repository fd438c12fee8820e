# bench/peers.sh's PyKEEN driver (not a test): one pipeline() run on the
# FB15k-237 splits, then the model's arrays exported for kg-eval.
#
#   python peers_pykeen.py DATA MODEL EPOCHS NEGS BATCH LR THREADS OUTDIR
#
# DATA holds {train,valid,test}.txt.gz; the entity and relation ids are
# taken from all three splits (FB15k-237's test split has entities that
# train lacks, and PyKEEN would drop their triples with train's ids), so
# every test triple is ranked against all entities.  Writes OUTDIR/run.json
# (seconds, PyKEEN's own filtered MRR with realistic ties), E.npy, R.npy,
# emap.tsv and rmap.tsv in kgpipe's row layouts where kg-eval can score
# them (ComplEx as [re | im]).  PyKEEN's evaluator scores
# KG_PEERS_PYKEEN_EVAL_BATCH (512) test triples a batch: at 32 it took
# 291-581 s of a 900 s cap on a loaded machine; RotatE's arrays are not exported (PyKEEN's
# RotatE distance is the L2 norm of h o r - t, kgpipe's the sum of the
# complex moduli, as DGL-KE's).
import gzip
import json
import os
import sys
import time

import numpy as np
import torch


def read(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


def main():
    data, model, epochs, negs, batch, lr, threads, out = sys.argv[1:9]
    epochs, negs, batch, threads = int(epochs), int(negs), int(batch), int(threads)
    torch.set_num_threads(threads)
    import pykeen
    from pykeen.pipeline import pipeline
    from pykeen.triples import TriplesFactory

    splits = {s: read(f"{data}/{s}.txt.gz") for s in ("train", "valid", "test")}
    ents = sorted({x for t in splits.values() for h, _, tl in t for x in (h, tl)})
    rels = sorted({r for t in splits.values() for _, r, _ in t})
    e2id = {n: i for i, n in enumerate(ents)}
    r2id = {n: i for i, n in enumerate(rels)}
    tf = {s: TriplesFactory.from_labeled_triples(
        np.array(t, dtype=str), entity_to_id=e2id, relation_to_id=r2id)
        for s, t in splits.items()}
    distance = model in ("TransE", "RotatE")
    # The self-adversarial loss of RotatE (Sun et al.) for the distance
    # models, the logistic (softplus) loss for the bilinear ones: kgpipe's
    # "logistic" loss with and without neg_adversarial_sampling.
    loss, loss_kwargs = (("NSSA", dict(margin=9.0, adversarial_temperature=1.0))
                         if distance else ("softplus", {}))
    t0 = time.perf_counter()
    res = pipeline(
        training=tf["train"], validation=tf["valid"], testing=tf["test"],
        model=model, model_kwargs=dict(embedding_dim=200),
        training_loop="sLCWA", negative_sampler="basic",
        negative_sampler_kwargs=dict(num_negs_per_pos=negs),
        loss=loss, loss_kwargs=loss_kwargs,
        optimizer="Adagrad", optimizer_kwargs=dict(lr=float(lr)),
        training_kwargs=dict(num_epochs=epochs, batch_size=batch,
                             use_tqdm=False),
        evaluator="rankbased",
        evaluation_kwargs=dict(batch_size=int(os.environ.get("KG_PEERS_PYKEEN_EVAL_BATCH", "512")), use_tqdm=False),
        random_seed=1, device="cpu")
    wall = time.perf_counter() - t0
    m = res.model
    mr = res.metric_results
    run = {
        "pykeen_version": pykeen.get_version(),
        "torch_version": torch.__version__,
        "train_seconds": res.train_seconds,
        "eval_seconds": res.evaluate_seconds,
        "pipeline_seconds": wall,
        "positives": tf["train"].num_triples,
        "entities": len(ents), "relations": len(rels),
        "mrr_own": mr.get_metric("both.realistic.inverse_harmonic_mean_rank"),
        "mrr_own_pessimistic":
            mr.get_metric("both.pessimistic.inverse_harmonic_mean_rank"),
        "hits10_own": mr.get_metric("both.realistic.hits_at_10"),
        "losses": res.losses,
        "model_repr": str(m.interaction),
        "settings": dict(model=model, embedding_dim=200, training_loop="sLCWA",
                         negative_sampler="basic", num_negs_per_pos=negs,
                         loss=loss, loss_kwargs=loss_kwargs,
                         optimizer="Adagrad", lr=float(lr), epochs=epochs,
                         batch_size=batch, threads=threads,
                         eval_batch_size=int(os.environ.get("KG_PEERS_PYKEEN_EVAL_BATCH", "512")),
                         evaluator="RankBasedEvaluator (filtered: train, valid, test)"),
    }
    kg_model = None
    with torch.no_grad():
        e = m.entity_representations[0](indices=None).detach()
        r = m.relation_representations[0](indices=None).detach()
    if model == "TransE":
        p = getattr(m.interaction, "p", None)
        kg_model = {1: "TransE_l1", 2: "TransE_l2"}.get(p)
        run["transe_norm"] = p
    elif model == "DistMult":
        kg_model = "DistMult"
    elif model == "ComplEx":
        kg_model = "ComplEx"
        e = torch.cat([e.real, e.imag], dim=1)
        r = torch.cat([r.real, r.imag], dim=1)
    if kg_model is not None:
        np.save(f"{out}/E.npy", e.float().numpy())
        np.save(f"{out}/R.npy", r.float().numpy())
        for name, ids in (("emap", ents), ("rmap", rels)):
            with open(f"{out}/{name}.tsv", "w", encoding="utf-8") as f:
                for i, n in enumerate(ids):
                    f.write(f"{i}\t{n}\n")
    else:
        run["kg_eval_skipped"] = (
            "PyKEEN's RotatE scores -||h o r - t||_2 (L2 norm of the complex "
            "difference); kgpipe's RotatE gamma - sum |h o r - t|_i (sum of "
            "the complex moduli, as DGL-KE): kg-eval cannot rank these arrays "
            "as PyKEEN trained them")
    run["kg_model"] = kg_model
    with open(f"{out}/run.json", "w") as f:
        json.dump(run, f)


if __name__ == "__main__":
    main()
