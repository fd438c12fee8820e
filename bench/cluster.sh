#!/usr/bin/env bash
# Training across hosts (tests/cluster/cluster.sh: network namespaces on
# this machine, TCP between them, no shared filesystem): FB15k-237 bucket
# training and enterprise-graph GNN training on 1 host x 2 ranks, 2 hosts
# x 1 rank and 4 hosts x 1 rank, and 2 hosts over links limited to 1 Gbit/s
# (tc tbf; this kernel has no netem, so no added delay).  For each: the
# seconds per epoch, each rank's bytes sent and received per epoch and its
# seconds inside communication calls per epoch (the manifest's figures),
# and whether the model equals the one-host run bit for bit.  Writes
# bench/results/cluster.json.  Needs root and `ip netns`.
#
#   KG_CLUSTER_EPOCHS (2), KG_CLUSTER_DIM (200), KG_CLUSTER_GNN_NODES (20000)
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
out=$top/bench/results/cluster.json
work=$top/bench/work/cluster
E=${KG_CLUSTER_EPOCHS:-2} D=${KG_CLUSTER_DIM:-200}
GN=${KG_CLUSTER_GNN_NODES:-20000}
data=$top/../shared/data/fb15k-237
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
PATH=$top/bin:$PATH
. "$top/tests/cluster/cluster.sh"
if ! why=$(cluster_usable); then
	echo "bench/cluster.sh: skipped: $why" >&2
	exit 0
fi
if [ ! -d "$data" ]; then
	echo "bench/cluster.sh: skipped: $data is missing" >&2
	exit 0
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
load0=$(cut -d' ' -f1-3 /proc/loadavg)
kg-ingest -q -o fb --train "$data/train.txt.gz" --valid "$data/valid.txt.gz" \
    --test "$data/test.txt.gz" && kg-partition -q -m random -p 8 -o p8 fb ||
    exit 1
"$top/build/aux/kg_gen_enterprise" -o ent -n "$GN" -s 1 2>/dev/null &&
    kg-ingest -q -o eds --types ent/types.tsv --train ent/train.tsv \
    --valid ent/valid.tsv --test ent/test.tsv &&
    kg-encode-attrs fit -q -d eds -s ent/schema.json -o am &&
    kg-encode-attrs transform -q -j 1 -d eds -m am -o s0 --shard 0/1 &&
    kg-encode-attrs merge -q -m am -o feat s0 &&
    kg-partition -q -p 2 -m metis -s 1 -o ep2 eds &&
    kg-expand -q -k 2 -s 1 -F feat -p ep2 -o ex2 eds &&
    kg-partition -q -p 4 -m metis -s 1 -o ep4 eds &&
    kg-expand -q -k 2 -s 1 -F feat -p ep4 -o ex4 eds || exit 1

shallow="-q --model_name DistMult --hidden_dim $D --epochs $E --num_thread 1"
shallow="$shallow --batch_size 1000 --neg_sample_size 200 --no_checkpoint"
gnn="-q --model_name RGCN --epochs $E --batch_size 1024 --fanout 10,5"
gnn="$gnn --blocks --neg_chunk_size 128 --gnn_hidden 32 --hidden_dim 32"
gnn="$gnn --num_thread 1 --no_checkpoint"

cluster_up 4 || exit 1
for i in 1 2 3 4; do cp -R fb p8 eds feat ex2 ex4 "$(cluster_dir $i)/"; done
S=$CLUSTER_SCRATCH h1=$(cluster_dir 1)

