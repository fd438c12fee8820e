#!/usr/bin/env bash
# Training across hosts (tests/cluster/cluster.sh: network namespaces on
# this machine, TCP between them, no shared filesystem): FB15k-237 bucket
# training and enterprise-graph GNN training on 1 host x 2 ranks, 2 hosts
# x 1 rank and 4 hosts x 1 rank, and 2 hosts over slower links.  For
# each: the seconds per epoch, each rank's bytes sent and received per
# epoch and its seconds inside communication calls per epoch (the
# manifest's figures), whether the model equals the one-host run bit for
# bit, each rank's peak RSS, and the load average before and after the
# run.  Merges its rows into bench/results/cluster.json: each invocation
# is recorded once in "invocations" (its command, setting and date) and
# each row names the invocation that produced it.  Needs root and `ip netns`.
#
#   KG_CLUSTER_ONLY         buckets or gnn: that half only (default both)
#   KG_CLUSTER_HOSTS        the multi-host shapes, "2 4" (each also runs
#                           its one-host reference, 1 host x as many ranks)
#   KG_CLUSTER_LINKS        which 2-host links besides plain veth, any of
#                           tbf (1 Gbit/s, tc tbf), delay (tests/cluster's
#                           CLUSTER_DELAY_MS links: KG_CLUSTER_DELAY_MS,
#                           default 0.5 ms one way, at 1 Gbit/s), delay0
#                           (the same links at 1 Gbit/s with no delay: the
#                           forwarder's own cost); default "tbf"; "none"
#                           for plain veth only
#   KG_CLUSTER_EPOCHS (2), KG_CLUSTER_DIM (200)   the bucket runs
#   KG_CLUSTER_GNN_NODES (20000)                  the enterprise graph
#   KG_CLUSTER_GNN_SETTING  small (fan-outs 10,5, every triple an epoch,
#                           uncapped expansion) or large (the pipeline's
#                           large-graph setting, pipelines/enterprise.mk:
#                           examples/configs/rgcn_ray_paper.json, 256
#                           batches an epoch, expansion capped at 5,2);
#                           default large above 262,144 training triples
#                           (about 42,000 nodes), as the pipeline decides
#   KG_CLUSTER_GNN_EPOCHS   (KG_CLUSTER_EPOCHS; 1 in the large setting)
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
out=$top/bench/results/cluster.json
work=$top/bench/work/cluster
E=${KG_CLUSTER_EPOCHS:-2} D=${KG_CLUSTER_DIM:-200}
GN=${KG_CLUSTER_GNN_NODES:-20000}
ONLY=${KG_CLUSTER_ONLY:-}
SHAPES=${KG_CLUSTER_HOSTS:-2 4}
LINKS=${KG_CLUSTER_LINKS:-tbf}
DELAY=${KG_CLUSTER_DELAY_MS:-0.5}
if [ $((GN * 25 / 4)) -gt 262144 ]; then
	GSET=${KG_CLUSTER_GNN_SETTING:-large}
else
	GSET=${KG_CLUSTER_GNN_SETTING:-small}
fi
case $GSET in
large) GE=${KG_CLUSTER_GNN_EPOCHS:-1} ;;
small) GE=${KG_CLUSTER_GNN_EPOCHS:-$E} ;;
*) echo "bench/cluster.sh: KG_CLUSTER_GNN_SETTING is small or large" >&2
   exit 2 ;;
esac
case $ONLY in
"" | buckets | gnn) ;;
*) echo "bench/cluster.sh: KG_CLUSTER_ONLY is buckets or gnn" >&2; exit 2 ;;
esac
run_buckets() { [ "$ONLY" != gnn ]; }
run_gnn() { [ "$ONLY" != buckets ]; }
has() { case " $2 " in *" $1 "*) return 0 ;; esac; return 1; }
data=$top/../shared/data/fb15k-237
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
PATH=$top/bin:$PATH
. "$top/tests/cluster/cluster.sh"
if ! why=$(cluster_usable); then
	echo "bench/cluster.sh: skipped: $why" >&2
	exit 0
