#!/bin/bash
# start.sh LABDIR [NODES] [--netns] — a throw-away Slurm on this one machine.
#
# Starts munged (own key and socket), slurmctld and one slurmd per fake node
# (n1..nNODES, default 2), everything under LABDIR, and waits until sinfo
# shows every node idle. No systemd, no /etc changes.
#
# Without --netns every fake node is 127.0.0.1: every node pair measures the
# same path. With --netns (root, iproute2) each fake node nK lives in its
# own network namespace with its own address 198.18.0.(10+K)/15, veth link
# and hostname, all on one bridge that holds 198.18.0.1 on the host side
# (RFC 2544's range for benchmarking; nothing leaves the machine). shape.sh
# then slows one node's link. Why nsenter, and why each node needs its own
# UTS and mount namespace (hostname, /etc/hosts): docs/test-cluster.md.
#
# stdout carries only the lines to eval; progress and errors go to stderr:
#
#	eval "$(slurm/testcluster/start.sh /tmp/lab)"   # or: . /tmp/lab/env.sh
#	srun -N2 -n4 hostname
#	slurm/testcluster/stop.sh /tmp/lab
#
# Ports: slurmctld on BASE, slurmd nK on BASE+K (with --netns every slurmd
# listens on BASE+1 of its own address). BASE is $SBENCH_LAB_PORT if set,
# else the first of 6817, 6917, … whose ports are all free, so that two
# labs (two test runs, two developers) can live side by side.
#
# Re-runnable: a lab already running in LABDIR is stopped first, and its
# state, spool and logs are wiped (job ids restart at 1, so an old jobcomp
# file would give stale answers for new jobs). Everything made for a
# --netns lab (namespaces, veths, the bridge) is listed in LABDIR/run/netns
# before it is made, and stop.sh deletes exactly those. Netns labs share
# 198.18.0.0/15, so one runs at a time: a running one found holding it
# makes this refuse; a stale one (a test killed before its clean-up) is
# stopped through its own LABDIR first. When $SBENCH_LAB_REGISTRY names a
# directory, LABDIR is recorded there so that whoever set it (run-tests.sh)
# can stop every lab its tests started, whatever became of the tests.
#
# Exit status: 0 ready, 1 failed (logs' tails printed, daemons stopped,
# namespaces deleted), 2 usage.
set -euo pipefail

usage() { echo "usage: $0 LABDIR [NODES] [--netns]" >&2; exit 2; }
NETNS=0
args=()
for a in "$@"; do
	case $a in
	--netns) NETNS=1 ;;
	-*) usage ;;
	*) args+=("$a") ;;
	esac
