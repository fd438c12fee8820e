#!/usr/bin/env bash
# The peers installed and raced beside kgpipe in one invocation (issue 30,
# item 1; a benchmark, not a test).  Run from the repository root with bin/
# built: bash bench/peers.sh (bench/run.sh peers does the same; make bench
# leaves it out, like the gpu_ scripts).  Writes bench/results/peers.json.
#
# Install: a virtual environment in bench/work/peers-venv (KG_PEERS_VENV)
# made with /usr/bin/python3 (KG_PEERS_PYTHON) and the pinned versions
# below from PyPI (benchmarks only: kgpipe itself needs none of it).  torch
# is PyPI's default Linux wheel (CUDA 12 build, run on the CPU): the CPU
# wheel index is not a registry this machine reaches.  The venv is kept
# between runs and made anew only when the pins change (a stamp file holds
# them).  DGL and DGL-KE are installed after the others, on their own, so
# that their failure cannot stop the rest; every peer that cannot install
# or run is recorded in "failures" with its error line.
#
# Runs, one after another, 2 threads each, under nice -n KG_PEERS_NICE
# (10; on a machine shared with busier jobs 0 gets the runs a fair share)
# on
# ../shared/data/fb15k-237 (KG_SHARED_DATA), all for KG_PEERS_EPOCHS
# (default 1) epochs, the same for both sides:
#  - PBG 1.0.0's FB15k example setting (examples/configs/fb15k_config.py
#    of that release: ComplEx as complex_diagonal with dynamic relations,
#    dot comparator, dimension 400, softmax loss, Adagrad lr 0.1 (row-wise
#    for entities), 1000 uniform negatives shared by chunks of 50 plus the
#    chunk's own entities, batches of 1000; that release has no
#    regulariser) with 2 workers, against kgpipe's
#    examples/configs/pbg_fb15k237.json with --regularization_coef 0;
#  - PyKEEN's pipeline() for TransE, DistMult, ComplEx and RotatE (sLCWA,
#    d=200 (complex for ComplEx and RotatE), KG_PEERS_NEGS (32) negatives
#    per positive from the basic sampler, batches of 1024, Adagrad; NSSA
#    loss margin 9 temperature 1 for TransE and RotatE, softplus for the
#    bilinear ones; lr 0.01 for the distance models, 0.1 for the others)
#    against kg-train with the same model, dimension, negatives (shared by
#    chunks of KG_PEERS_NEGS positives), batch, loss, element-wise
#    Adagrad and lr (bench/peers.sh writes those configs into the run);
#  - PyG's examples/rgcn_link_pred.py setting (bench/peers_pyg.py) for
#    KG_PEERS_GNN_EPOCHS (default 5 x KG_PEERS_EPOCHS) full-batch steps,
#    against kg-train's R-GCN with the same shape (learned rows of 500, two
#    layers of 500 with 5 diagonal blocks, dropout 0.2, DistMult decoder,
#    Adam lr 0.01, one full-batch step an epoch, logistic loss with one
#    negative a positive);
#  - DGL-KE's FB15k TransE_l2 command line (its examples), on
#    ../shared/data/fb15k, if dglke installs and starts.
# Every process runs under /usr/bin/time (peak RSS: the largest process,
# so PBG's workers are not summed).  Every peer's arrays that kgpipe's
# scores can rank are also evaluated with kg-eval --entities/--relations
# (filtered, all entities, realistic ties), beside the peer's own
# evaluator.  The load average is recorded before and after each run: the
# machine may be shared, and the figures are only as quiet as it was.
set -eu
top=$(pwd)
bin=$top/bin
shared=${KG_SHARED_DATA:-$top/../shared/data}
data=$shared/fb15k-237
out=${KG_PEERS_OUT:-$top/bench/results/peers.json}
epochs=${KG_PEERS_EPOCHS:-1}
gnn_epochs=${KG_PEERS_GNN_EPOCHS:-$((5 * epochs))}
negs=${KG_PEERS_NEGS:-32}
own_gnn=${KG_PEERS_PYG_EVAL:-200}
cap=${KG_PEERS_TIMEOUT:-900}	# seconds one peer process may run
niceness=${KG_PEERS_NICE:-10}	# every run's nice -n
venv=${KG_PEERS_VENV:-$top/bench/work/peers-venv}
pybase=${KG_PEERS_PYTHON:-/usr/bin/python3}
threads=2
me=bench/peers.sh

