#!/bin/bash
# stop.sh LABDIR — stop the lab that start.sh started in LABDIR.
#
# Jobs still in the lab are cancelled first (through Slurm, so their
# slurmstepd and tasks end cleanly), then slurmd(s), slurmctld and munged are
# stopped by their pid files — never by name, so a system Slurm or another lab
# is left alone. A pid is signalled only while /proc/PID/cmdline still names
# the daemon and LABDIR (pid files outlive their processes; pids get reused).
# A --netns lab's namespaces, veths and bridge are then deleted: exactly
# those start.sh listed in LABDIR/run/netns, whether or not it got as far
# as starting anything.
#
# Exit status: 0 all stopped (or nothing was running), 1 a process survived
# SIGKILL or a namespace or link could not be deleted, 2 usage.
set -uo pipefail

[ $# -eq 1 ] || { echo "usage: $0 LABDIR" >&2; exit 2; }
[ -d "$1" ] || exit 0
LAB=$(cd "$1" && pwd -P)
RUN=$LAB/run
[ -d "$RUN" ] || exit 0
export PATH=$PATH:/usr/sbin:/sbin

say() { echo "stop.sh: $*" >&2; }

# ours PID PROG: PID is PROG started for this lab.
ours() {
	local cmd
	cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") || return 1
	case $cmd in *"$2"*"$LAB"* | *"$LAB"*"$2"*) return 0 ;; esac
	return 1
}

# Cancel what is left while the daemons are still there to do it cleanly.
CONF=$LAB/etc/slurm.conf
ctld=$(cat "$RUN/slurmctld.pid" 2>/dev/null || true)
if [ -f "$CONF" ] && [ -n "$ctld" ] && ours "$ctld" slurmctld; then
	jobs=$(SLURM_CONF=$CONF timeout 10 squeue -h -o '%i' 2>/dev/null | tr '\n' ' ')
	if [ -n "${jobs// /}" ]; then
		say "cancelling jobs $jobs"
		# shellcheck disable=SC2086 # one argument per job id
		SLURM_CONF=$CONF timeout 10 scancel $jobs 2>/dev/null || true
		for _ in $(seq 100); do
			left=$(SLURM_CONF=$CONF timeout 10 squeue -h -o '%i' 2>/dev/null | wc -l)
			[ "$left" -eq 0 ] && break
			sleep 0.1
		done
	fi
fi

# alive PID: running; a zombie is not (a container's PID 1 may take seconds
# to reap the daemons it inherited, and kill -0 succeeds on zombies).
alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# stop PROG PIDFILE…: TERM them all, wait up to 5 s each, then KILL.
status=0
stop() {
	local prog=$1 f pid pids=()
	shift
	for f in "$@"; do
		[ -e "$f" ] || continue
		pid=$(cat "$f" 2>/dev/null || true)
		rm -f "$f"
		case $pid in '' | *[!0-9]*) continue ;; esac
		if ours "$pid" "$prog" && alive "$pid"; then
			kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
		fi
	done
	for pid in "${pids[@]}"; do
		for _ in $(seq 100); do
			alive "$pid" || break
			sleep 0.05
		done
		if alive "$pid" && ours "$pid" "$prog"; then
			say "$prog (pid $pid) ignored SIGTERM for 5 s; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null
			sleep 0.2
			if alive "$pid"; then
				say "$prog (pid $pid) survived SIGKILL"
				status=1
			fi
		fi
	done
}

stop slurmd "$RUN"/slurmd-*.pid
stop slurmctld "$RUN/slurmctld.pid"
stop munged "$RUN/munged.pid"

# The netns lab's network: namespaces (deleting one deletes its end of the
# veth, and so the veth), then what is left of the links, the bridge last.
# A bridge is deleted only while its alias still names this lab.
if [ -f "$RUN/netns" ]; then
	left=0
	namespaces=() links=() bridges=()
	while read -r kind name; do
		case $kind in
		netns) namespaces+=("$name") ;;
		link) links+=("$name") ;;
		esac
	done <"$RUN/netns"
	for name in "${namespaces[@]}"; do
		[ -e "/var/run/netns/$name" ] || continue
		ip netns del "$name" 2>/dev/null || { say "cannot delete network namespace $name"; left=1; }
	done
	for name in "${links[@]}"; do
		[ -e "/sys/class/net/$name" ] || continue
		if [ -d "/sys/class/net/$name/bridge" ]; then
			bridges+=("$name")
			continue
		fi
		ip link del "$name" 2>/dev/null || [ ! -e "/sys/class/net/$name" ] || { say "cannot delete link $name"; left=1; }
	done
	for name in "${bridges[@]}"; do
		alias=$(cat "/sys/class/net/$name/ifalias" 2>/dev/null || true)
		if [ "$alias" != "sbench-lab:$LAB" ]; then
			say "bridge $name is not this lab's (its alias is \"$alias\"); left alone"
			continue
		fi
		ip link del "$name" 2>/dev/null || { say "cannot delete bridge $name"; left=1; }
	done
	if [ $left = 0 ]; then
		rm -f "$RUN/netns"
	else
		status=1
	fi
fi
exit $status