fi
if run_buckets && [ ! -d "$data" ]; then
	echo "bench/cluster.sh: skipped: $data is missing" >&2
	exit 0
fi
invocation="bench/cluster.sh"
for v in KG_CLUSTER_ONLY KG_CLUSTER_HOSTS KG_CLUSTER_LINKS \
    KG_CLUSTER_DELAY_MS KG_CLUSTER_EPOCHS KG_CLUSTER_DIM \
    KG_CLUSTER_GNN_NODES KG_CLUSTER_GNN_SETTING KG_CLUSTER_GNN_EPOCHS; do
	[ -n "${!v:-}" ] && invocation="$v='${!v}' $invocation"
done
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
load0=$(cut -d' ' -f1-3 /proc/loadavg)
stage=()	# what each host's disk gets
if run_buckets; then
	kg-ingest -q -o fb --train "$data/train.txt.gz" \
	    --valid "$data/valid.txt.gz" --test "$data/test.txt.gz" &&
	    kg-partition -q -m random -p 8 -o p8 fb || exit 1
	stage+=(fb p8)
fi
if run_gnn; then
	caps=
	[ "$GSET" = large ] && caps="-c 5,2"
	"$top/build/aux/kg_gen_enterprise" -o ent -n "$GN" -s 1 2>/dev/null &&
	    kg-ingest -q -o eds --types ent/types.tsv --train ent/train.tsv \
	    --valid ent/valid.tsv --test ent/test.tsv &&
	    kg-encode-attrs fit -q -d eds -s ent/schema.json -o am &&
	    kg-encode-attrs transform -q -j 1 -d eds -m am -o s0 \
	    --shard 0/1 &&
	    kg-encode-attrs merge -q -m am -o feat s0 || exit 1
	rm -rf ent am s0
	stage+=(eds feat)
	for h in $SHAPES; do
		kg-partition -q -p "$h" -m metis -s 1 -o "ep$h" eds &&
		    kg-expand -q -k 2 $caps -s 1 -F feat -p "ep$h" \
		    -o "ex$h" eds || exit 1
		rm -rf "ep$h"
		stage+=("ex$h")
	done
fi

shallow="-q --model_name DistMult --hidden_dim $D --epochs $E --num_thread 1"
shallow="$shallow --batch_size 1000 --neg_sample_size 200 --no_checkpoint"
if [ "$GSET" = large ]; then
	gnn="-q --config $top/examples/configs/rgcn_ray_paper.json"
	gnn="$gnn --model_name RGCN --hidden_dim 32 --epochs $GE --seed 1"
	gnn="$gnn --num_thread 1 --no_checkpoint"
	gset="R-GCN over attributes, enterprise graph of $GN nodes, the pipeline's large-graph setting (examples/configs/rgcn_ray_paper.json: fan-outs 25,10 on blocks, an epoch of 256 batches of 1024 shared out among the ranks, 8 negatives a chunk of 128 exchanged between the ranks, gnn_hidden 64; hidden_dim 32; kg-expand k=2 capped at 5,2 new nodes a hop), 1 thread a rank"
else
	gnn="-q --model_name RGCN --epochs $GE --batch_size 1024 --fanout 10,5"
	gnn="$gnn --blocks --neg_chunk_size 128 --gnn_hidden 32 --hidden_dim 32"
	gnn="$gnn --num_thread 1 --no_checkpoint"
	gset="R-GCN over attributes, enterprise graph of $GN nodes, kg-expand k=2 parts, fan-outs 10,5 on blocks, batch 1024, 1 thread a rank"
fi