log() { echo "$me: $*" >&2; }
load() { cut -d' ' -f1-3 /proc/loadavg | jq -R 'split(" ") | map(tonumber)'; }
command -v jq >/dev/null || { log "needs jq"; exit 1; }
[ -x /usr/bin/time ] || { log "needs /usr/bin/time"; exit 1; }
[ -x "$bin/kg-train" ] || { log "no $bin/kg-train: make all first"; exit 1; }
[ -f "$data/train.txt.gz" ] || { log "no $data"; exit 1; }
case $epochs$gnn_epochs$negs$own_gnn$cap$niceness in *[!0-9]*) log "KG_PEERS_EPOCHS," \
    "KG_PEERS_GNN_EPOCHS, KG_PEERS_NEGS, KG_PEERS_PYG_EVAL," \
    "KG_PEERS_TIMEOUT and KG_PEERS_NICE are whole numbers"; exit 2;; esac

# ---- install --------------------------------------------------------------
pins="torch==2.5.1 pykeen==1.11.1 torch-geometric==2.8.1 torchbiggraph==1.0.0 h5py==3.12.1"
# DGL 2.1.0 is the newest DGL for this Python; it needs torchdata's
# datapipes (gone after 0.9) and pydantic, which its wheel does not pin.
# DGL-KE 0.1.2 was written for DGL 0.4.3, which has no wheel for Python
# 3.11: the lookup's answer is kept for the results.
dgl_pins="dgl==2.1.0 dglke==0.1.2 torchdata==0.9.0 pydantic==2.10.6"
stamp="$($pybase --version 2>&1) | $pins | $dgl_pins"
py=$venv/bin/python
mkdir -p "$top/bench/work" "$top/bench/results"
if [ "$(cat "$venv/.peers-stamp" 2>/dev/null)" != "$stamp" ]; then
	log "installing the peers into $venv ($pins; then $dgl_pins)"
	rm -rf "$venv"
	"$pybase" -m venv "$venv"
	"$venv/bin/pip" install -q $pins >&2
	# torch stays as pinned: DGL's wheel asks for torchdata, whose newer
	# releases would pull another torch.
	if "$venv/bin/pip" install -q $dgl_pins "torch==2.5.1" \
	    >"$venv/dgl-install.log" 2>&1; then
		echo ok >"$venv/dgl-install.status"
	else
		grep -E 'ERROR|error' "$venv/dgl-install.log" | tail -1 \
		    >"$venv/dgl-install.status"
	fi
	"$venv/bin/pip" download -q --no-deps -d "$venv/dgl043" dgl==0.4.3 \
	    2>&1 | grep ERROR | head -1 >"$venv/dgl043.txt" || true
	"$venv/bin/pip" freeze >"$venv/freeze.txt"
	echo "$stamp" >"$venv/.peers-stamp"
fi

work=$top/bench/work/peers.$$
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
cd "$work"
export OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive \
    MKL_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads
: >runs.jsonl
: >failures.jsonl
fail() {	# peer stage error-line
	log "$1 $2 failed: $3"
	jq -nc --arg p "$1" --arg s "$2" --arg e "$3" \
	    '{peer: $p, stage: $s, error: $e}' >>failures.jsonl
}
lasterr() {	# the last error line of a log, else its last line
	local l
	l=$(grep -iE 'error|exception|killed|cannot|no module' "$1" | tail -1)
	[ -n "$l" ] || l=$(grep -v '^[[:space:]]*$' "$1" | tail -1)
	echo "${l:-(no output)}"
}

# timed NAME cmd...: runs cmd under nice and /usr/bin/time, for at most
# $cap seconds; NAME.time gets "wall peak_rss_kib", NAME.load the load
# before and after; returns cmd's status.  stderr goes to NAME.err.
timed() {
	local name=$1 rc=0
	shift
	load >"$name.l0"
	/usr/bin/time -f "%e %M" -o "$name.time" nice -n "$niceness" \
	    timeout -k 10 "$cap" "$@" 2>"$name.err" || rc=$?
	[ $rc -ne 124 ] || echo "timed out: stopped after $cap s" \
	    "(KG_PEERS_TIMEOUT; the cap on one run)" >>"$name.err"
	load >"$name.l1"
	jq -s '{before: .[0], after: .[1]}' "$name.l0" "$name.l1" >"$name.load"
	return $rc
}
wall() { cut -d' ' -f1 "$1.time"; }
rss() { tail -1 "$1.time" | cut -d' ' -f2; }

