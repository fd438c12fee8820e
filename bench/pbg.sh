#!/usr/bin/env bash
# PyTorch-BigGraph (PBG) beside kgpipe on FB15k-237, on this machine (not a
# test).  Issue 15 item 5: "the wall time kgpipe needs to reach the MRR PBG
# reaches after 10 epochs, as a ratio".
#
# PBG side: PBG's own FB15k example setting (torchbiggraph/examples/configs/
# fb15k_config_cpu.py: ComplEx as the complex_diagonal operator with dynamic
# relations, dot comparator, dimension 400 = 200 complex, no global
# embedding, softmax loss, Adagrad lr 0.1, 1000 uniform negatives, N3
# regularisation 1e-3, batch size and in-batch negatives at PBG's defaults
# 1000 and 50), pointed at the FB15k-237 splits, trained on the train split
# only (as PBG's examples/fb15k.py does) for PBG_EPOCHS (10) epochs with 2
# worker processes.  Its embeddings are exported to .npy and ranked by
# kg-eval (filtered, all entities, realistic ties), the protocol of the
# kgpipe runs.  PBG with dynamic relations keeps two operators per
# relation: the tail of (h, r, ?) is scored <h * lhs_r, t'> and the head of
# (?, r, t) as <h', t * rhs_r>, i.e. kgpipe's ComplEx with reciprocal
# relations, relation r = lhs_r and relation r + 237 = rhs_r; the export
# stacks them so and kg-eval runs with --reciprocal.  PBG's own filtered
# evaluation (FilteredRankingEvaluator: all entities as candidates, known
# train/valid/test triples removed, rank = 1 + #candidates scoring >= the
# true one, i.e. pessimistic ties) is also run and recorded as a check
# (PBG_OWN_EVAL=0 skips it).
#
# kgpipe side, in the same invocation: kg-train with
# examples/configs/pbg_fb15k237.json for the same number of epochs, and with
# the tuned time-to-accuracy config (KG_TTA_CONFIG, default
# examples/configs/tta/fb15k-237-complex.json) with --valid_every 1,
# --target_mrr <PBG's test MRR> and --time_budget KG_TTA_BUDGET (600) s;
# the time to PBG's MRR is the cumulative training "seconds" of
# train_log.jsonl up to the first epoch whose valid MRR reaches it.
#
# Needs PBG_SRC: a PyTorch-BigGraph source checkout (github:
# facebookresearch/PyTorch-BigGraph); it is used from the source tree via
# PYTHONPATH (no install; PBG's optional C++ extension is only used by its
# GPU trainer).  Python: PBG_PYTHON (default /usr/bin/python3) with torch,
# h5py, attr, tqdm and numpy; PBG_APT=1 installs Debian's python3-torch
# python3-h5py python3-attr python3-tqdm python3-numpy first.  PBG_COMMIT
# names the checkout's commit when PBG_SRC is not a git work tree (e.g. a
# git archive).  Without PBG_SRC the script says so and exits 0.  Everything runs under nice -n 10
# with 2 threads/workers; the load average is recorded before and after
# every run since the machine may be shared.  Run from the repository root
# with bin/ built; writes bench/results/pbg.json.
set -eu
top=$(pwd)
bin=$top/bin
shared=${KG_SHARED_DATA:-$top/../shared/data}
data=$shared/fb15k-237
out=$top/bench/results/pbg.json
py=${PBG_PYTHON:-/usr/bin/python3}
epochs=${PBG_EPOCHS:-10}
threads=2
budget=${KG_TTA_BUDGET:-600}
tta_cfg=${KG_TTA_CONFIG:-$top/examples/configs/tta/fb15k-237-complex.json}
pbg_cfg=$top/examples/configs/pbg_fb15k237.json
own_eval=${PBG_OWN_EVAL:-1}
me=bench/pbg.sh

