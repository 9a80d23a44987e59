#!/bin/bash
# start.sh LABDIR [NODES] — a throw-away Slurm on this one machine.
#
# Starts munged (own key and socket), slurmctld and one slurmd per fake node
# (n1..nNODES, default 2, all on 127.0.0.1), everything under LABDIR, and waits
# until sinfo shows every node idle. No systemd, no /etc changes.
#
# stdout carries only the lines to eval; progress and errors go to stderr:
#
#	eval "$(slurm/testcluster/start.sh /tmp/lab)"   # or: . /tmp/lab/env.sh
#	srun -N2 -n4 hostname
#	slurm/testcluster/stop.sh /tmp/lab
#
# Ports: slurmctld on BASE, slurmd nK on BASE+K. BASE is $SBENCH_LAB_PORT if
# set, else the first of 6817, 6917, … whose ports are all free, so that two
# labs (two test runs, two developers) can live side by side.
#
# Re-runnable: a lab already running in LABDIR is stopped first, and its
# state, spool and logs are wiped (job ids restart at 1, so an old jobcomp
# file would give stale answers for new jobs).
#
# Exit status: 0 ready, 1 failed (logs' tails printed, daemons stopped),
# 2 usage.
set -euo pipefail

usage() { echo "usage: $0 LABDIR [NODES]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
NODES=${2:-2}
case $NODES in '' | *[!0-9]*) usage ;; esac
if [ "$NODES" -lt 1 ] || [ "$NODES" -gt 64 ]; then
	echo "start.sh: NODES must be 1..64, not $NODES" >&2
	exit 2
fi
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$1"
LAB=$(cd "$1" && pwd -P)

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
{
	cat <<EOF
# Written by sbench slurm/testcluster/start.sh; facts: notes/slurm-lab.md.
ClusterName=sbenchlab
SlurmctldHost=$HOST(127.0.0.1)
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
		echo "NodeName=n$i NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((BASE + i)) CPUs=4 Sockets=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=$NODE_MB State=UNKNOWN"
	done
	echo "PartitionName=debug Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE State=UP"
} >"$CONF"
export SLURM_CONF=$CONF

# Both daemons fork into the background and write their pid files. Their
# stdio goes to files: a daemon holding our stdout open would keep a caller
# that reads it (eval "$(start.sh …)", Go's exec) waiting forever.
slurmctld -f "$CONF" -i </dev/null >>"$LAB/log/slurmctld.stderr" 2>&1 || fail "slurmctld did not start"
for i in $(seq 1 "$NODES"); do
	slurmd -f "$CONF" -N "n$i" </dev/null >>"$LAB/log/slurmd-n$i.stderr" 2>&1 || fail "slurmd n$i did not start"
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
say "ready: $NODES nodes, slurmctld port $BASE, logs in $LAB/log"
cat "$LAB/env.sh"