# kg-eval on exported arrays: kgeval NAME DIR MODEL [options]; prints the
# report JSON's path or nothing when it failed.
kgeval() {
	local name=$1 dir=$2 model=$3
	shift 3
	if timed "$name.kgeval" "$bin/kg-eval" -q --threads $threads \
	    --entities "$dir/E.npy" --relations "$dir/R.npy" --model "$model" \
	    "$@" fb >"$name.kgeval.json"; then
		echo "$name.kgeval.json"
	else
		fail "$name" kg-eval "$(lasterr "$name.kgeval.err")"
	fi
}

"$bin/kg-ingest" -q -o fb --train "$data/train.txt.gz" \
    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz"
positives=$(gzip -dc "$data/train.txt.gz" | wc -l)

# kgpipe: kgrun PAIR CONFIG [kg-train options]; appends its run object.
kgrun() {
	local pair=$1 cfg=$2 name=kg_$1
	shift 2
	log "kgpipe $pair: kg-train --config $cfg $* (load $(cat /proc/loadavg))"
	if ! timed "$name" "$bin/kg-train" -q --no_checkpoint --force \
	    --config "$cfg" --num_thread $threads "$@" fb "$name"; then
		fail "kgpipe $pair" train "$(lasterr "$name.err")"
		return 0
	fi
	timed "$name.eval" "$bin/kg-eval" -q --threads $threads fb "$name" \
	    >"$name.eval.json" || { fail "kgpipe $pair" eval \
	    "$(lasterr "$name.eval.err")"; return 0; }
	jq -nc --arg pair "$pair" --arg opts "$*" --slurpfile c "$cfg" \
	    --slurpfile log "$name/train_log.jsonl" \
	    --slurpfile ev "$name.eval.json" --argjson n "$positives" \
	    --argjson wall "$(wall "$name")" --argjson rss "$(rss "$name")" \
	    --argjson ew "$(wall "$name.eval")" \
	    --argjson erss "$(rss "$name.eval")" \
	    --slurpfile l "$name.load" '
	  ([$log[].seconds] | add) as $t | {
	  system: "kgpipe", pair: $pair, config: $c[0],
	  options: ("--num_thread 2 " + $opts),
	  epochs: ($log | length), train_seconds: $t,
	  seconds_per_epoch: ($t / ($log | length)),
	  positives_per_s: ($n * ($log | length) / $t),
	  wall_seconds: $wall, peak_rss_kib: $rss,
	  eval_seconds: $ew, eval_peak_rss_kib: $erss,
	  mrr_kg_eval: $ev[0].metrics.both.mrr,
	  hits10_kg_eval: $ev[0].metrics.both["hits@10"],
	  load: $l[0]}' >>runs.jsonl
}

