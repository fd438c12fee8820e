# SCALE=paper sets the Ray paper's workload in the enterprise pipeline:
# what each stage would run (make -n) carries the paper's settings, a
# variable on the command line still wins, a shallow model takes no GNN
# config, and an unknown scale is refused.  A large graph of any size
# (more than 262,144 training triples, generated or given as DATA) takes
# the same bounded setting; a small one keeps the whole-graph setting.
# The runs themselves are benchmarks (bench/paper_scale.sh,
# bench/pipeline_300k.sh).
. "$KG_TOP/tests/cli/lib.sh"
plan 26
mk=$KG_TOP/pipelines/enterprise.mk
dry() { make -n -f "$mk" OUT="$PWD/o" "$@" 2>&1; }

p=$(dry SCALE=paper)
has() { case "$p" in *"$1"*) return 0 ;; esac; return 1; }
check "paper: 2.8M nodes generated" has "kg_gen_enterprise -f -o $PWD/o/data -n 2800000 "
check "paper: expansion capped at 5,2" has "kg-expand -f -k 2 -c 5,2 "
check "paper: the paper's R-GCN config" has "--config $KG_TOP/examples/configs/rgcn_ray_paper.json"
check "paper: 3 epochs" has "--epochs 3 "
check "paper: progress and resume, a checkpoint kept" has "--progress --resume --force"
check "paper: MRR against 1000 sampled candidates" has "kg-eval --force --auc --neg-sample 1000 "
p=$(dry SCALE=paper MODEL=RelGNN NODES=5000 EPOCHS=1)
check "paper: RelGNN takes its own paper config" has "relgnn_ray_paper.json"
check "paper: NODES on the command line wins" has "-n 5000 "
check "paper: EPOCHS on the command line wins" has "--epochs 1 "
p=$(dry SCALE=paper MODEL=ComplEx RANKS=1)
check "paper: a shallow model takes no GNN config" sh -c \
    "! printf '%s' \"\$1\" | grep -q -- --config" sh "$p"
p=$(dry)
check "default: quiet, no checkpoint" has " -q --no_checkpoint --force"
check "default: no paper config" sh -c \
    "! printf '%s' \"\$1\" | grep -q ray_paper" sh "$p"
expect_fail "an unknown scale is refused" 2 'the only scale is "paper"' \
    make -s -n -f "$mk" OUT="$PWD/o" SCALE=huge

# Large graphs below the paper's size: the paper's bounded setting.
p=$(dry NODES=300000 RANKS=2)
check "300k: the paper's R-GCN config" has "--config $KG_TOP/examples/configs/rgcn_ray_paper.json"
check "300k: the config's 3 epochs" has "--epochs 3 "
check "300k: expansion capped at 5,2" has "kg-expand -f -k 2 -c 5,2 "
check "300k: sampled MRR" has "kg-eval --force --auc --neg-sample 1000 "
check "300k: progress and resume" has "--progress --resume --force"
p=$(dry NODES=300000 MODEL=RelGNN EPOCHS=1)
check "300k RelGNN: its paper config, EPOCHS wins" sh -c \
    'case "$1" in *relgnn_ray_paper.json*"--epochs 1 "*) exit 0 ;; esac; exit 1' sh "$p"
p=$(dry NODES=40000)
check "40k: the whole-graph config" has "--config $KG_TOP/examples/configs/rgcn_ray.json"
check "40k: 30 epochs, full ranking" sh -c \
    'case "$1" in *"--epochs 30 "*"kg-eval --force --auc --per-relation "*) exit 0 ;; esac; exit 1' sh "$p"
# DATA: the training triples are counted.
mkdir big small
seq 262145 >big/train.tsv
seq 262144 >small/train.tsv
for d in big small; do
	touch $d/valid.tsv $d/test.tsv $d/types.tsv $d/schema.json
done
p=$(dry DATA="$PWD/big")
check "DATA with 262,145 training triples: large" has "rgcn_ray_paper.json"
p=$(dry DATA="$PWD/small")
check "DATA with 262,144 training triples: small" has "rgcn_ray.json"

# Expansion caps at every size for 2 hops (the demo's 2 parts would each
# hold the whole 2,000-node graph uncapped); none for other hop counts;
# FANOUT= (empty) expands without caps.
p=$(dry)
check "default: 2 hops capped at 5,2" has "kg-expand -f -k 2 -c 5,2 "
p=$(dry HOPS=1)
check "HOPS=1: no caps" has "kg-expand -f -k 1 -s 1 "
p=$(dry FANOUT=)
check "FANOUT= : no caps" has "kg-expand -f -k 2 -s 1 "
