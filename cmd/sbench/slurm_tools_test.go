package main

import (
	"path/filepath"
	"testing"

	"github.com/sbench/sbench/store"
)

// TestSlurmToolsVsNative submits examples/tools-vs-native.toml to the test
// cluster as it is: osu_latency and osu_bw (the OSU stand-in of testdata,
// on the machine's Open MPI) launched by srun --mpi=pmix, the native
// latency and bw kernels by srun, on one fake node (2 ranks) and on n1 and
// n2 (1 rank each), 3 repeats. The 24 runs must all be ok, the inter-node
// ones on both nodes; report's family view must draw each tool's curve in
// one figure per placement, and compare --group-by family pair their rows.
func TestSlurmToolsVsNative(t *testing.T) {
	requireSlurm(t)
	root := repoRoot(t)
	buildOSUStandin(t)
	// 24 steps of one job.
	dir, db, _, _ := slurmRun(t, filepath.Join(root, "examples/tools-vs-native.toml"), "tools-vs-native", 1, 24)
	// Under Slurm nothing says "one host": no local_host label.
	checkToolsVsNativeRuns(t, db, nil, nil)

	// The inter-node runs, the OSU stand-in's included, had rank 0 on n1
	// and rank 1 on n2; the intra-node ones both on one node.
	for _, r := range storedRuns(t, db, store.Filter{Campaign: "tools-vs-native"}) {
		node := rankNodes(r)
		inter := node[0] != "" && node[1] != "" && node[0] != node[1]
		if inter != (r.Variant == "inter-node") || r.JobID == "" {
			t.Errorf("run %d (%s %s): ranks on %v, job %q", r.ID, r.Benchmark, r.Variant, node, r.JobID)
		}
	}
	checkToolsVsNativeReport(t, db, filepath.Join(dir, "tools.pdf"))
	checkToolsVsNativeCompare(t, db)
}
