#!/bin/bash
# steps-vs-jobs.sh — the same 20-point sweep packed as ONE job of 20 srun
# steps (mode = "steps") and as 20 jobs (mode = "jobs"), submitted to a real
# Slurm, timed from submit to the last bundle ingested. Prints both wall
# clocks and their ratio (issue 4's target: steps ≥ 3× faster end to end).
#
# The jobs are exclusive, as benchmark jobs must be (two fabric tests
# sharing a node measure each other); a warm-up job first takes Slurm's
# first scheduling pass out of the figures.
#
# Uses $SLURM_CONF if set; otherwise starts the throw-away test cluster
# (slurm/testcluster) under $LAB and stops it at the end.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAB=${LAB:-/tmp/sbench-bench-lab}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT"
make -s build >/dev/null
export PATH="$ROOT/bin:$PATH"
if [ -z "${SLURM_CONF:-}" ]; then
	trap '"$ROOT/slurm/testcluster/stop.sh" "$LAB" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
	eval "$("$ROOT/slurm/testcluster/start.sh" "$LAB" 2)"
fi
export SBENCH_BIND=127.0.0.1

campaign() { # campaign MODE
	cat <<TOML
[campaign]
name = "bench-$1"
mode = "${1#warmup-}"
[slurm]
nodes = 2
ntasks_per_node = 1
time = "5"
exclusive = true
[[benchmark]]
name = "lat"
kernel = "latency"
params = { sizes = "1-1024", iterations = 200, warmup = 10 }
[sweep]
"label.point" = [$(seq -s ', ' 1 20)]
TOML
}

run() { # run MODE -> prints seconds
	local mode=$1 dir="$WORK/$1"
	mkdir -p "$dir" && cd "$dir"
	campaign "$mode" >c.toml
	local t0 t1
	t0=$(date +%s.%N)
	sbench submit c.toml --db s.db >/dev/null 2>&1
	sbench status --db s.db --wait --interval 200ms --ingest >status.log 2>&1 || { cat status.log >&2; exit 1; }
	t1=$(date +%s.%N)
	local runs
	runs=$(sbench runs --db s.db --json | grep -c '"id"')
	[ "$runs" -eq 20 ] || { echo "$mode: $runs runs archived, want 20" >&2; exit 1; }
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}

run warmup-steps >/dev/null 2>&1 || true
steps=$(run steps)
jobs=$(run jobs)
printf 'steps mode (1 job, 20 steps): %.1f s\n' "$steps"
printf 'jobs mode (20 jobs):           %.1f s\n' "$jobs"
awk -v s="$steps" -v j="$jobs" 'BEGIN { printf "ratio jobs/steps: %.2f\n", j / s }'
