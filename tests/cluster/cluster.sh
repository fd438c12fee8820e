# A small cluster on this machine, for tests of what crosses a network:
# source this file, then
#
#   cluster_up N [SLOTS]   N hosts (2..8), each a network namespace on a
#                          bridge of its own with its own address, its own
#                          host name and its own private scratch directory,
#                          seen by its processes at $CLUSTER_SCRATCH (the
#                          same path on every host, a different directory
#                          behind it), and its own TMPDIR; writes
#                          $CLUSTER/hostfile (SLOTS slots a host, default 1)
#   cluster_dir I          host I's scratch directory as this shell sees it
#                          (I from 1), to stage inputs or read outputs
#   cluster_exec I CMD...  run CMD as on host I: in its namespaces, with its
#                          scratch directory at $CLUSTER_SCRATCH (a make
#                          pipeline started there, with mpirun's first
#                          rank local to it)
#   cluster_mpirun ARGS... mpirun over the hosts: Open MPI's daemons are
#                          started in the namespaces by $CLUSTER/agent (as
#                          ssh would start them), and ranks talk over TCP
#                          between the hosts' addresses only (btl tcp,self)
#   cluster_down           everything removed: processes in the hosts,
#                          namespaces, links, the bridge, the directories
#
# The hosts share this machine's cores, which Open MPI cannot see (each
# host has one slot): cluster_mpirun makes idle ranks yield the core
# (mpi_yield_when_idle) instead of spinning on it.
#
# CLUSTER_DELAY_MS=D (set before cluster_up): links that hold every packet
# D milliseconds (0.5, say) one way.  This kernel has no sch_netem, so tc
# cannot delay packets; instead each host's eth0 is a TUN device and
# tests/cluster/delay.py, a process of this shell's, is the wire between
# them (and this namespace's kg<ID>d, which takes the bridge's place): it
# reads each packet a host sends, holds it D ms and hands it to the host
# it is addressed to.  The links' MTU is then CLUSTER_MTU (default 9000,
# jumbo frames: the forwarder's cost is per packet).  D=0 gives the same
# links without the wait, to tell the forwarder's cost from the delay's.
# Needs python3 and /dev/net/tun.  Unset: veth links on a bridge.
#
# cluster_up installs cluster_down on EXIT, INT and TERM, so nothing is
# left behind when a test fails or is interrupted.  Only the hosts'
# addresses (a 10.231.X.0/24 no other interface here uses) and loopback
# carry traffic.  cluster_usable says why a cluster cannot be made here
# (not root, no `ip netns`, no unshare) and returns 1 then.
#
# Why namespaces: each "host" gets its own network stack, so Open MPI
# must use TCP between them (no shared memory), and its own view of the
# scratch path, so nothing can rely on a shared filesystem there.

# This file's folder: delay.py lives beside it.
CLUSTER_HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

cluster_usable() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "not root (network namespaces need root)"
		return 1
	fi
	for c in ip unshare mpirun; do
		if ! command -v $c >/dev/null 2>&1; then
			echo "no $c command"
			return 1
		fi
	done
	if ! ip netns add "kgprobe$$" 2>/dev/null; then
		echo "ip netns add is refused here"
		return 1
	fi
	ip netns del "kgprobe$$"
	return 0
}

# A free 10.231.X.0/24 (X from the process ID, then the next free one).
cluster_subnet() {
	local x=$(( $$ % 250 + 1 )) i
	for i in $(seq 0 249); do
		if ! ip -o -4 addr show | grep -q " 10\.231\.$x\."; then
			echo "10.231.$x"
			return 0
		fi
		x=$(( x % 250 + 1 ))
	done
	return 1
}