# row KIND HOSTS RANKS LINK MODELDIR REFDIR LOAD0: one JSON object a run.
rows=()
row() {
	local m=$5/manifest.json same=null
	[ -n "$6" ] && { cmp -s "$5/entities.npy" "$6/entities.npy" &&
	    same=true || same=false; }
	[ -f "$m" ] || { echo "bench/cluster.sh: no $m" >&2; return 1; }
	rows+=("$(jq -c --arg k "$1" --argjson h "$2" --argjson r "$3" \
	    --arg l "$4" --argjson same "$same" --arg load "$7 -> $(cut \
	    -d' ' -f1-3 /proc/loadavg)" --argjson n "$([ "$1" = gnn_ssgd ] &&
	    echo "$GN" || echo null)" --arg set "$([ "$1" = gnn_ssgd ] &&
	    echo "$GSET" || echo null)" '.figures as $f | {
	    kind: $k, hosts: $h, ranks: $r, link: $l} +
	    (if $n == null then {} else {graph_nodes: $n, setting: $set} end) + {
	    epochs: $f.epochs,
	    seconds_per_epoch: (($f.train_seconds // ($f.seconds_per_epoch * $f.epochs)) / $f.epochs),
	    bytes_sent_per_rank_per_epoch: [$f.bytes_sent_per_rank[] / $f.epochs],
	    bytes_received_per_rank_per_epoch: [$f.bytes_received_per_rank[] / $f.epochs],
	    comm_seconds_per_rank_per_epoch: [$f.comm_seconds_per_rank[] / $f.epochs],
	    final_loss: $f.final_loss, same_bits_as_one_host: $same} +
	    (if $f.steps then {steps_per_rank_per_epoch: ($f.steps / $f.epochs)} else {} end) +
	    (if $f.peak_rss_kib_per_rank then {peak_rss_kib_per_rank: $f.peak_rss_kib_per_rank} else {} end) +
	    {load_average_before_after: $load}' "$m")")
}
S=
h1=
# local NP KIND MODEL ARGS...: NP ranks on this host.
local_run() {
	local np=$1 kind=$2 m=$3 l
	shift 3
	l=$(cut -d' ' -f1-3 /proc/loadavg)
	mpirun -np "$np" kg-train "$@" "$m" && row "$kind" 1 "$np" local "$m" "" "$l"
}
# hosts_run NP KIND LINK MODEL REF ARGS...: NP hosts of one rank each.
hosts_run() {
	local np=$1 kind=$2 link=$3 m=$4 ref=$5 l
	shift 5
	l=$(cut -d' ' -f1-3 /proc/loadavg)
	cluster_mpirun -np "$np" kg-train "$@" "$S/$m" &&
	    row "$kind" "$np" "$np" "$link" "$h1/$m" "$ref" "$l"
}
# cluster N: N hosts (links as CLUSTER_DELAY_MS says) with the inputs.
cluster() {
	cluster_up "$1" || exit 1
	for i in $(seq 1 "$1"); do cp -R "${stage[@]}" "$(cluster_dir "$i")/"; done
	S=$CLUSTER_SCRATCH h1=$(cluster_dir 1)
}
# tbf_links N: every host's links at 1 Gbit/s both ways.
tbf_links() {
	local i
	for i in $(seq 1 "$1"); do
		ip link show "kg${CLUSTER_ID}v$i" >/dev/null 2>&1 &&
		    tc qdisc add dev "kg${CLUSTER_ID}v$i" root tbf rate 1gbit \
		    burst 128kb latency 50ms
		ip netns exec "kg${CLUSTER_ID}h$i" tc qdisc add dev eth0 root \
		    tbf rate 1gbit burst 128kb latency 50ms
	done
}
# two_host_runs LINK SUFFIX: 2 hosts of one rank, each kind asked for.
two_host_runs() {
	run_buckets && hosts_run 2 buckets "$1" "b2$2" b1x2 \
	    $shallow --partitions "$S/p8" "$S/fb"
	run_gnn && hosts_run 2 gnn_ssgd "$1" "g2$2" g1x2 \
	    $gnn --features "$S/feat" --expanded "$S/ex2" "$S/eds"
}

for h in $SHAPES; do
	run_buckets && local_run "$h" buckets "b1x$h" $shallow --partitions p8 fb
	run_gnn && local_run "$h" gnn_ssgd "g1x$h" $gnn --features feat \
	    --expanded "ex$h" eds
done
maxh=$(printf '%s\n' $SHAPES | sort -n | tail -1)
cluster "$maxh"
for h in $SHAPES; do
	run_buckets && hosts_run "$h" buckets veth "b$h" "b1x$h" \
	    $shallow --partitions "$S/p8" "$S/fb"
	run_gnn && hosts_run "$h" gnn_ssgd veth "g$h" "g1x$h" \
	    $gnn --features "$S/feat" --expanded "$S/ex$h" "$S/eds"
done
if has tbf "$LINKS" && has 2 "$SHAPES"; then
	tbf_links 2
	two_host_runs tbf-1gbit s
fi
cluster_down
if has delay0 "$LINKS" && has 2 "$SHAPES"; then
	CLUSTER_DELAY_MS=0 cluster 2
	tbf_links 2
	two_host_runs "tun-delay-0ms-tbf-1gbit" t0
	cluster_down
fi
if has delay "$LINKS" && has 2 "$SHAPES"; then
	CLUSTER_DELAY_MS=$DELAY cluster 2
	tbf_links 2
	two_host_runs "tun-delay-${DELAY}ms-tbf-1gbit" td
	cluster_down
fi
[ ${#rows[@]} -gt 0 ] || { echo "bench/cluster.sh: no run ended" >&2; exit 1; }

setting=$(jq -n --arg e "$E" --arg d "$D" --arg ge "$GE" --arg g "$gset" \
    --arg only "$ONLY" --arg links "$LINKS" --arg delay "$DELAY" '{
    hosts: "network namespaces on one 2-core machine: the hosts share its cores, so times show the cost of TCP and messages, not a speed-up"} +
    (if $only != "gnn" then {fb15k237_buckets: "DistMult d=\($d), 8 random partitions, batch 1000, 200 negatives, 1 thread a rank, \($e) epochs"} else {} end) +
    (if $only != "buckets" then {gnn_ssgd: "\($g), \($ge) epoch(s)"} else {} end) +
    (if ($links | test("delay")) then {delay_links: "tests/cluster/cluster.sh with CLUSTER_DELAY_MS: each host eth0 a TUN device (MTU 9000), tests/cluster/delay.py (a Python process on the same 2 cores) the wire that holds every packet \($delay) ms one way (delay0: 0 ms, the forwarder and the rate limit alone); tc tbf 1 Gbit/s on each host eth0; this kernel has no sch_netem"} else {} end)')
inv=$(jq -n --arg date "$(date -u +%FT%TZ)" \
    --arg commit "$(git -C "$top" rev-parse --short HEAD)" \
    --arg cmd "$invocation" \
    --arg load "$load0 -> $(cut -d' ' -f1-3 /proc/loadavg)" \
    --arg cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" \
    --argjson nproc "$(nproc)" --argjson setting "$setting" '{
    command: $cmd, date: $date, commit: $commit,
    machine: {cpu: $cpu, cores: $nproc},
    load_average_before_after: $load, setting: $setting}')
printf '%s\n' "${rows[@]}" >"$work/rows.json"
# An older file (one invocation, its fields at the top) becomes invocation
# 1; other fields of the file (its "notes") are kept.
old='{invocations: [], runs: []}'
[ -s "$out" ] && old=$(jq 'if has("invocations") then . else
    {invocations: [{id: 1, command: "bench/cluster.sh", date, commit, machine,
     load_average_before_after, setting}],
     runs: [.runs[] | . + {invocation: 1} +
     (if .kind == "gnn_ssgd" then {graph_nodes: 20000, setting: "small"}
      else {} end)]} end' "$out") || exit 1
jq -n --argjson old "$old" --argjson inv "$inv" \
    --slurpfile rows "$work/rows.json" '
    ($old.invocations | length + 1) as $id | $old +
    {invocations: ($old.invocations + [{id: $id} + $inv]),
     runs: ($old.runs + [$rows[] | . + {invocation: $id}])}' \
    >"$work/cluster.json" && mv -f "$work/cluster.json" "$out" || exit 1
echo "bench/cluster.sh: added ${#rows[@]} runs to $out" >&2
