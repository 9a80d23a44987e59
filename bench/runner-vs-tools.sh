#!/bin/bash
# runner-vs-tools.sh — sbench-runner's native kernels next to the real tools,
# on 127.0.0.1, in the same run (issue 5):
#
#   latency  one-way at 1 B: our latency kernel (2 ranks started by
#            runner.LocalStep, as `sbench local` does) against NPtcp.
#            Target: ours <= 1.10 x NPtcp's.
#   bw       4 MiB streaming: our bw kernel against iperf3's single stream
#            (-t 5). Target: ours >= 0.90 x iperf3's.
#
# Each figure is taken ROUNDS times (default 3), the tools and our kernels
# interleaved so that a noisy neighbour hits both; the ratios are of the
# medians. Then, for information, NPtcp's bandwidth curve next to our bw
# kernel's, and our latency kernel in poll=block mode (NPtcp's way of
# waiting: no busy core).
#
# Both figures are means, counted alike: NPtcp reports half the mean round
# trip of its best trial; our latency kernel the mean of its iterations'
# half round trips. Our bandwidth is osu_bw's: bytes of all timed windows
# over their time, each window ending when the receiver has read and
# acknowledged every byte of it. MB/s are 10^6 bytes per second.
#
# Exit status: 0 when both targets are met, 1 when one is missed, 2 when a
# tool is missing or a run failed. Starts nothing but its own processes on
# 127.0.0.1, and kills only those.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${ROUNDS:-3}
LAT_ITERS=${LAT_ITERS:-20000}
LAT_TARGET=1.10
BW_TARGET=0.90
WORK=$(mktemp -d)
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
die() { echo "runner-vs-tools: $*" >&2; exit 2; }
for tool in NPtcp iperf3 go; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done
# Ports of our own, away from the tools' defaults (a server may run there).
PORT=$((20000 + $$ % 20000))

cd "$ROOT"
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$WORK/sbench-runner" ./cmd/sbench-runner || die "build sbench-runner"
go build -o "$WORK/runnerpair" ./bench/runnerpair || die "build runnerpair"

# The helpers below write their figures to stdout; call them with a
# redirection, not in $(...), so that PIDS reaches the trap.

# ours KERNEL PARAM... -> rank 0's samples: SIZE VALUE MIN P50 P99 MAX N
ours() {
	local kernel=$1
	shift
	local args=()
	for p in "$@"; do args+=(-param "$p"); done
	"$WORK/runnerpair" -runner "$WORK/sbench-runner" -kernel "$kernel" "${args[@]}" || die "our $kernel kernel failed"
}

# nptcp ARGS... -> NPtcp's output file (bytes, Mbit/s, one-way seconds)
nptcp() {
	local port=$((PORT + 1))
	NPtcp -P "$port" >/dev/null 2>&1 &
	local rpid=$!
	PIDS+=("$rpid")
	sleep 0.3
	# NPtcp can hang (-p 0 with -l 1 deadlocks at 16 bytes): bound it.
	timeout 300 NPtcp -P "$port" -h 127.0.0.1 -o "$WORK/np.out" "$@" >/dev/null 2>&1 || die "NPtcp $* failed"
	wait "$rpid" || true
	cat "$WORK/np.out"
}

# iperf3_mbs -> the receiver's MB/s over 5 s, one stream
iperf3_mbs() {
	local port=$((PORT + 2))
	iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
	local spid=$!
	PIDS+=("$spid")
	sleep 0.3
	timeout 60 iperf3 -c 127.0.0.1 -p "$port" -t 5 -f m >"$WORK/iperf3.out" 2>&1 || { cat "$WORK/iperf3.out" >&2; die "iperf3 failed"; }
	wait "$spid" || true
	awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i+1) == "Mbits/sec") v = $i } END { if (v == "") exit 1; printf "%.1f\n", v / 8 }' "$WORK/iperf3.out" ||
		die "no receiver figure in iperf3's output"
}