done
[ ${#args[@]} -ge 1 ] && [ ${#args[@]} -le 2 ] || usage
NODES=${args[1]:-2}
case $NODES in '' | *[!0-9]*) usage ;; esac
if [ "$NODES" -lt 1 ] || [ "$NODES" -gt 64 ]; then
	echo "start.sh: NODES must be 1..64, not $NODES" >&2
	exit 2
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "${args[0]}"
LAB=$(cd "${args[0]}" && pwd -P)

say() { echo "start.sh: $*" >&2; }

# Debian's packages; only when missing and only as root (a user without root
# gets a clear message instead of a sudo prompt in the middle of a test).
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	if [ "$(id -u)" -ne 0 ]; then
		say "slurmctld or munged is missing; install slurm-wlm and munge (as root: apt-get install slurm-wlm munge)"
		exit 1
	fi
	say "installing slurm-wlm munge"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq slurm-wlm munge >&2
fi
export PATH=$PATH:/usr/sbin:/sbin
if [ "$NETNS" = 1 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		say "--netns needs root (network namespaces, veths, a bridge)"
		exit 1
	fi
	for prog in ip tc nsenter unshare md5sum; do
		command -v "$prog" >/dev/null || { say "--netns needs $prog (apt-get install iproute2 util-linux)"; exit 1; }
	done
fi

# A unix socket path is limited to 108 bytes; fail here with the reason
# rather than with munged's "File name too long".
if [ ${#LAB} -gt 80 ]; then
	say "LABDIR $LAB is too long for munged's socket path (max 80 characters)"
	exit 1
fi

# munged also wants every directory above its socket searchable by all.
d=$LAB
while [ "$d" != / ]; do
	if [ "$(( 0$(stat -c %a "$d") & 1 ))" -eq 0 ]; then
		say "$d is not searchable by others (chmod o+x), which munged requires of every directory above its socket"
		exit 1
	fi
	d=$(dirname "$d")
done

if [ -d "$LAB/run" ]; then
	"$HERE/stop.sh" "$LAB" >&2
fi
if [ -n "${SBENCH_LAB_REGISTRY:-}" ]; then
	mkdir -p "$SBENCH_LAB_REGISTRY"
	grep -qxF "$LAB" "$SBENCH_LAB_REGISTRY/labs" 2>/dev/null || echo "$LAB" >>"$SBENCH_LAB_REGISTRY/labs"
fi

# Wipe only what this script creates: LABDIR may hold other files.
rm -rf "$LAB"/{munge,etc,state,spool,tmp,log,run}
mkdir -p "$LAB"/{munge,etc,state,spool,tmp,log,run}
# munged refuses a socket directory that others cannot traverse ("Socket is
# inaccessible: execute permissions for all required"), and a key or log
# directory that others can write.
chmod 755 "$LAB" "$LAB/munge" "$LAB/log" "$LAB/run"
for i in $(seq 1 "$NODES"); do mkdir -p "$LAB/spool/n$i" "$LAB/tmp/n$i"; done

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if [ -n "${SBENCH_LAB_PORT:-}" ]; then
	BASE=$SBENCH_LAB_PORT
else
	BASE=
	for b in $(seq 6817 100 9817); do
		ok=1
		for p in $(seq "$b" $((b + NODES))); do
			port_free "$p" || { ok=0; break; }
		done
		if [ $ok = 1 ]; then BASE=$b; break; fi
	done
	if [ -z "$BASE" ]; then
		say "no free block of $((NODES + 1)) ports between 6817 and 9881; set SBENCH_LAB_PORT"
		exit 1
	fi
fi

fail() {
	say "$*"
	for f in "$LAB"/log/*; do
		[ -s "$f" ] || continue
		echo "---- tail $f" >&2
		tail -n 20 "$f" >&2
	done
	"$HERE/stop.sh" "$LAB" >&2 || true
	exit 1
}

# The netns lab's network: a bridge with 198.18.0.1 on the host side and a
# namespace per node, joined to it by a veth (eth0 inside). Every object is
# written to run/netns before it is made, so that stop.sh (also the one
# fail calls) deletes all of them and nothing else.
NET_PREFIX=198.18
node_addr() { echo "$NET_PREFIX.0.$((10 + $1))"; }
if [ "$NETNS" = 1 ]; then
	# Another lab's bridge holds the range. A running lab is left alone:
	# refuse. A stale one is stopped through its own LABDIR, which lists
	# what it made: one whose slurmctld is gone, or one started under the
	# netns lock (testcluster.Start) when our caller holds that lock now,
	# so that the process which held it for that lab is gone (a test killed
	# by go test's -timeout). Anything else in the range is not ours:
	# refuse, touch nothing.
	for dev in $(ip -o addr show to "$NET_PREFIX.0.0/15" | awk '{ print $2 }' | sort -u); do
		alias=$(cat "/sys/class/net/$dev/ifalias" 2>/dev/null || true)
		owner=${alias#sbench-lab:}
		[ "$alias" != "$owner" ] && [ -f "$owner/run/netns" ] || continue
		[ "$owner" = "$LAB" ] && continue # stopped below, with the rest of this lab
		pid=$(cat "$owner/run/slurmctld.pid" 2>/dev/null || true)
		cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/${pid:-none}/cmdline" || true)
		case $cmd in *slurmctld*"$owner"*) running=1 ;; *) running=0 ;; esac
		if [ $running = 1 ] && ! { [ "${SBENCH_NETNS_LOCKED:-}" = 1 ] && [ -f "$owner/run/netns-locked" ]; }; then
			say "$NET_PREFIX.0.0/15 is in use by the running lab in $owner (its bridge $dev); stop it first: $HERE/stop.sh $owner"
			exit 1
		fi
		say "stopping the stale netns lab in $owner (its bridge $dev holds $NET_PREFIX.0.1)"
		"$HERE/stop.sh" "$owner" >&2 || true
	done
	taken=$(ip -o addr show to "$NET_PREFIX.0.0/15" | awk '{ print $2 " " $4 }' | tr '\n' ' ')
	if [ -n "$taken" ]; then
		say "$NET_PREFIX.0.0/15 is already in use here ($taken); delete what holds it, or stop the lab that made it"
		exit 1
	fi
	TAG=$(printf '%s' "$LAB" | md5sum | cut -c1-6)
	BRIDGE=sb${TAG}br
	record() { echo "$1 $2" >>"$LAB/run/netns"; }
	: >"$LAB/run/netns"
	# Started by a caller that holds the netns lock for as long as the lab
	# runs: once that lock is free again, the lab is stale (see above).
	[ "${SBENCH_NETNS_LOCKED:-}" = 1 ] && : >"$LAB/run/netns-locked"
	: >"$LAB/etc/netns-nodes"
	record link "$BRIDGE"
	ip link add "$BRIDGE" type bridge || fail "cannot create bridge $BRIDGE"
	ip link set "$BRIDGE" alias "sbench-lab:$LAB"
	ip addr add "$NET_PREFIX.0.1/15" dev "$BRIDGE"
	ip link set "$BRIDGE" up
	for i in $(seq 1 "$NODES"); do
		ns=sbench-$TAG-n$i
		veth=sb${TAG}v$i
		record netns "$ns"
		ip netns add "$ns" || fail "cannot create network namespace $ns"
		record link "$veth"
		ip link add "$veth" type veth peer name eth0 netns "$ns" || fail "cannot create veth $veth"
		ip link set "$veth" master "$BRIDGE" up
		ip -n "$ns" link set lo up
		ip -n "$ns" addr add "$(node_addr "$i")/15" dev eth0
		ip -n "$ns" link set eth0 up
		echo "n$i $ns $veth $(node_addr "$i")" >>"$LAB/etc/netns-nodes"
	done
fi

# munge: own key (1 KiB random, 0600) and socket, so the lab never needs nor
# disturbs a system munged.
SOCK=$LAB/munge/munge.socket
head -c 1024 /dev/urandom >"$LAB/munge/munge.key"
chmod 600 "$LAB/munge/munge.key"
munged --key-file="$LAB/munge/munge.key" --socket="$SOCK" \
	--pid-file="$LAB/run/munged.pid" --log-file="$LAB/log/munged.log" \
	--seed-file="$LAB/munge/munge.seed" </dev/null >>"$LAB/log/munged.stderr" 2>&1 ||
	fail "munged did not start"
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
munge -n -S "$SOCK" | unmunge -S "$SOCK" >/dev/null || fail "munge credential round trip failed"

HOST=$(hostname)
MEM_MB=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
# The fake nodes share the machine: split its memory between them so that a
# memory-aware scheduler never hands out more than exists.
NODE_MB=$((MEM_MB / NODES))
[ "$NODE_MB" -ge 1 ] || NODE_MB=1
USER_NAME=$(id -un)
CONF=$LAB/etc/slurm.conf
CTLD_ADDR=127.0.0.1
[ "$NETNS" = 1 ] && CTLD_ADDR=$NET_PREFIX.0.1
{
	cat <<EOF
# Written by sbench slurm/testcluster/start.sh; facts: docs/test-cluster.md.
ClusterName=sbenchlab
SlurmctldHost=$HOST($CTLD_ADDR)
SlurmctldPort=$BASE
SlurmUser=$USER_NAME
SlurmdUser=$USER_NAME
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$LAB/state
SlurmdSpoolDir=$LAB/spool/%n
# One TmpFS per node, else PMIx's second slurmstepd fails with "Cannot create
# directory /tmp/spmix_appdir_…: File exists".
TmpFS=$LAB/tmp/%n
SlurmctldPidFile=$LAB/run/slurmctld.pid
SlurmdPidFile=$LAB/run/slurmd-%n.pid
SlurmctldLogFile=$LAB/log/slurmctld.log
SlurmdLogFile=$LAB/log/slurmd-%n.log
MailProg=/bin/true
CommunicationParameters=NoInAddrAny
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
SlurmdParameters=config_overrides
ReturnToService=2
EnforcePartLimits=ALL
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$LAB/log/jobcomp.txt
MinJobAge=600
KillWait=5
InactiveLimit=0
# A killed slurmd is noticed in seconds, not Slurm's default 5 minutes:
# the tests kill one to see a job requeued after NODE_FAIL.
SlurmdTimeout=10
EOF
	for i in $(seq 1 "$NODES"); do
		if [ "$NETNS" = 1 ]; then
			# Each slurmd has an address of its own: one port for all.
			echo "NodeName=n$i NodeHostname=n$i NodeAddr=$(node_addr "$i") Port=$((BASE + 1)) CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=$NODE_MB State=UNKNOWN"
		else
			echo "NodeName=n$i NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((BASE + i)) CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=$NODE_MB State=UNKNOWN"
		fi
	done
	echo "PartitionName=debug Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE State=UP"
} >"$CONF"
export SLURM_CONF=$CONF

# wait_pidfile FILE WHAT: a daemon writes its pid file a moment after it
# forks. A start that fails later (a slurmd that will not start) cleans up
# with stop.sh, which finds daemons by their pid files only: without the
# wait, one not yet written was left running.
wait_pidfile() {
	local deadline=$((SECONDS + 10))
	until [ -s "$1" ]; do
		[ $SECONDS -lt $deadline ] || fail "$2 wrote no pid file ($1) in 10 s"
		sleep 0.05
	done
}

# Both daemons fork into the background and write their pid files. Their
# stdio goes to files: a daemon holding our stdout open would keep a caller
# that reads it (eval "$(start.sh …)", Go's exec) waiting forever.
slurmctld -f "$CONF" -i </dev/null >>"$LAB/log/slurmctld.stderr" 2>&1 || fail "slurmctld did not start"
wait_pidfile "$LAB/run/slurmctld.pid" slurmctld
for i in $(seq 1 "$NODES"); do
	if [ "$NETNS" = 1 ]; then
		# nsenter, not "ip netns exec": that remounts /sys, and slurmd then
		# finds no /sys/fs/cgroup. Its own hostname and /etc/hosts, or
		# srun's callbacks (to the address of srun's hostname) all go to
		# 127.0.0.1 and fail.
		{
			echo "127.0.0.1 localhost"
			echo "$CTLD_ADDR $HOST"
			for j in $(seq 1 "$NODES"); do echo "$(node_addr "$j") n$j"; done
		} >"$LAB/etc/hosts-n$i"
		nsenter --net="/var/run/netns/sbench-$TAG-n$i" unshare --uts --mount --propagation private \
			bash -c 'hostname "$1" && mount --bind "$2" /etc/hosts && exec slurmd -f "$3" -N "$1"' \
			slurmd-netns "n$i" "$LAB/etc/hosts-n$i" "$CONF" \
			</dev/null >>"$LAB/log/slurmd-n$i.stderr" 2>&1 || fail "slurmd n$i did not start in its namespace"
	else
		slurmd -f "$CONF" -N "n$i" </dev/null >>"$LAB/log/slurmd-n$i.stderr" 2>&1 || fail "slurmd n$i did not start"
	fi
	wait_pidfile "$LAB/run/slurmd-n$i.pid" "slurmd n$i"
done

# Ready when every node is idle (typically 0.3–0.6 s).
deadline=$((SECONDS + 30))
while :; do
	states=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u || true)
	idle=$(printf '%s\n' "$states" | awk '$2 == "idle"' | wc -l)
	[ "$idle" -eq "$NODES" ] && break
	if [ $SECONDS -ge $deadline ]; then
		fail "nodes not idle after 30 s: $(printf '%s' "$states" | tr '\n' ' ')"
	fi
	sleep 0.2
done

cat >"$LAB/env.sh" <<EOF
export SLURM_CONF=$CONF
export SBENCH_LAB=$LAB
EOF
if [ "$NETNS" = 1 ]; then
	echo "export SBENCH_LAB_NETNS=$LAB/etc/netns-nodes" >>"$LAB/env.sh"
	say "ready: $NODES nodes in network namespaces ($NET_PREFIX.0.11-$(node_addr "$NODES") on bridge $BRIDGE), slurmctld $CTLD_ADDR port $BASE, logs in $LAB/log"
else
	say "ready: $NODES nodes, slurmctld port $BASE, logs in $LAB/log"
fi

cat "$LAB/env.sh"
