# bench/peers.sh's PyTorch Geometric driver (not a test): the setting of
# PyG's examples/rgcn_link_pred.py (R-GCN of Schlichtkrull et al. on
# FB15k-237, full batch on CPU) written against the installed package,
# with the splits read from DATA instead of RelLinkPredDataset's download.
#
#   python peers_pyg.py DATA EPOCHS THREADS OWN_EVAL_TRIPLES OUTDIR
#
# The setting: learned entity rows of 500, two RGCNConv layers 500 -> 500
# with 5 diagonal blocks over 2 x 237 relations (train edges and their
# inverses for message passing), ReLU and dropout 0.2 between them, a
# DistMult decoder over the 237 relations, one full-batch Adam (lr 0.01)
# step an epoch over all training triples against one corrupted head or
# tail per positive, binary cross-entropy plus 1e-2 (mean z^2 + mean
# rel^2), gradient norm clipped at 1.  Entity ids: the sorted names of all
# three splits, so that every test triple can be ranked.
#
# Writes OUTDIR/run.json (train seconds, per-epoch seconds), E.npy (the
# encoder's output rows), R.npy (the decoder's relation rows), emap.tsv
# and rmap.tsv for kg-eval --model DistMult.  The example's own evaluation
# (one Python loop per test triple, filtered, ties averaged) runs on the
# first OWN_EVAL_TRIPLES test triples only (0: none): on all 20,466 it
# takes far longer than the training compared here.
import gzip
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def read(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f]


def main():
    data, epochs, threads, own_n, out = sys.argv[1:6]
    epochs, threads, own_n = int(epochs), int(threads), int(own_n)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    import torch_geometric
    from torch.nn import Parameter
    from torch_geometric.nn import GAE, RGCNConv

    splits = {s: read(f"{data}/{s}.txt.gz") for s in ("train", "valid", "test")}
    ents = sorted({x for t in splits.values() for h, _, tl in t for x in (h, tl)})
    rels = sorted({r for t in splits.values() for _, r, _ in t})
    e2id = {n: i for i, n in enumerate(ents)}
    r2id = {n: i for i, n in enumerate(rels)}
    n_ent, n_rel = len(ents), len(rels)

    def tensors(t):
        ei = torch.tensor([[e2id[h] for h, _, _ in t], [e2id[x] for _, _, x in t]])
        et = torch.tensor([r2id[r] for _, r, _ in t])
        return ei, et

    tr_ei, tr_et = tensors(splits["train"])
    va_ei, va_et = tensors(splits["valid"])
    te_ei, te_et = tensors(splits["test"])
    mp_ei = torch.cat([tr_ei, tr_ei.flip(0)], dim=1)
    mp_et = torch.cat([tr_et, tr_et + n_rel])

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.node_emb = Parameter(torch.empty(n_ent, 500))
            self.conv1 = RGCNConv(500, 500, 2 * n_rel, num_blocks=5)
            self.conv2 = RGCNConv(500, 500, 2 * n_rel, num_blocks=5)
            torch.nn.init.xavier_uniform_(self.node_emb)
            self.conv1.reset_parameters()
            self.conv2.reset_parameters()

        def forward(self, ei, et):
            x = self.conv1(self.node_emb, ei, et).relu_()
            x = F.dropout(x, p=0.2, training=self.training)
            return self.conv2(x, ei, et)

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rel_emb = Parameter(torch.empty(n_rel, 500))
            torch.nn.init.xavier_uniform_(self.rel_emb)

        def forward(self, z, ei, et):
            return (z[ei[0]] * self.rel_emb[et] * z[ei[1]]).sum(dim=1)

    model = GAE(Encoder(), Decoder())
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def corrupt(ei):
        m = torch.rand(ei.size(1)) < 0.5
        neg = ei.clone()
        neg[0, m] = torch.randint(n_ent, (int(m.sum()),))
        neg[1, ~m] = torch.randint(n_ent, (int((~m).sum()),))
        return neg

    per_epoch = []
    t0 = time.perf_counter()
    for _ in range(epochs):
        e0 = time.perf_counter()
        model.train()
        opt.zero_grad()
        z = model.encode(mp_ei, mp_et)
        pos = model.decode(z, tr_ei, tr_et)
        neg = model.decode(z, corrupt(tr_ei), tr_et)
        out_ = torch.cat([pos, neg])
        gt = torch.cat([torch.ones_like(pos), torch.zeros_like(neg)])
        loss = (F.binary_cross_entropy_with_logits(out_, gt) + 1e-2 *
                (z.pow(2).mean() + model.decoder.rel_emb.pow(2).mean()))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        per_epoch.append(time.perf_counter() - e0)
    train_s = time.perf_counter() - t0

    model.eval()
    with torch.no_grad():
        z = model.encode(mp_ei, mp_et)
    np.save(f"{out}/E.npy", z.numpy().astype(np.float32))
    np.save(f"{out}/R.npy",
            model.decoder.rel_emb.detach().numpy().astype(np.float32))
    for name, ids in (("emap", ents), ("rmap", rels)):
        with open(f"{out}/{name}.tsv", "w", encoding="utf-8") as f:
            for i, n in enumerate(ids):
                f.write(f"{i}\t{n}\n")

    # The example's evaluation, on the first own_n test triples.
    known = [(tr_ei, tr_et), (va_ei, va_et), (te_ei, te_et)]

    def rank(scores):
        true = scores[0]
        return ((scores > true).sum() + 1 + (scores >= true).sum()).float() / 2

    ranks = []
    e0 = time.perf_counter()
    with torch.no_grad():
        for i in range(min(own_n, te_et.numel())):
            (s, d), r = te_ei[:, i], te_et[i]
            tail_mask = torch.ones(n_ent, dtype=torch.bool)
            head_mask = torch.ones(n_ent, dtype=torch.bool)
            for (hs, ts), ty in known:
                tail_mask[ts[(hs == s) & (ty == r)]] = False
                head_mask[hs[(ts == d) & (ty == r)]] = False
            cand = torch.cat([d.view(1), torch.arange(n_ent)[tail_mask]])
            ei = torch.stack([torch.full_like(cand, int(s)), cand])
            ranks.append(rank(model.decode(z, ei, torch.full_like(cand, int(r)))))
            cand = torch.cat([s.view(1), torch.arange(n_ent)[head_mask]])
            ei = torch.stack([cand, torch.full_like(cand, int(d))])
            ranks.append(rank(model.decode(z, ei, torch.full_like(cand, int(r)))))
    own_s = time.perf_counter() - e0
    run = {
        "torch_geometric_version": torch_geometric.__version__,
        "torch_version": torch.__version__,
        "epochs": epochs, "train_seconds": train_s,
        "epoch_seconds": per_epoch, "positives": tr_et.numel(),
        "final_loss": float(loss),
        "own_eval_triples": len(ranks) // 2,
        "own_eval_seconds": own_s,
        "mrr_own_prefix": (float((1.0 / torch.tensor(ranks)).mean())
                           if ranks else None),
    }
    with open(f"{out}/run.json", "w") as f:
        json.dump(run, f)


if __name__ == "__main__":
    main()