field() { awk -v f="$1" '{ print $f }' "$2"; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rounds: $ROUNDS; latency: $LAT_ITERS iterations at 1 B; bandwidth: 4 MiB messages, window 64"
echo
printf '%-6s %12s %14s %16s %12s %14s\n' round "NPtcp us" "latency us" "(p50, poll=block)" "iperf3 MB/s" "bw MB/s"
for r in $(seq 1 "$ROUNDS"); do
	nptcp -l 1 -u 1 -n "$LAT_ITERS" -p 0 >"$WORK/r.np"
	ours latency sizes=1 iterations="$LAT_ITERS" warmup=1000 >"$WORK/r.lat"
	ours latency sizes=1 iterations="$LAT_ITERS" warmup=1000 poll=block >"$WORK/r.blk"
	iperf3_mbs >"$WORK/r.ip"
	ours bw sizes=4M iterations=10 warmup=1 >"$WORK/r.bw"
	np=$(awk '{ printf "%.3f", $3 * 1e6 }' "$WORK/r.np")
	printf '%-6s %12s %14s %16s %12s %14s\n' "$r" "$np" "$(field 2 "$WORK/r.lat")" \
		"($(field 4 "$WORK/r.lat"), $(field 2 "$WORK/r.blk"))" "$(cat "$WORK/r.ip")" "$(field 2 "$WORK/r.bw")"
	echo "$np" >>"$WORK/np"
	field 2 "$WORK/r.lat" >>"$WORK/lat"
	field 2 "$WORK/r.blk" >>"$WORK/blk"
	cat "$WORK/r.ip" >>"$WORK/ip"
	field 2 "$WORK/r.bw" >>"$WORK/bw"
done
np=$(median <"$WORK/np")
lat=$(median <"$WORK/lat")
blk=$(median <"$WORK/blk")
ip=$(median <"$WORK/ip")
bw=$(median <"$WORK/bw")
printf '%-6s %12s %14s %16s %12s %14s\n' median "$np" "$lat" "(-, $blk)" "$ip" "$bw"

echo
echo "bandwidth curve (MB/s): NPtcp ping-pong, our bw kernel streaming (window 64)"
nptcp -u 4194304 >"$WORK/npcurve" # about 40 s
ours bw sizes=1-4M >"$WORK/bwcurve"
printf '%10s %12s %12s\n' bytes NPtcp bw
# NPtcp also measures sizes 3 bytes either side; show the common ones.
awk 'NR == FNR { np[$1] = $2 / 8; next } ($1 in np) { printf "%10d %12.1f %12s\n", $1, np[$1], $2 }' "$WORK/npcurve" "$WORK/bwcurve"

echo
status=0
lat_ratio=$(awk -v a="$lat" -v b="$np" 'BEGIN { printf "%.2f", a / b }')
bw_ratio=$(awk -v a="$bw" -v b="$ip" 'BEGIN { printf "%.2f", a / b }')
if awk -v r="$lat_ratio" -v t="$LAT_TARGET" 'BEGIN { exit !(r <= t) }'; then verdict=met; else verdict=MISSED; status=1; fi
printf 'latency at 1 B: ours %s us / NPtcp %s us = %s (target <= %s): %s\n' "$lat" "$np" "$lat_ratio" "$LAT_TARGET" "$verdict"
if awk -v r="$bw_ratio" -v t="$BW_TARGET" 'BEGIN { exit !(r >= t) }'; then verdict=met; else verdict=MISSED; status=1; fi
printf 'bandwidth at 4 MiB: ours %s MB/s / iperf3 %s MB/s = %s (target >= %s): %s\n' "$bw" "$ip" "$bw_ratio" "$BW_TARGET" "$verdict"
printf 'for information: poll=block latency %s us = %s x NPtcp\n' "$blk" "$(awk -v a="$blk" -v b="$np" 'BEGIN { printf "%.2f", a / b }')"
exit $status
