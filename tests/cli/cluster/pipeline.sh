# make -f pipelines/enterprise.mk HOSTFILE=...: the pipeline started on
# host 1 of tests/cluster encodes the attributes and trains on 2 hosts
# (kg-encode-attrs --ship-inputs, kg-train --ship_inputs: host 2 gets its
# inputs over MPI) and evaluates on host 1; the features and the metrics
# equal the same pipeline's on one host, and host 2's disk is left as it
# was.
. "$KG_TOP/tests/cli/lib.sh"
. "$KG_TOP/tests/cluster/cluster.sh"
plan 6
if ! why=$(cluster_usable); then
	skip_all "cluster pipeline: $why"
fi
if ! command -v make >/dev/null || ! command -v jq >/dev/null ||
    [ ! -x "$KG_BUILD/aux/kg_gen_enterprise" ]; then
	skip_all "cluster pipeline: make, jq or kg_gen_enterprise is missing"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mk=$KG_TOP/pipelines/enterprise.mk
v="NODES=300 RANKS=2 EPOCHS=2 DIM=16"
make -s -f "$mk" $v OUT="$PWD/ref" all >ref.log 2>&1 ||
    notok "cluster pipeline: the one-host run: $(tail -3 ref.log)"

cluster_up 2 || { notok "cluster pipeline: 2 hosts came up"; exit 1; }
S=$CLUSTER_SCRATCH h1=$(cluster_dir 1) h2=$(cluster_dir 2)
mpi="mpirun --allow-run-as-root --mca plm_rsh_agent $CLUSTER/agent"
mpi="$mpi --mca btl tcp,self --mca btl_tcp_if_include $CLUSTER_NET.0/24"
mpi="$mpi --mca oob_tcp_if_include $CLUSTER_NET.0/24"
mpi="$mpi --mca mpi_yield_when_idle 1 -x PMIX_MCA_gds"
cluster_exec 1 env PMIX_MCA_gds=hash make -s -f "$mk" $v \
    HOSTFILE="$CLUSTER/hostfile" "MPIRUN=$mpi" OUT="$S/out" all >log 2>&1
check "cluster pipeline: HOSTFILE= trains and evaluates" \
    test -s "$h1/out/metrics.json"
check "cluster pipeline: kg-train ran on the hostfile's hosts with shipped inputs" \
    grep -q -- "--hostfile $CLUSTER/hostfile.*--ship_inputs" "$h1/out/settings/model.cmd"
check "cluster pipeline: the attributes were encoded on the hostfile's hosts, inputs shipped" \
    grep -q -- "--hostfile $CLUSTER/hostfile.*transform --merge --ship-inputs" "$h1/out/settings/features.cmd"
same=1
for f in ref/features/*.npy; do
	cmp -s "$f" "$h1/out/features/$(basename "$f")" || same=0
done
check "cluster pipeline: the features equal the one-host pipeline's, byte for byte" \
    test $same = 1 -a "$(ls "$h1"/out/features/*.npy 2>/dev/null | wc -l)" -eq "$(ls ref/features/*.npy | wc -l)"
check "cluster pipeline: the metrics equal the one-host pipeline's" test \
    "$(jq -c .metrics.both ref/metrics.json)" = "$(jq -c .metrics.both "$h1/out/metrics.json" 2>/dev/null)"
check "cluster pipeline: host 2's disk is as it was" \
    test -z "$(ls -A "$h2" | grep -v '^\.tmp$')" -a -z "$(ls -A "$h2/.tmp")"
