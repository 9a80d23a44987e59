#!/bin/bash
# run-tests.sh LABDIR [PATTERN] — make test-slurm: start a throw-away Slurm (fake nodes
# n1, n2 on 127.0.0.1), run every test that needs a real Slurm against it,
# and stop what was started, whatever the tests did. PKGS (default ./...)
# narrows the packages tested; COUNT (default 1) runs each test that many
# times, to chase a failure seen once.
#
# Tests that need a cluster of their own (the network-namespace labs of
# the screening tests) start it with testcluster.Start, which records its
# LABDIR in $SBENCH_LAB_REGISTRY: whatever became of a test (a panic, go
# test's -timeout), every lab it started is stopped here too, and its
# namespaces, veths and bridge deleted.
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 LABDIR [TEST-PATTERN]" >&2; exit 2; }
PATTERN=${2:-'^(TestSlurm.*|TestRealCluster)$'}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LAB=$1
mkdir -p "$LAB"
export SBENCH_LAB_REGISTRY
SBENCH_LAB_REGISTRY=$(cd "$LAB" && pwd -P)/registry
rm -f "$SBENCH_LAB_REGISTRY/labs"
stop_all() {
	"$HERE/stop.sh" "$LAB" >&2 || true
	if [ -f "$SBENCH_LAB_REGISTRY/labs" ]; then
		while read -r lab; do
			[ "$lab" = "$(cd "$LAB" && pwd -P)" ] && continue
			"$HERE/stop.sh" "$lab" >&2 || true
		done <"$SBENCH_LAB_REGISTRY/labs"
	fi
}
trap stop_all EXIT
eval "$("$HERE/start.sh" "$LAB" 2)"
echo "test-slurm: cluster up (SLURM_CONF=$SLURM_CONF)" >&2
cd "$ROOT"
# A skip here is a failure: the cluster is up, so every Slurm test must run.
export SBENCH_REQUIRE_INTEGRATION=1
set +e
# go test's default -timeout (10 minutes a package) is not a budget: the
# Slurm tests of cmd/sbench alone took 27 minutes on two cores at load
# 12-17 (HPCC, the OSU stand-ins, the netns screenings). A hung
# job is caught by the tests themselves (no progress on the cluster for 8
# minutes); this is only the backstop.
#
# One package at a time (-p 1): cmd/sbench's fault tests kill n2's slurmd
# and stop slurmctld on this shared cluster, and a launch another package
# made meanwhile failed with Slurm's connection error (srun exit 233 =
# 128 + (1001 & 0x7f), SLURM_COMMUNICATIONS_CONNECTION_ERROR: CI, 2026-12-04).
# No Slurm test calls t.Parallel, so within a package they take turns
# already; the other packages' Slurm tests add under a minute.
go test -p 1 -count="${COUNT:-1}" -v -timeout "${TIMEOUT:-50m}" -run "$PATTERN" ${PKGS:-./...} 2>&1 | tee "$LAB/go-test.log" |
	grep -E '^(--- |PASS|FAIL|ok|panic)|_test.go:'
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	# The lines above keep only the first line of what a test logged; a
	# failed command's stderr follows on indented lines. Print every failed
	# test's whole output (no Slurm test is parallel, so it is the block
	# from its "=== RUN" to its "--- FAIL"), so that a CI log says why.
	awk '/^=== RUN/ { name = $3; buf[name] = "" } name != "" { buf[name] = buf[name] $0 "\n" }
		/^ *--- FAIL: / { n = $3; if (n in buf) printf "test-slurm: the output of %s:\n%s", n, buf[n] }' "$LAB/go-test.log" >&2
	echo "test-slurm: FAILED (full log: $LAB/go-test.log)" >&2
fi
exit "$rc"
