#!/bin/bash
# matrix-netns.sh — wall time of the matrix kernel's step on 4, 8 and 16
# fake nodes that each have their own network namespace and link
# (slurm/testcluster/start.sh --netns), to show how it grows with the node
# count: linearly with the rounds schedule (n−1 rounds of n/2 pairs at
# once), quadratically with the sequential one (n(n−1) pairs one by one).
#
# Usage: bench/matrix-netns.sh [NODES…]        (default: 4 8 16)
#   SCHEDULE=rounds|sequential   the kernel's schedule parameter; unset: the
#                                kernel's default (and the only one when
#                                sbench-runner has no schedule parameter)
#   REPEATS=3                    matrix runs per node count (the median is
#                                reported)
#   LAB=/tmp/sbench-bench-netns  where the throw-away clusters live
#
# Takes the shared Slurm lock (/tmp/sbench-slurm.lock) for the whole run,
# starts one netns lab per node count and stops it (namespaces, veths and
# bridge deleted) whatever happens. The time is the runner's own, from the
# bundle: start to end of the step, bootstrap included. Prints one line per
# node count and the growth from the smallest count against n−1 (linear)
# and n(n−1) (quadratic).
set -euo pipefail
if [ -z "${SBENCH_BENCH_LOCKED:-}" ]; then
	exec env SBENCH_BENCH_LOCKED=1 flock /tmp/sbench-slurm.lock "$0" "$@"
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAB=${LAB:-/tmp/sbench-bench-netns}
REPEATS=${REPEATS:-3}
NODES=("$@")
[ ${#NODES[@]} -gt 0 ] || NODES=(4 8 16)
WORK=$(mktemp -d)
cd "$ROOT"
make -s build >/dev/null
export PATH="$ROOT/bin:$PATH"
unset SBENCH_BIND
trap '"$ROOT/slurm/testcluster/stop.sh" "$LAB" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

param=""
if [ -n "${SCHEDULE:-}" ]; then
	if ! sbench-runner run --help 2>&1 | grep -q 'schedule'; then
		echo "matrix-netns.sh: this sbench-runner's matrix kernel has no schedule parameter (SCHEDULE=$SCHEDULE)" >&2
		exit 2
	fi
	param=", schedule = \"$SCHEDULE\""
fi

# seconds START END: the difference of two RFC 3339 times.
seconds() { echo "$(date -d "$2" +%s.%N) $(date -d "$1" +%s.%N)" | awk '{ printf "%.3f", $1 - $2 }'; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-6s %-7s %-11s %10s %12s %s\n' nodes pairs schedule "median s" "ms per pair" "runs (s)"
first_n="" first_t=""
for n in "${NODES[@]}"; do
	"$ROOT/slurm/testcluster/start.sh" "$LAB" "$n" --netns >"$WORK/env.sh" 2>"$WORK/start.err" || { cat "$WORK/start.err" >&2; exit 1; }
	# shellcheck disable=SC1091
	. "$WORK/env.sh"
	dir="$WORK/n$n"
	mkdir -p "$dir" && cd "$dir"
	cat >c.toml <<TOML
[campaign]
name = "matrix-netns"
[slurm]
nodes = $n
ntasks_per_node = 1
time = "00:20:00"
[runner]
bootstrap_timeout = "120s"
[[benchmark]]
name = "matrix"
kernel = "matrix"
repeats = $REPEATS
params = { latency_size = "8", bandwidth_size = "1MiB"$param }
TOML
	sbench submit c.toml --db m.db >/dev/null 2>&1
	sbench status --db m.db --wait --interval 500ms --ingest >status.out 2>&1 || { cat status.out >&2; exit 1; }
	times=()
	sched=""
	for b in sbench-runs/matrix-netns/*.json; do
		s=$(sed -n 's/^  "start": "\(.*\)",$/\1/p' "$b")
		e=$(sed -n 's/^  "end": "\(.*\)",$/\1/p' "$b")
		grep -q '"status": "ok"' "$b" || { echo "matrix-netns.sh: $b is not ok" >&2; exit 1; }
		times+=("$(seconds "$s" "$e")")
		sched=$(grep -o '"schedule": "[a-z]*"' "$b" | head -1 | cut -d'"' -f4 || true)
	done
	t=$(printf '%s\n' "${times[@]}" | median)
	pairs=$((n * (n - 1)))
	printf '%-6s %-7s %-11s %10s %12s %s\n' "$n" "$pairs" "${sched:-sequential*}" "$t" \
		"$(awk -v t="$t" -v p="$pairs" 'BEGIN { printf "%.1f", 1000 * t / p }')" "${times[*]}"
	if [ -z "$first_n" ]; then
		first_n=$n first_t=$t
	else
		awk -v n0="$first_n" -v t0="$first_t" -v n="$n" -v t="$t" 'BEGIN {
			printf "       %d→%d nodes: time ×%.2f; linear (n−1) ×%.2f, quadratic (n(n−1)) ×%.2f\n", n0, n, t / t0, (n - 1) / (n0 - 1), n * (n - 1) / (n0 * (n0 - 1)) }'
	fi
	cd "$ROOT"
	"$ROOT/slurm/testcluster/stop.sh" "$LAB" >/dev/null
done
echo "(* no schedule tag in the bundles: a kernel that measures one pair at a time)"