# ---- PBG ----------------------------------------------------------------
pbg() {
	local d=$work/pbg
	mkdir -p "$d"
	for s in train valid test; do gzip -dc "$data/$s.txt.gz" >"$d/$s.txt"; done
	cat >"$d/config.py" <<EOF
def get_torchbiggraph_config():
    return dict(
        entity_path="$d/ents",
        edge_paths=["$d/train_p", "$d/valid_p", "$d/test_p"],
        checkpoint_path="$d/model",
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
        eval_fraction=0,
        workers=$threads,
    )
EOF
	log "PBG import"
	if ! timed pbg.import "$py" -m torchbiggraph.converters.import_from_tsv \
	    -l 0 -r 2 --rel-col 1 "$d/config.py" "$d/train.txt" \
	    "$d/valid.txt" "$d/test.txt" >/dev/null; then
		fail pbg import "$(lasterr pbg.import.err)"
		return 0
	fi
	log "PBG train, $epochs epochs, $threads workers (load $(cat /proc/loadavg))"
	if ! timed pbg.train "$py" "$top/bench/peers_pbg.py" train \
	    "$d/config.py" pbg.train.json; then
		fail pbg train "$(lasterr pbg.train.err)"
		return 0
	fi
	"$py" "$top/bench/peers_pbg.py" export "$d/ents" "$d/model" "$epochs" \
	    fb/relations.tsv "$d" >pbg.export.json 2>pbg.export.err ||
	    fail pbg export "$(lasterr pbg.export.err)"
	local kg=""
	[ -s pbg.export.json ] && kg=$(kgeval pbg "$d" ComplEx --reciprocal \
	    --entity-map "$d/emap.tsv")
	log "PBG's own filtered evaluation"
	timed pbg.own "$py" "$top/bench/peers_pbg.py" eval "$d/config.py" \
	    pbg.own.json || fail pbg own-eval "$(lasterr pbg.own.err)"
	[ -s pbg.own.json ] || echo null >pbg.own.json
	[ -n "$kg" ] || { echo null >pbg.kgeval.json; echo '0 0' >pbg.kgeval.time; }
	jq -nc --argjson n "$positives" --argjson e "$epochs" \
	    --slurpfile tr pbg.train.json --slurpfile own pbg.own.json \
	    --slurpfile kg pbg.kgeval.json \
	    --argjson wall "$(wall pbg.train)" --argjson rss "$(rss pbg.train)" \
	    --argjson kgw "$(wall pbg.kgeval)" \
	    --argjson ow "$(wall pbg.own)" --argjson orss "$(rss pbg.own)" \
	    --slurpfile l pbg.train.load --arg v "$("$py" -c \
	    'import importlib.metadata as m; print(m.version("torchbiggraph"))')" '
	  $tr[0].train_seconds as $t | {
	  system: "pbg", pair: "pbg_complex", version: $v,
	  setting: "torchbiggraph 1.0.0 examples/configs/fb15k_config.py on FB15k-237: complex_diagonal, dynamic relations, dot comparator, dimension 400, global_emb false, softmax loss, Adagrad lr 0.1, num_uniform_negs 1000, batch_size 1000 and num_batch_negs 50 (defaults), no regulariser (1.0.0 has none), eval_fraction 0, workers 2; trained on train only",
	  epochs: $e, train_seconds: $t, seconds_per_epoch: ($t / $e),
	  positives_per_s: ($n * $e / $t), wall_seconds: $wall,
	  peak_rss_kib: $rss,
	  eval_seconds: ($own[0].seconds // null), eval_wall_seconds: $ow,
	  eval_peak_rss_kib: $orss,
	  mrr_own: ($own[0].mrr // null),
	  own_eval: ($own[0] // null),
	  own_protocol: "PBG FilteredRankingEvaluator: test, all entities, train+valid+test filtered, rank = 1 + #candidates scoring >= the true one (pessimistic ties)",
	  mrr_kg_eval: ($kg[0].metrics.both.mrr // null),
	  mrr_kg_eval_pessimistic: ($kg[0].by_ties.pessimistic.both.mrr // null),
	  kg_eval_seconds: $kgw,
	  kg_eval_protocol: "kg-eval --model ComplEx --reciprocal (relation r = lhs operator, r + 237 = rhs operator)",
	  load: $l[0]}' >>runs.jsonl
}

# ---- PyKEEN -------------------------------------------------------------
pykeen() {	# model
	local m=$1 d=$work/pykeen_$1 lr=0.1 kgm kg="" name=pykeen_$1
	mkdir -p "$d"
	case $m in TransE|RotatE) lr=0.01;; esac
	log "PyKEEN $m, $epochs epochs (load $(cat /proc/loadavg))"
	if ! timed "$name" "$py" "$top/bench/peers_pykeen.py" "$data" "$m" \
	    "$epochs" "$negs" 1024 $lr $threads "$d"; then
		fail "pykeen $m" pipeline "$(lasterr "$name.err")"
		return 0
	fi
	kgm=$(jq -r '.kg_model // empty' "$d/run.json")
	if [ -n "$kgm" ]; then
		kg=$(kgeval "$name" "$d" "$kgm" --entity-map "$d/emap.tsv" \
		    --relation-map "$d/rmap.tsv")
	fi
	[ -n "$kg" ] || { echo null >"$name.kgeval.json"; echo '0 0' >"$name.kgeval.time"; }
	jq -nc --arg m "$m" --slurpfile r "$d/run.json" \
	    --slurpfile kg "$name.kgeval.json" --argjson e "$epochs" \
	    --argjson wall "$(wall "$name")" --argjson rss "$(rss "$name")" \
	    --argjson kgw "$(wall "$name.kgeval")" \
	    --slurpfile l "$name.load" '$r[0] as $r | {
	  system: "pykeen", pair: ("pykeen_" + $m), version: $r.pykeen_version,
	  setting: $r.settings, epochs: $e,
	  train_seconds: $r.train_seconds,
	  seconds_per_epoch: ($r.train_seconds / $e),
	  positives_per_s: ($r.positives * $e / $r.train_seconds),
	  wall_seconds: $wall, peak_rss_kib: $rss,
	  peak_rss_note: "one process: training and evaluation",
	  peak_rss_includes_eval: true,
	  eval_seconds: $r.eval_seconds,
	  mrr_own: $r.mrr_own, mrr_own_pessimistic: $r.mrr_own_pessimistic,
	  hits10_own: $r.hits10_own,
	  own_protocol: "PyKEEN RankBasedEvaluator: test, filtered (train, valid, test), all entities, realistic ties (both.realistic.inverse_harmonic_mean_rank)",
	  mrr_kg_eval: ($kg[0].metrics.both.mrr // null),
	  kg_eval_seconds: $kgw, kg_model: $r.kg_model,
	  kg_eval_skipped: ($r.kg_eval_skipped // null),
	  interaction: $r.model_repr, load: $l[0]}' >>runs.jsonl
}

# kgpipe's side of a PyKEEN pair: kgcfg MODEL > config.json
kgcfg() {
	local dim=200 extra='"loss": "logistic", "lr": 0.1, "init": "normal", "init_scale": 0.001'
	case $1 in ComplEx|RotatE) dim=400;; esac
	case $1 in TransE|RotatE) extra='"loss": "logistic", "neg_adversarial_sampling": true, "adversarial_temperature": 1.0, "gamma": 9, "lr": 0.01, "init": "uniform"';; esac
	local m=$1
	[ "$m" = TransE ] && m=TransE_l1
	cat <<EOF
{"_source": "bench/peers.sh: the PyKEEN pair's setting", "model_name": "$m",
 "hidden_dim": $dim, $extra, "batch_size": 1024,
 "neg_sample_size": $negs, "neg_chunk_size": $negs,
 "ent_optimizer": "adagrad_elem", "rel_optimizer": "adagrad_elem"}
EOF
}

# ---- PyG ----------------------------------------------------------------
pyg() {
	local d=$work/pyg
	mkdir -p "$d"
	log "PyG R-GCN, $gnn_epochs full-batch epochs (load $(cat /proc/loadavg))"
	if ! timed pyg "$py" "$top/bench/peers_pyg.py" "$data" "$gnn_epochs" \
	    $threads "$own_gnn" "$d"; then
		fail "pyg rgcn" train "$(lasterr pyg.err)"
		return 0
	fi
	local kg
	kg=$(kgeval pyg "$d" DistMult --entity-map "$d/emap.tsv" \
	    --relation-map "$d/rmap.tsv") || kg=""
	[ -n "$kg" ] || { echo null >pyg.kgeval.json; echo '0 0' >pyg.kgeval.time; }
	jq -nc --slurpfile r "$d/run.json" --slurpfile kg pyg.kgeval.json \
	    --argjson wall "$(wall pyg)" --argjson rss "$(rss pyg)" \
	    --argjson kgw "$(wall pyg.kgeval)" --slurpfile l pyg.load '
	  $r[0] as $r | {
	  system: "pyg", pair: "rgcn", version: $r.torch_geometric_version,
	  setting: "examples/rgcn_link_pred.py of PyG on FB15k-237 (bench/peers_pyg.py): learned rows 500, 2 RGCNConv 500->500 with num_blocks 5 over 474 relation types (train edges and inverses), ReLU, dropout 0.2, DistMult decoder, Adam lr 0.01, one full-batch step an epoch, one corrupted head or tail a positive, BCE + 1e-2 L2 on z and relations, clip 1",
	  epochs: $r.epochs, train_seconds: $r.train_seconds,
	  seconds_per_epoch: ($r.train_seconds / $r.epochs),
	  epoch_seconds: $r.epoch_seconds,
	  positives_per_s: ($r.positives * $r.epochs / $r.train_seconds),
	  wall_seconds: $wall, peak_rss_kib: $rss,
	  eval_seconds: $kgw,
	  eval_note: "PyG has no evaluator: eval_seconds is kg-eval on the encoder output; the example loop ran on the first own_eval_triples test triples only",
	  mrr_kg_eval: ($kg[0].metrics.both.mrr // null),
	  mrr_own_prefix: $r.mrr_own_prefix,
	  own_eval_triples: $r.own_eval_triples,
	  own_eval_seconds: $r.own_eval_seconds,
	  load: $l[0]}' >>runs.jsonl
}

# ---- DGL-KE -------------------------------------------------------------
dglke() {
	local st
	st=$(cat "$venv/dgl-install.status" 2>/dev/null || echo "no install status")
	if [ "$st" != ok ]; then
		fail dglke install "$st"
		return 0
	fi
	if ! "$venv/bin/dglke_train" --help >dglke.help 2>dglke.help.err; then
		fail dglke start "$(lasterr dglke.help.err)"
		# What stands behind it, as found: DGL-KE's own imports of
		# dgl.contrib, which DGL has not had since 0.4.x.
		if grep -q 'dgl.contrib' "$venv"/lib/python*/site-packages/dglke/train_pytorch.py &&
		    ! "$py" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("dgl.contrib") is None)' 2>/dev/null; then
			fail dglke dgl-api "dglke/train_pytorch.py: from dgl.contrib import KVClient; the installed DGL $("$py" -c 'import importlib.metadata as m; print(m.version("dgl"))') has no dgl.contrib (removed after DGL 0.4.x); pip for DGL 0.4.3 on Python $("$py" -c 'import platform; print(platform.python_version())'): $(cat "$venv/dgl043.txt" 2>/dev/null)"
		fi
		return 0
	fi
	mkdir -p dglke_data
	for s in train valid test; do
		gzip -dc "$shared/fb15k/$s.txt.gz" >"dglke_data/$s.txt"
	done
	log "DGL-KE TransE_l2 on FB15k (load $(cat /proc/loadavg))"
	# DGL-KE's examples: FB15k TransE_l2, one epoch of batches of 1000
	# per KG_PEERS_EPOCHS, one process of 2 threads.
	if ! timed dglke "$venv/bin/dglke_train" --model_name TransE_l2 \
	    --dataset FB15k --data_path dglke_data --format raw_udd_hrt \
	    --data_files train.txt valid.txt test.txt --batch_size 1000 \
	    --neg_sample_size 200 --hidden_dim 400 --gamma 19.9 --lr 0.25 \
	    --max_step $((484 * epochs)) --log_interval 100 \
	    --batch_size_eval 16 -adv --regularization_coef 1.00E-09 --test \
	    --num_thread $threads --num_proc 1 --save_path dglke_ckpt \
	    >dglke.out; then
		fail dglke train "$(lasterr dglke.err)"
		return 0
	fi
	jq -nc --arg o "$(tail -20 dglke.out)" --argjson wall "$(wall dglke)" \
	    --argjson rss "$(rss dglke)" --slurpfile l dglke.load '{
	  system: "dglke", pair: "dglke_transe_l2_fb15k", epochs: null,
	  wall_seconds: $wall, peak_rss_kib: $rss, output_tail: $o,
	  load: $l[0]}' >>runs.jsonl
}

start=$(date +%s)
load0=$(load)
pbg
kgrun pbg_complex "$top/examples/configs/pbg_fb15k237.json" \
    --epochs "$epochs" --regularization_coef 0
for m in TransE DistMult ComplEx RotatE; do
	pykeen $m
	kgcfg $m >"kg_$m.json"
	kgrun "pykeen_$m" "$work/kg_$m.json" --epochs "$epochs"
done
pyg
cat >kg_rgcn.json <<EOF
{"_source": "bench/peers.sh: PyG's rgcn_link_pred setting", "model_name": "RGCN",
 "learned_only": true, "decoder": "DistMult", "layers": 2, "gnn_hidden": 500,
 "hidden_dim": 500, "decomposition": "block", "num_bases": 5, "dropout": 0.2,
 "lr": 0.01, "loss": "logistic", "batch_size": $positives,
 "neg_sample_size": 1, "neg_chunk_size": 1}
EOF
kgrun rgcn "$work/kg_rgcn.json" --epochs "$gnn_epochs"
dglke
load1=$(load)

versions=$("$py" - <<'EOF'
import importlib.metadata as m, json, platform
out = {"python": platform.python_version()}
for p in ("torch", "pykeen", "torch_geometric", "torchbiggraph", "h5py",
          "numpy", "dgl", "dglke"):
    try:
        out[p] = m.version(p)
    except m.PackageNotFoundError:
        out[p] = None
print(json.dumps(out))
EOF
)
jq -n --slurpfile runs runs.jsonl --slurpfile fails failures.jsonl \
    --argjson versions "$versions" \
    --arg kgv "$("$bin/kg-train" --version 2>&1 | head -1)" \
    --arg date "$(date -u +%FT%TZ)" \
    --arg commit "$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
    --arg dirty "$(git -C "$top" status --porcelain 2>/dev/null | grep -v '^??' | head -1)" \
    --arg host "$(uname -srm)" --argjson cores "$(nproc --all)" \
    --arg cpu "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)" \
    --arg mem "$(free -g | awk '/Mem:/{print $2 " GiB"}')" \
    --argjson l0 "$load0" --argjson l1 "$load1" \
    --argjson secs "$(( $(date +%s) - start ))" \
    --argjson e "$epochs" --argjson ge "$gnn_epochs" --argjson negs "$negs" \
    --argjson nice "$niceness" \
    --arg freeze "$(cat "$venv/freeze.txt" 2>/dev/null)" '
  ($runs | map(select(.system == "kgpipe")) | map({(.pair): .}) | add // {}) as $kg |
  {
  date: $date, commit: $commit, uncommitted_changes: ($dirty != ""),
  machine: {cpu: $cpu, cores: $cores, memory: $mem, kernel: $host},
  load_average_before: $l0, load_average_after: $l1,
  script_seconds: $secs, epochs: $e, gnn_epochs: $ge,
  negatives_per_positive_pykeen_pairs: $negs, threads: 2, nice: $nice,
  note: "one invocation of bench/peers.sh, each run alone, under nice -n (nice); each run records its own load average before and after: where it is above the 2 cores, the machine was shared and the seconds are inflated by an unknown part",
  torch_build: "PyPI default torch wheel for Linux (CUDA 12 build; no GPU here, runs on the CPU); the CPU-only wheel index is not reachable from this machine",
  versions: ($versions + {kgpipe: $kgv}),
  pip_freeze: ($freeze | split("\n") | map(select(. != ""))),
  runs: $runs, failures: $fails,
  ratios: [$runs[] | select(.system != "kgpipe") | . as $p |
    $kg[$p.pair] as $k | select($k != null and $p.train_seconds != null) | {
    pair: $p.pair, peer: $p.system,
    kgpipe_over_peer_positives_per_s: ($k.positives_per_s / $p.positives_per_s),
    peer_over_kgpipe_seconds_per_epoch: ($p.seconds_per_epoch / $k.seconds_per_epoch),
    peer_over_kgpipe_eval_seconds: (if $p.eval_seconds and $k.eval_seconds > 0 then $p.eval_seconds / $k.eval_seconds else null end),
    peer_over_kgpipe_peak_rss: ($p.peak_rss_kib / (if $p.peak_rss_includes_eval
        then ([$k.peak_rss_kib, $k.eval_peak_rss_kib] | max)
        else $k.peak_rss_kib end)),
    kgpipe_mrr: $k.mrr_kg_eval,
    peer_mrr_kg_eval: $p.mrr_kg_eval,
    peer_mrr_own: ($p.mrr_own // $p.mrr_own_prefix // null)}]
  }' >"$out.tmp.$$"
mv "$out.tmp.$$" "$out"
log "wrote $out in $(( $(date +%s) - start )) s"
