# bench/peers.sh's PyTorch-BigGraph driver (not a test).
#
#   python peers_pbg.py train CONFIG OUT.json    train on the first edge path
#   python peers_pbg.py eval CONFIG OUT.json     PBG's filtered evaluation
#   python peers_pbg.py export ENTS MODEL VERSION RELATIONS.tsv OUTDIR
#
# The config (written by bench/peers.sh) lists the train, valid and test
# edge paths in that order.  train times the train() call alone; eval runs
# FilteredRankingEvaluator on the test path against all entities with the
# train, valid and test triples filtered (PBG ranks pessimistically:
# 1 + #candidates scoring >= the true one); export writes E.npy, emap.tsv
# and R.npy for kg-eval --model ComplEx --reciprocal: PBG's dynamic
# relations keep one operator per side, the tail side's as relation r and
# the head side's as relation r + n_rel, in RELATIONS.tsv's order.
import json
import sys
import time


def loaded(path):
    import attr
    from torchbiggraph.config import ConfigFileLoader, add_to_sys_path
    from torchbiggraph.util import (SubprocessInitializer,
                                    set_logging_verbosity, setup_logging)
    setup_logging()
    loader = ConfigFileLoader()
    config = loader.load_config(path)
    set_logging_verbosity(config.verbose)
    init = SubprocessInitializer()
    init.register(setup_logging, config.verbose)
    init.register(add_to_sys_path, loader.config_dir.name)
    return attr, config, init


def train(path, out):
    from torchbiggraph.train import train as pbg_train
    attr, config, init = loaded(path)
    config = attr.evolve(config, edge_paths=[config.edge_paths[0]])
    t0 = time.perf_counter()
    pbg_train(config, subprocess_init=init)
    json.dump({"train_seconds": time.perf_counter() - t0}, open(out, "w"))


def own_eval(path, out):
    from torchbiggraph.eval import do_eval_and_report_stats
    from torchbiggraph.filtered_eval import FilteredRankingEvaluator
    attr, config, init = loaded(path)
    train_p, valid_p, test_p = config.edge_paths
    config = attr.evolve(config, edge_paths=[test_p], num_uniform_negs=0,
                         relations=[attr.evolve(r, all_negs=True)
                                    for r in config.relations])
    t0 = time.perf_counter()
    ev = FilteredRankingEvaluator(config, [test_p, valid_p, train_p])
    last = None
    for _, _, stats in do_eval_and_report_stats(config, evaluator=ev,
                                                subprocess_init=init):
        last = stats
    res = dict(last.metrics)
    res["count"] = last.count
    res["seconds"] = time.perf_counter() - t0
    json.dump(res, open(out, "w"))


def export(ents, model, version, relations, outdir):
    import h5py
    import numpy as np
    with h5py.File(f"{model}/embeddings_all_0.v{version}.h5", "r") as f:
        e = np.asarray(f["embeddings"], dtype=np.float32)
    names = json.load(open(f"{ents}/entity_names_all_0.json"))
    assert len(names) == e.shape[0]
    np.save(f"{outdir}/E.npy", e)
    with open(f"{outdir}/emap.tsv", "w") as f:
        for i, n in enumerate(names):
            f.write(f"{i}\t{n}\n")
    with h5py.File(f"{model}/model.v{version}.h5", "r") as hf:
        g = hf["model/relations/0/operator"]
        side = {s: np.concatenate([np.asarray(g[s]["real"]),
                                   np.asarray(g[s]["imag"])], axis=1)
                for s in ("lhs", "rhs")}
    pbg_rel = {n: i for i, n in
               enumerate(json.load(open(f"{ents}/dynamic_rel_names.json")))}
    order = [pbg_rel[line.rstrip("\n").split("\t")[1]]
             for line in open(relations)]
    assert len(order) == len(pbg_rel)
    r = np.concatenate([side["lhs"][order], side["rhs"][order]])
    np.save(f"{outdir}/R.npy", r.astype(np.float32))
    print(json.dumps({"entities": list(e.shape), "relations": list(r.shape)}))


if __name__ == "__main__":  # PBG's pools spawn processes
    cmd = sys.argv[1]
    if cmd == "train":
        train(*sys.argv[2:4])
    elif cmd == "eval":
        own_eval(*sys.argv[2:4])
    elif cmd == "export":
        export(*sys.argv[2:7])
    else:
        sys.exit(f"peers_pbg.py: unknown command {cmd}")