cluster_up() {
	local n=$1 slots=${2:-1} i ns net
	CLUSTER_ID=$(( $$ % 100000 ))
	CLUSTER=$(pwd)/cluster
	CLUSTER_SCRATCH=$CLUSTER/scratch
	CLUSTER_N=$n
	CLUSTER_BR=kgb$CLUSTER_ID
	CLUSTER_DELAY_PID=
	net=$(cluster_subnet) || { echo "cluster: no free subnet" >&2; return 1; }
	CLUSTER_NET=$net
	# Keep a trap the test had on EXIT (a TAP plan printed at exit).
	CLUSTER_ON_EXIT=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT\$/\1/")
	trap 'cluster_down; eval "$CLUSTER_ON_EXIT"' EXIT
	trap 'cluster_down; exit 130' INT
	trap 'cluster_down; exit 143' TERM
	mkdir -p "$CLUSTER_SCRATCH" || return 1
	: >"$CLUSTER/hosts" && : >"$CLUSTER/hostfile" || return 1
	if [ -n "${CLUSTER_DELAY_MS:-}" ]; then
		cluster_delay_links "$n" "$net" || return 1
	else
		ip link add "$CLUSTER_BR" type bridge || return 1
		ip addr add "$net.254/24" dev "$CLUSTER_BR" || return 1
		ip link set "$CLUSTER_BR" up || return 1
	fi
	for i in $(seq 1 "$n"); do
		ns=kg${CLUSTER_ID}h$i
		if [ -z "${CLUSTER_DELAY_MS:-}" ]; then
			ip netns add "$ns" || return 1
			ip link add "kg${CLUSTER_ID}v$i" type veth peer \
			    name eth0 netns "$ns" || return 1
			ip link set "kg${CLUSTER_ID}v$i" master \
			    "$CLUSTER_BR" up || return 1
		fi
		ip -n "$ns" addr add "$net.$i/24" dev eth0 || return 1
		ip -n "$ns" link set eth0 up || return 1
		ip -n "$ns" link set lo up || return 1
		mkdir -p "$CLUSTER/disks/host$i/.tmp" || return 1
		echo "$net.$i $ns $CLUSTER/disks/host$i" >>"$CLUSTER/hosts"
		echo "$net.$i slots=$slots" >>"$CLUSTER/hostfile"
	done
	# Open MPI starts a daemon with "AGENT HOST COMMAND-LINE", as it
	# would with ssh: the agent enters HOST's namespaces (network, and
	# new mount and host-name ones), puts HOST's directory behind the
	# scratch path and runs the command line there.  (Every host's
	# directory stays visible at its own path, so that a pipeline
	# started on host 1 can start host 2's daemon; kgpipe is given the
	# scratch path only.)
	cat >"$CLUSTER/agent" <<AGENT
#!/bin/sh
host=\$1; shift
set -- \$(awk -v h="\$host" '\$1 == h { print \$2, \$3 }' "$CLUSTER/hosts") "\$*"
[ \$# -eq 3 ] || { echo "cluster agent: unknown host \$host" >&2; exit 1; }
exec ip netns exec "\$1" unshare -mu sh -c 'hostname "\$0" &&
    mount --bind "\$1" "$CLUSTER_SCRATCH" &&
    TMPDIR="$CLUSTER_SCRATCH/.tmp" && export TMPDIR && eval "\$2"' "\$@"
AGENT
	chmod +x "$CLUSTER/agent"
}

# cluster_delay_links N NET: the namespaces of N hosts, each with a TUN
# eth0, and this namespace's kg<ID>d at NET.254, wired by delay.py.
cluster_delay_links() {
	local n=$1 net=$2 i ns devs
	case $CLUSTER_DELAY_MS in
	*[!0-9.]* | "" | .* | *. | *.*.*)
		echo "cluster: CLUSTER_DELAY_MS must be milliseconds, such" \
		    "as 0.5, not '$CLUSTER_DELAY_MS'" >&2
		return 1 ;;
	esac
	command -v python3 >/dev/null 2>&1 ||
	    { echo "cluster: CLUSTER_DELAY_MS needs python3" >&2; return 1; }
	[ -c /dev/net/tun ] ||
	    { echo "cluster: CLUSTER_DELAY_MS needs /dev/net/tun" >&2; return 1; }
	devs="-,kg${CLUSTER_ID}d,$net.254"
	for i in $(seq 1 "$n"); do
		ns=kg${CLUSTER_ID}h$i
		ip netns add "$ns" || return 1
		devs="$devs $ns,eth0,$net.$i"
	done
	python3 "$CLUSTER_HARNESS/delay.py" "$CLUSTER_DELAY_MS" \
	    "${CLUSTER_MTU:-9000}" "$CLUSTER/delay.ready" $devs &
	CLUSTER_DELAY_PID=$!
	for _ in $(seq 1 100); do
		[ -s "$CLUSTER/delay.ready" ] && break
		kill -0 "$CLUSTER_DELAY_PID" 2>/dev/null ||
		    { echo "cluster: delay.py failed" >&2; return 1; }
		sleep 0.1
	done
	[ -s "$CLUSTER/delay.ready" ] ||
	    { echo "cluster: delay.py did not start" >&2; return 1; }
	ip addr add "$net.254/24" dev "kg${CLUSTER_ID}d" &&
	    ip link set "kg${CLUSTER_ID}d" mtu "${CLUSTER_MTU:-9000}" up ||
	    return 1
	for i in $(seq 1 "$n"); do
		ip -n "kg${CLUSTER_ID}h$i" link set eth0 \
		    mtu "${CLUSTER_MTU:-9000}" || return 1
	done
}

cluster_dir() {
	echo "$CLUSTER/disks/host$1"
}

cluster_exec() {
	local i=$1 q= a
	shift
	for a in "$@"; do
		q="$q '$(printf '%s' "$a" | sed "s/'/'\\\\''/g")'"
	done
	"$CLUSTER/agent" "$CLUSTER_NET.$i" "$q"
}

cluster_mpirun() {
	PMIX_MCA_gds=hash OMPI_MCA_plm_rsh_agent=$CLUSTER/agent \
	    mpirun --allow-run-as-root --hostfile "$CLUSTER/hostfile" \
	    --mca btl tcp,self --mca btl_tcp_if_include "$CLUSTER_NET.0/24" \
	    --mca mpi_yield_when_idle 1 \
	    --mca oob_tcp_if_include "$CLUSTER_NET.0/24" \
	    -x PMIX_MCA_gds "$@" 2> >(grep -v 'plm:rsh: Warning: setpgid' >&2)
}

cluster_down() {
	local i ns
	trap - INT TERM
	trap "${CLUSTER_ON_EXIT:-}" EXIT
	[ -n "${CLUSTER_ID:-}" ] || return 0
	for i in $(seq 1 "${CLUSTER_N:-0}"); do
		ns=kg${CLUSTER_ID}h$i
		if ip netns list 2>/dev/null | grep -q "^$ns\b"; then
			ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 \
			    2>/dev/null
			ip netns del "$ns" 2>/dev/null
		fi
		ip link del "kg${CLUSTER_ID}v$i" 2>/dev/null
	done
	ip link del "$CLUSTER_BR" 2>/dev/null
	if [ -n "${CLUSTER_DELAY_PID:-}" ]; then
		# Its TUN devices go with it.
		kill "$CLUSTER_DELAY_PID" 2>/dev/null
		wait "$CLUSTER_DELAY_PID" 2>/dev/null
		CLUSTER_DELAY_PID=
	fi
	rm -rf "$CLUSTER"
	CLUSTER_ID=
}