if [ -z "${PBG_SRC:-}" ] || [ ! -f "$PBG_SRC/torchbiggraph/train.py" ]; then
	echo "$me: skipped: set PBG_SRC to a PyTorch-BigGraph source checkout" \
	    "(github:facebookresearch/PyTorch-BigGraph)" >&2
	exit 0
fi
if [ "${PBG_APT:-0}" = 1 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-torch \
	    python3-h5py python3-attr python3-tqdm python3-numpy >&2
fi
command -v jq >/dev/null || { echo "$me: needs jq" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "$me: needs /usr/bin/time" >&2; exit 1; }
[ -f "$data/train.txt.gz" ] || { echo "$me: no $data" >&2; exit 1; }
[ -f "$tta_cfg" ] || { echo "$me: no $tta_cfg (KG_TTA_CONFIG)" >&2; exit 1; }
export PYTHONPATH=$PBG_SRC OMP_WAIT_POLICY=passive OMP_NUM_THREADS=$threads
"$py" -c 'import torch, h5py, attr, tqdm, numpy, torchbiggraph.train' || {
	echo "$me: $py cannot import torch, h5py, attr, tqdm, numpy and" \
	    "torchbiggraph from $PBG_SRC (PBG_APT=1 installs the Debian" \
	    "packages)" >&2
	exit 1
}
work=$top/bench/work/pbg.$$
mkdir -p "$work/pbg" "$top/bench/results"
trap 'rm -rf "$work"' EXIT
cd "$work"
load() { cut -d' ' -f1-3 /proc/loadavg | jq -R 'split(" ") | map(tonumber)'; }
log() { echo "$me: $*" >&2; }

pbg_commit=$(git -C "$PBG_SRC" rev-parse HEAD 2>/dev/null || echo "${PBG_COMMIT:-unknown}")
pbg_version=$(cat "$PBG_SRC/torchbiggraph/VERSION.txt")
versions=$("$py" -c 'import sys, torch, h5py, numpy; print(sys.version.split()[0], torch.__version__, h5py.__version__, numpy.__version__)')

# ---- PBG ---------------------------------------------------------------
# PBG_RUN=file: skip the PBG stage and take its run object (the "pbg"
# entry of runs, with at least mrr, train_seconds and wall_seconds) from
# file, e.g. one measured by an earlier invocation; the output says so.
if [ -n "${PBG_RUN:-}" ]; then
	pbg_run=$(jq '. + {reused_from: "PBG_RUN"}' "$PBG_RUN")
	pbg_mrr=$(echo "$pbg_run" | jq -e .mrr)
	"$bin/kg-ingest" -q -o fb --train "$data/train.txt.gz" \
	    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
	log "PBG stage skipped (PBG_RUN=$PBG_RUN), PBG MRR $pbg_mrr"
else
for s in train valid test; do
	gzip -dc "$data/$s.txt.gz" >"pbg/$s.txt"
done
cat >pbg/config.py <<EOF
def get_torchbiggraph_config():
    return dict(
        entity_path="$work/pbg/ents",
        edge_paths=["$work/pbg/train_p", "$work/pbg/valid_p",
                    "$work/pbg/test_p"],
        checkpoint_path="$work/pbg/model",
        entities={"all": {"num_partitions": 1}},
        relations=[{"name": "all_edges", "lhs": "all", "rhs": "all",
                    "operator": "complex_diagonal"}],
        dynamic_relations=True,
        dimension=400,
        global_emb=False,
        comparator="dot",
        num_epochs=$epochs,
        num_uniform_negs=1000,
        loss_fn="softmax",
        lr=0.1,
        regularization_coef=1e-3,
        eval_fraction=0,
        workers=$threads,
    )
EOF
cat >pbg/train.py <<'EOF'
# Train on the first edge path (train) and time the training call alone.
import json, sys, time
import attr
from torchbiggraph.config import ConfigFileLoader, add_to_sys_path
from torchbiggraph.train import train
from torchbiggraph.util import (SubprocessInitializer, set_logging_verbosity,
                                setup_logging)


def main():
    setup_logging()
    loader = ConfigFileLoader()
    config = loader.load_config(sys.argv[1])
    set_logging_verbosity(config.verbose)
    init = SubprocessInitializer()
    init.register(setup_logging, config.verbose)
    init.register(add_to_sys_path, loader.config_dir.name)
    config = attr.evolve(config, edge_paths=[config.edge_paths[0]])
    t0 = time.perf_counter()
    train(config, subprocess_init=init)
    t1 = time.perf_counter()
    json.dump({"train_seconds": t1 - t0}, open(sys.argv[2], "w"))


if __name__ == "__main__":  # PBG's pools spawn processes
    main()
EOF
cat >pbg/own_eval.py <<'EOF'
# PBG's filtered evaluation of the test split against all entities.
import json, sys, time
import attr
from torchbiggraph.config import ConfigFileLoader, add_to_sys_path
from torchbiggraph.eval import do_eval_and_report_stats
from torchbiggraph.filtered_eval import FilteredRankingEvaluator
from torchbiggraph.util import (SubprocessInitializer, set_logging_verbosity,
                                setup_logging)


def main():
    setup_logging()
    loader = ConfigFileLoader()
    config = loader.load_config(sys.argv[1])
    set_logging_verbosity(config.verbose)
    init = SubprocessInitializer()
    init.register(setup_logging, config.verbose)
    init.register(add_to_sys_path, loader.config_dir.name)
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
    json.dump(res, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
EOF
cat >pbg/export.py <<'EOF'
# PBG checkpoint -> kgpipe arrays: entity rows as PBG stores them with a
# row<TAB>name map, and relations in the dataset's relations.tsv order as
# [lhs operators; rhs operators] (ComplEx rows [re | im], reciprocal).
import json, sys
import h5py, numpy as np

ents, model, version, ds, outdir = sys.argv[1:6]
with h5py.File(f"{model}/embeddings_all_0.v{version}.h5", "r") as f:
    e = np.asarray(f["embeddings"], dtype=np.float32)
names = json.load(open(f"{ents}/entity_names_all_0.json"))
assert len(names) == e.shape[0]
np.save(f"{outdir}/E.npy", e)
with open(f"{outdir}/emap.tsv", "w") as f:
    for i, n in enumerate(names):
        f.write(f"{i}\t{n}\n")
g = h5py.File(f"{model}/model.v{version}.h5", "r")["model/relations/0/operator"]
side = {s: np.concatenate([np.asarray(g[s]["real"]), np.asarray(g[s]["imag"])],
                          axis=1) for s in ("lhs", "rhs")}
pbg_rel = {n: i for i, n in enumerate(json.load(open(f"{ents}/dynamic_rel_names.json")))}
order = [pbg_rel[line.rstrip("\n").split("\t")[1]]
         for line in open(f"{ds}/relations.tsv")]
assert len(order) == len(pbg_rel)
r = np.concatenate([side["lhs"][order], side["rhs"][order]]).astype(np.float32)
np.save(f"{outdir}/R.npy", r)
print(json.dumps({"entities": list(e.shape), "relations": list(r.shape)}))
EOF

"$bin/kg-ingest" -q -o fb --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"

log "PBG import"
/usr/bin/time -f "%e" -o pbg/import_time.txt nice -n 10 "$py" -m \
    torchbiggraph.converters.import_from_tsv -l 0 -r 2 --rel-col 1 \
    pbg/config.py pbg/train.txt pbg/valid.txt pbg/test.txt 2>pbg/import.log
pbg_load0=$(load)
log "PBG train, $epochs epochs, $threads workers (load $(cat /proc/loadavg))"
/usr/bin/time -f "%e %U %S" -o pbg/time.txt nice -n 10 "$py" pbg/train.py \
    pbg/config.py pbg/train_time.json 2>pbg/train.log
pbg_load1=$(load)
read -r pbg_wall pbg_user pbg_sys <pbg/time.txt
pbg_train=$(jq .train_seconds pbg/train_time.json)
log "PBG trained in ${pbg_train}s (process ${pbg_wall}s)"
"$py" pbg/export.py pbg/ents pbg/model "$epochs" fb pbg >pbg/export.json
nice -n 10 "$bin/kg-eval" -q --threads "$threads" --entities pbg/E.npy \
    --relations pbg/R.npy --model ComplEx --reciprocal \
    --entity-map pbg/emap.tsv fb >pbg/eval.json
pbg_mrr=$(jq .metrics.both.mrr pbg/eval.json)
log "PBG test MRR (kg-eval) $pbg_mrr"
own=null
if [ "$own_eval" = 1 ]; then
	log "PBG's own filtered evaluation"
	nice -n 10 "$py" pbg/own_eval.py pbg/config.py pbg/own_eval.json \
	    2>pbg/own_eval.log
	own=$(jq '{protocol: "PBG FilteredRankingEvaluator: test split, all entities, train+valid+test triples filtered, rank = 1 + #candidates with score >= the true one (pessimistic ties), both sides averaged"} + .' pbg/own_eval.json)
	# kg-eval's pessimistic-tie MRR is the number comparable to PBG's.
	own=$(echo "$own" | jq --argjson p "$(jq .by_ties.pessimistic.both.mrr pbg/eval.json)" '. + {kg_eval_pessimistic_mrr: $p}')
fi
pbg_run=$(jq -n \
    --arg commit "$pbg_commit" --arg version "$pbg_version" \
    --arg versions "$versions" --argjson epochs "$epochs" \
    --argjson train "$pbg_train" --argjson wall "$pbg_wall" \
    --argjson user "$pbg_user" --argjson sys "$pbg_sys" \
    --argjson imp "$(cat pbg/import_time.txt)" \
    --argjson l0 "$pbg_load0" --argjson l1 "$pbg_load1" \
    --argjson mrr "$pbg_mrr" --slurpfile ev pbg/eval.json \
    --argjson own "$own" --argjson shapes "$(cat pbg/export.json)" \
    --argjson threads "$threads" '{
  system: "pbg", pbg_commit: $commit, pbg_version: $version,
  "python torch h5py numpy": $versions,
  config: "torchbiggraph/examples/configs/fb15k_config_cpu.py on FB15k-237: complex_diagonal operator, dynamic relations, dot comparator, dimension 400 (200 complex), global_emb false, softmax loss, Adagrad lr 0.1, num_uniform_negs 1000, batch_size 1000 and num_batch_negs 50 (PBG defaults), N3 regularization_coef 1e-3, eval_fraction 0; trained on train only",
  epochs: $epochs, workers: $threads,
  train_seconds: $train, wall_seconds: $wall,
  user_seconds: $user, sys_seconds: $sys, import_seconds: $imp,
  train_seconds_note: "train() call only, checkpoint writes per epoch included; wall_seconds: the whole training process (python start, imports, train)",
  load_before: $l0, load_after: $l1,
  mrr: $mrr, hits1: $ev[0].metrics.both["hits@1"],
  hits10: $ev[0].metrics.both["hits@10"],
  protocol: "kg-eval --model ComplEx --reciprocal on the exported arrays (relation r = PBG lhs operator, r + 237 = rhs operator): test, filtered, all entities, realistic ties",
  exported: $shapes, pbg_own_eval: $own}')

fi

# ---- kgpipe ------------------------------------------------------------
# One kg-train run: $1 name, $2 config, the rest extra options.  Appends
# the run object to runs.jsonl.
kg_run() {
	name=$1 cfg=$2
	shift 2
	l0=$(load)
	log "kgpipe $name: kg-train --config $cfg $* (load $(cat /proc/loadavg))"
	/usr/bin/time -f "%e" -o "$name.time" nice -n 10 "$bin/kg-train" -q \
	    --no_checkpoint --force --config "$cfg" --num_thread "$threads" \
	    "$@" fb "$name"
	l1=$(load)
	nice -n 10 "$bin/kg-eval" -q --threads "$threads" fb "$name" \
	    >"$name.eval.json"
	jq -n --arg name "$name" --arg cfg "${cfg#$top/}" --arg opts "$*" \
	    --argjson wall "$(cat "$name.time")" \
	    --argjson l0 "$l0" --argjson l1 "$l1" \
	    --slurpfile log "$name/train_log.jsonl" \
	    --slurpfile ev "$name.eval.json" --slurpfile c "$cfg" \
	    --argjson target "$pbg_mrr" '{
	  system: "kgpipe", run: $name, config: $cfg, config_json: $c[0],
	  command: ("kg-train -q --no_checkpoint --force --config " + $cfg +
	      " --num_thread 2 " + $opts + " fb " + $name),
	  epochs: ($log | length),
	  train_seconds: ([$log[].seconds] | add),
	  wall_seconds: $wall, load_before: $l0, load_after: $l1,
	  mrr: $ev[0].metrics.both.mrr, hits1: $ev[0].metrics.both["hits@1"],
	  hits10: $ev[0].metrics.both["hits@10"],
	  protocol: "kg-eval: test, filtered, all entities, realistic ties",
	  valid_mrr_by_epoch: [$log[] | .valid_mrr // empty],
	  seconds_to_pbg_mrr: ([foreach $log[] as $e (0; . + $e.seconds;
	      if ($e.valid_mrr // -1) >= $target then . else empty end)]
	      | first // null)}' >>runs.jsonl
}
: >runs.jsonl
kg_run pbg_setting "$pbg_cfg" --epochs "$epochs"
kg_run tta "$tta_cfg" --valid_every 1 --target_mrr "$pbg_mrr" \
    --time_budget "$budget"

jq -n --argjson pbg "$pbg_run" --slurpfile kg runs.jsonl \
    --arg date "$(date -u +%FT%TZ)" --arg host "$(uname -srm)" \
    --argjson cores "$(nproc --all)" --arg cpu "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)" '
  ($kg | map(select(.run == "tta"))[0]) as $t |
  ($kg | map(select(.run == "pbg_setting"))[0]) as $s | {
  benchmark: "bench/pbg.sh: PyTorch-BigGraph and kgpipe on FB15k-237",
  date: $date, host: $host, cpu: $cpu, cores: $cores,
  nice: 10, threads: 2, omp_wait_policy: "passive",
  runs: ([$pbg] + $kg),
  ratios: {
    kgpipe_seconds_to_pbg_mrr: $t.seconds_to_pbg_mrr,
    pbg_mrr: $pbg.mrr, pbg_train_seconds: $pbg.train_seconds,
    pbg_wall_seconds: $pbg.wall_seconds,
    kgpipe_time_to_pbg_mrr_over_pbg_train_seconds:
      (if $t.seconds_to_pbg_mrr then $t.seconds_to_pbg_mrr / $pbg.train_seconds else null end),
    kgpipe_time_to_pbg_mrr_over_pbg_wall_seconds:
      (if $t.seconds_to_pbg_mrr then $t.seconds_to_pbg_mrr / $pbg.wall_seconds else null end),
    note: "kgpipe time = cumulative kg-train training seconds (train_log.jsonl, validation excluded) up to the first epoch whose filtered valid MRR (kg-train validation) reaches PBG'"'"'s filtered test MRR (kg-eval); null if the time budget ran out first",
    same_epochs_pbg_setting: {pbg_mrr: $pbg.mrr, kgpipe_mrr: $s.mrr,
      pbg_train_seconds: $pbg.train_seconds,
      kgpipe_train_seconds: $s.train_seconds,
      kgpipe_over_pbg_train_seconds: ($s.train_seconds / $pbg.train_seconds)}
  }}' >"$out"
log "wrote $out"
jq .ratios "$out"
