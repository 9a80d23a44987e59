#!/bin/bash
# shape.sh LABDIR NODE RATE [both|out|in] — slow one fake node's link in a
# lab that start.sh --netns started: a token bucket (tc tbf) at RATE
# (tc's units: 1gbit, 500mbit) on
#
#	out   the node's own end of its veth (eth0 in its namespace): what the
#	      node sends — every link NODE→x
#	in    the bridge's end (the veth on the host side): what the node
#	      receives — every link x→NODE
#	both  both ends (the default): a slow port or cable
#
# shape.sh LABDIR NODE off takes the shaping off again. Only tbf and htb
# work in this kernel (no netem: slowness is emulated by rate, not delay;
# see docs/test-cluster.md). The qdiscs go with the veth when stop.sh
# deletes the lab.
#
# Exit status: 0 done, 1 failed, 2 usage.
set -euo pipefail

usage() { echo "usage: $0 LABDIR NODE RATE [both|out|in] | $0 LABDIR NODE off" >&2; exit 2; }
[ $# -ge 3 ] && [ $# -le 4 ] || usage
LAB=$1 NODE=$2 RATE=$3 DIR=${4:-both}
case $DIR in both | out | in) ;; *) usage ;; esac
case $RATE in off) ;; [0-9]*bit | [0-9]*bps) ;; *) usage ;; esac
export PATH=$PATH:/usr/sbin:/sbin
say() { echo "shape.sh: $*" >&2; }

NODES=$LAB/etc/netns-nodes
[ -f "$NODES" ] || { say "$LAB is not a netns lab (no $NODES; start it with start.sh LABDIR N --netns)"; exit 1; }
line=$(awk -v n="$NODE" '$1 == n' "$NODES")
[ -n "$line" ] || { say "no node $NODE in $NODES"; exit 1; }
read -r _ ns veth _ <<<"$line"

# tbf: a burst of 256 KiB keeps a 1 Gbit/s bucket near its rate for the
# 64 KiB segments veth passes (measured: 0.94 Gbit/s with iperf3), and a
# latency of 20 ms bounds the queue instead of dropping at once.
set_qdisc() { # DEV [-n NS]
	local dev=$1
	shift
	if [ "$RATE" = off ]; then
		tc "$@" qdisc del dev "$dev" root 2>/dev/null || true
		return
	fi
	tc "$@" qdisc replace dev "$dev" root tbf rate "$RATE" burst 256kb latency 20ms
}

if [ "$RATE" = off ]; then
	set_qdisc eth0 -n "$ns"
	set_qdisc "$veth"
	say "$NODE: shaping off"
	exit 0
fi
case $DIR in
both | out) set_qdisc eth0 -n "$ns" ;;
esac
case $DIR in
both | in) set_qdisc "$veth" ;;
esac
say "$NODE: $RATE ($DIR)"
