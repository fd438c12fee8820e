# Links with a delay (tests/cluster/cluster.sh with CLUSTER_DELAY_MS: each
# host's eth0 a TUN device, tests/cluster/delay.py the wire that holds
# every packet): bucket training across 2 hosts over them gives the same
# bits as 2 ranks on one host (a slow link changes the time, not the
# result), the traffic really crossed the forwarder, a delay that is not
# a number of milliseconds is refused, and nothing is left behind.  (How
# long the packets wait is measured by bench/cluster.sh, not asserted.)
. "$KG_TOP/tests/cli/lib.sh"
. "$KG_TOP/tests/cluster/cluster.sh"
echo "1..8"
names="up tun-device entities relations through-forwarder bad-delay
teardown-ns teardown-forwarder"
if ! why=$(cluster_usable); then
	for n in $names; do skip "cluster delay $n: $why"; done
	exit 0
fi
if [ ! -c /dev/net/tun ] || ! command -v python3 >/dev/null 2>&1; then
	for n in $names; do skip "cluster delay $n: no /dev/net/tun or python3"; done
	exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
d=$(fixture_data umls)
kg-ingest -q -o ds --train "$d/train.txt.gz" --valid "$d/valid.txt.gz" \
    --test "$d/test.txt.gz" && kg-partition -q -p 4 -o p4 ds ||
    { notok "umls and its partitions"; exit 0; }
t="$KG_BIN/kg-train -q --model_name DistMult --hidden_dim 16 --num_thread 1"
mpirun -np 2 $t --epochs 3 --partitions p4 ds one2 ||
    notok "one-host reference"

# A value that is not milliseconds: refused before anything is made.
( CLUSTER_DELAY_MS=1ms cluster_up 2 ) 2>err
check "cluster delay: CLUSTER_DELAY_MS=1ms is refused, nothing left" sh -c \
    "grep -q 'CLUSTER_DELAY_MS must be milliseconds' err &&
    ! ip netns list | grep -q '^kg$(( $$ % 100000 ))h' && test ! -e cluster"

CLUSTER_DELAY_MS=0.5 cluster_up 2
check "cluster delay: 2 hosts came up, the forwarder running" \
    kill -0 "${CLUSTER_DELAY_PID:-none}"
id=$CLUSTER_ID pid=$CLUSTER_DELAY_PID
check "cluster delay: host 2's eth0 is a TUN device" \
    ip netns exec "kg${id}h2" test -e /sys/class/net/eth0/tun_flags
for i in 1 2; do cp -R ds p4 "$(cluster_dir $i)/"; done
h1=$(cluster_dir 1) S=$CLUSTER_SCRATCH
cluster_mpirun -np 2 $t --epochs 3 --partitions $S/p4 $S/ds $S/m
check "cluster delay: 2 hosts = 1 host x 2 ranks, entities bit for bit" \
    cmp -s one2/entities.npy "$h1/m/entities.npy"
check "cluster delay: 2 hosts = 1 host x 2 ranks, relations bit for bit" \
    cmp -s one2/relations.npy "$h1/m/relations.npy"
# Only the forwarder writes into a TUN device: what host 2 received came
# through it (three epochs move dozens of 2 kB partitions).
rx=$(ip netns exec "kg${id}h2" cat /sys/class/net/eth0/statistics/rx_bytes)
check "cluster delay: host 2 received its traffic through the forwarder ($rx bytes)" \
    test "${rx:-0}" -gt 50000
cluster_down
check "cluster delay: no namespace left" sh -c "! ip netns list | grep -q '^kg${id}h'"
check "cluster delay: the forwarder and its devices are gone" sh -c \
    "! kill -0 $pid 2>/dev/null && ! ip -o link show | grep -q 'kg${id}d'"