# row KIND HOSTS RANKS LINK MODELDIR REFDIR: one JSON object per run.
rows=()
row() {
	local m=$5/manifest.json same=null
	[ -n "$6" ] && { cmp -s "$5/entities.npy" "$6/entities.npy" &&
	    same=true || same=false; }
	rows+=("$(jq -c --arg k "$1" --argjson h "$2" --argjson r "$3" \
	    --arg l "$4" --argjson same "$same" '.figures as $f | {
	    kind: $k, hosts: $h, ranks: $r, link: $l,
	    epochs: $f.epochs,
	    seconds_per_epoch: (($f.train_seconds // ($f.seconds_per_epoch * $f.epochs)) / $f.epochs),
	    bytes_sent_per_rank_per_epoch: [$f.bytes_sent_per_rank[] / $f.epochs],
	    bytes_received_per_rank_per_epoch: [$f.bytes_received_per_rank[] / $f.epochs],
	    comm_seconds_per_rank_per_epoch: [$f.comm_seconds_per_rank[] / $f.epochs],
	    final_loss: $f.final_loss, same_bits_as_one_host: $same }' "$m")")
}

mpirun -np 2 kg-train $shallow --partitions p8 fb b1x2 && row buckets 1 2 local b1x2 ""
mpirun -np 4 kg-train $shallow --partitions p8 fb b1x4 && row buckets 1 4 local b1x4 ""
cluster_mpirun -np 2 kg-train $shallow --partitions $S/p8 $S/fb $S/b2 &&
    row buckets 2 2 veth "$h1/b2" b1x2
cluster_mpirun -np 4 kg-train $shallow --partitions $S/p8 $S/fb $S/b4 &&
    row buckets 4 4 veth "$h1/b4" b1x4
mpirun -np 2 kg-train $gnn --features feat --expanded ex2 eds g1x2 &&
    row gnn_ssgd 1 2 local g1x2 ""
cluster_mpirun -np 2 kg-train $gnn --features $S/feat --expanded $S/ex2 \
    $S/eds $S/g2 && row gnn_ssgd 2 2 veth "$h1/g2" g1x2
mpirun -np 4 kg-train $gnn --features feat --expanded ex4 eds g1x4 &&
    row gnn_ssgd 1 4 local g1x4 ""
cluster_mpirun -np 4 kg-train $gnn --features $S/feat --expanded $S/ex4 \
    $S/eds $S/g4 && row gnn_ssgd 4 4 veth "$h1/g4" g1x4

# 1 Gbit/s both ways on hosts 1 and 2.
for i in 1 2; do
	tc qdisc add dev "kg${CLUSTER_ID}v$i" root tbf rate 1gbit burst 128kb \
	    latency 50ms
	ip netns exec "kg${CLUSTER_ID}h$i" tc qdisc add dev eth0 root tbf \
	    rate 1gbit burst 128kb latency 50ms
done
cluster_mpirun -np 2 kg-train $shallow --partitions $S/p8 $S/fb $S/b2s &&
    row buckets 2 2 tbf-1gbit "$h1/b2s" b1x2
cluster_mpirun -np 2 kg-train $gnn --features $S/feat --expanded $S/ex2 \
    $S/eds $S/g2s && row gnn_ssgd 2 2 tbf-1gbit "$h1/g2s" g1x2
cluster_down

printf '%s\n' "${rows[@]}" | jq -s --arg date "$(date -u +%FT%TZ)" \
    --arg commit "$(git -C "$top" rev-parse --short HEAD)" \
    --arg load "$load0 -> $(cut -d' ' -f1-3 /proc/loadavg)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
    --argjson nproc "$(nproc)" --argjson epochs "$E" --argjson dim "$D" \
    --argjson gnn_nodes "$GN" '{
    date: $date, commit: $commit, machine: {cpu: $cpu, cores: $nproc},
    load_average_before_after: $load,
    setting: {fb15k237_buckets: "DistMult d=\($dim), 8 random partitions, batch 1000, 200 negatives, 1 thread a rank",
      gnn_ssgd: "R-GCN over attributes, enterprise graph of \($gnn_nodes) nodes, kg-expand k=2 parts, fan-outs 10,5 on blocks, batch 1024, 1 thread a rank",
      epochs: $epochs,
      hosts: "network namespaces on one 2-core machine: the hosts share its cores, so times show the cost of TCP and messages, not a speed-up"},
    runs: .}' >"$out"
echo "bench/cluster.sh: wrote $out" >&2
