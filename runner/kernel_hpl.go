package runner

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/hpl/lu"
	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// The hpl kernel solves one random dense system per rank with package
// hpl/lu, all ranks at once ("EP" mode, as HPCC's Star runs: no
// communication during the solve), and checks each solution with HPL's
// scaled residual. It is for nodes without xhpl: a node's Gflops, and a
// numerically wrong node, show without any MPI or BLAS installed.

// HPLParams are the hpl kernel's parameters (package kernels reads them).
type HPLParams = kernels.HPL

// hplMemoryShare is how much of a node's memory its ranks' matrices may
// take: the rest is the system's, the runner's and the checks'.
const hplMemoryShare = 0.8

// hplCheckName is the residual check's name, as HPL 2.x prints it (and
// package hpl's parser records it), so that native and xhpl runs compare.
const hplCheckName = "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)"

// hplSolve is lu.Run, for rank; tests replace it to make a rank fail.
var hplSolve = func(ctx context.Context, rank int, cfg lu.Config) (lu.Result, error) { return lu.Run(ctx, cfg) }

// hplRep* place the figures each rank reports to rank 0 after its solve.
const (
	hplRepGflops = iota
	hplRepTime
	hplRepResidual
	hplRepThreads
	hplRepNB
	hplReportLen
)

// runHPL runs the hpl kernel: every rank checks that the node's ranks'
// matrices fit in its memory, all start together, each solves its system,
// and once all have (control barriers, which wait as long as the run may:
// a solve can take hours, beyond any I/O timeout), each reports to rank 0.
// A rank whose solve fails (a singular matrix) fails the run with its
// reason. Rank 0 returns per-rank samples (Gflops, time, residual) and
// per-node Gflops; finishHPL turns them into the bundle's scalars and
// residual check.
func runHPL(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	hp := p.HPL
	r := c.id.Rank
	nodeOf := c.nodeOfRanks()
	local := 0
	for _, node := range nodeOf {
		if node == nodeOf[r] {
			local++
		}
	}
	threads := hp.Threads
	if threads == 0 {
		threads = hplThreads(runtime.GOMAXPROCS(0), onlineCPUs(), local)
	}
	// A rank that fails says why at the barrier the others wait at, and
	// rank 0 aborts the run with that reason.
	fits := hplFits(hp.N, local, c.node(r), memTotal("/proc/meminfo"))
	if err := c.barrier(ctx, "hpl-start", fits, time.Time{}); err != nil {
		return nil, err
	}
	res, err := hplSolve(ctx, r, lu.Config{N: hp.N, NB: hp.NB, Seed: hp.Seed, Threads: threads})
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		err = fmt.Errorf("hpl kernel on %s: %w", c.who(r), err)
	}
	if err := c.barrier(ctx, "hpl-solved", err, time.Time{}); err != nil {
		return nil, err
	}
	return hplGather(ctx, c, p, hooks, res)
}

// hplGather brings every rank's figures to rank 0, which makes the
// samples.
func hplGather(ctx context.Context, c *comm, p KernelParams, hooks *testHooks, res lu.Result) ([]results.Sample, error) {
	r, n := c.id.Rank, c.id.Size
	mine := make([]float64, hplReportLen)
	mine[hplRepGflops], mine[hplRepTime] = res.Gflops, res.Time.Seconds()
	mine[hplRepResidual], mine[hplRepThreads], mine[hplRepNB] = res.Residual, float64(res.Threads), float64(res.NB)
	byRank := [][]float64{mine}
	if n > 1 {
		peers := []int{0}
		if r == 0 {
			peers = allRanks(n)
		}
		m, err := openMesh(ctx, c, p.Kernel, hooks, peers)
		if err != nil {
			return nil, err
		}
		defer m.close()
		if r != 0 {
			return nil, m.report(0, mine)
		}
		for from := 1; from < n; from++ {
			vals, err := m.collect(from, 0)
			if err == nil && len(vals) != hplReportLen {
				err = fmt.Errorf("%s reported %d values, want %d", c.who(from), len(vals), hplReportLen)
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, context.Cause(ctx)
				}
				return nil, fmt.Errorf("hpl kernel: %w", err)
			}
			byRank = append(byRank, vals)
		}
	}
	return hplSamples(c, res.N, byRank), nil
}

// hplSamples are rank 0's samples: per rank hpl_gflops, hpl_time and
// hpl_residual, tagged with the rank, its node, threads and NB; per node
// node_hpl_gflops, the sum of its ranks'.
func hplSamples(c *comm, n int, byRank [][]float64) []results.Sample {
	var samples []results.Sample
	gflops := make([]float64, len(byRank))
	for r, v := range byRank {
		tags := map[string]string{
			"rank": strconv.Itoa(r), "node": c.node(r), "n": strconv.Itoa(n),
			"nb": strconv.Itoa(int(v[hplRepNB])), "threads": strconv.Itoa(int(v[hplRepThreads])),
		}
		gflops[r] = round(v[hplRepGflops])
		samples = append(samples,
			results.Sample{Metric: "hpl_gflops", Unit: "Gflops", Value: gflops[r], Iterations: 1, Tags: tags},
			results.Sample{Metric: "hpl_time", Unit: "s", Value: round(v[hplRepTime]), Iterations: 1, Tags: tags},
			results.Sample{Metric: "hpl_residual", Value: finiteResidual(v[hplRepResidual]), Iterations: 1, Tags: tags})
	}
	return append(samples, c.nodeSums(results.Sample{Metric: "node_hpl_gflops", Unit: "Gflops", Iterations: 1}, gflops)...)
}

// nodeSums are one sample like s per node, in node order: the sum of the
// node's ranks' values, tagged with the node and its count of ranks.
func (c *comm) nodeSums(s results.Sample, byRank []float64) []results.Sample {
	var out []results.Sample
	for _, ranks := range ranksByNode(c.nodeOfRanks()) {
		var sum float64
		for _, r := range ranks {
			sum += byRank[r]
		}
		s.Value = round(sum)
		s.Tags = map[string]string{"node": c.node(ranks[0]), "ranks": strconv.Itoa(len(ranks))}
		out = append(out, s)
	}
	return out
}

// finiteResidual keeps a diverged solve's NaN or Inf residual as the
// largest float, as package hpl's parser does: JSON has no NaN, and the
// value must stay as bad as can be.
func finiteResidual(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return math.MaxFloat64
	}
	return v
}

// finishHPL completes rank 0's bundle of the hpl kernel from its samples:
// the scalars package hpl's parser gives an xhpl run (n, nb, time_s,
// gflops, residual; gflops being the sum over the ranks and time_s the
// slowest rank's), plus ranks and threads; and one residual check, on the
// worst rank's residual, which makes the bundle invalid when it fails.
// A failed bundle is left alone.
// Run calls it (kernelRuns' finish) before ApplyChecks, so that --check can judge its
// scalars.
func finishHPL(b *results.Bundle) {
	if b.Status == results.StatusFailed {
		return
	}
	var n, nb, threads, ranks, gflops, slowest float64
	worst, worstRank := -1.0, ""
	for _, s := range b.Samples {
		switch s.Metric {
		case "hpl_gflops":
			ranks++
			gflops += s.Value
			n, _ = strconv.ParseFloat(s.Tags["n"], 64)
			nb, _ = strconv.ParseFloat(s.Tags["nb"], 64)
			t, _ := strconv.ParseFloat(s.Tags["threads"], 64)
			threads = max(threads, t)
		case "hpl_time":
			slowest = max(slowest, s.Value)
		case "hpl_residual":
			if s.Value > worst {
				worst, worstRank = s.Value, s.Tags["rank"]
			}
		}
	}
	if ranks == 0 || worst < 0 {
		b.Status = results.StatusInvalid
		b.Error = joinProblems(b.Error, "hpl kernel: no residual to check")
		return
	}
	b.Scalars = append(b.Scalars,
		results.Scalar{Name: "n", Value: n},
		results.Scalar{Name: "nb", Value: nb},
		results.Scalar{Name: "ranks", Value: ranks},
		results.Scalar{Name: "threads", Value: threads},
		results.Scalar{Name: "time_s", Unit: "s", Value: slowest},
		results.Scalar{Name: "gflops", Unit: "Gflops", Value: round(gflops)},
	)
	if worst != math.MaxFloat64 {
		b.Scalars = append(b.Scalars, results.Scalar{Name: "residual", Value: worst})
	}
	passed := worst < lu.Threshold
	b.Checks = append(b.Checks, results.Check{Name: hplCheckName, Value: worst, Threshold: lu.Threshold, Op: "<", Passed: passed})
	if !passed {
		b.Status = results.StatusInvalid
		b.Error = joinProblems(b.Error, fmt.Sprintf("residual check failed on rank %s: %s = %s is not below %g",
			worstRank, hplCheckName, residualText(worst), lu.Threshold))
	}
}

func residualText(v float64) string {
	if v == math.MaxFloat64 {
		return "NaN or Inf"
	}
	return strconv.FormatFloat(v, 'g', 7, 64)
}

func joinProblems(prev, msg string) string {
	if prev == "" {
		return msg
	}
	return prev + "; " + msg
}

// hplThreads is a rank's share of the CPUs: all it may use, unless the
// launcher let every rank of the node use all of them (no CPU binding,
// as with sbench local), in which case they are split among the ranks.
func hplThreads(usable, online, ranksOnNode int) int {
	if online > 0 && usable >= online && ranksOnNode > 1 {
		return max(usable/ranksOnNode, 1)
	}
	return max(usable, 1)
}

// onlineCPUs counts the node's online CPUs from
// /sys/devices/system/cpu/online ("0-63", "0,2-5"); 0 when unknown.
func onlineCPUs() int {
	data, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return 0
	}
	return countCPUList(strings.TrimSpace(string(data)))
}

// countCPUList counts the CPUs of a kernel CPU list; 0 when malformed.
func countCPUList(s string) int {
	total := 0
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		total += b - a + 1
	}
	return total
}

// hplFits refuses an N whose matrices, one per rank of the node, would not
// fit in hplMemoryShare of its memory: better a clear error than the
// out-of-memory killer. Unknown memory (0) passes.
func hplFits(n, ranksOnNode int, node string, memory uint64) error {
	perRank := 8 * float64(n) * float64(n+1)
	need := perRank * float64(ranksOnNode)
	if memory == 0 || need <= hplMemoryShare*float64(memory) {
		return nil
	}
	const gib = 1 << 30
	return fmt.Errorf("hpl kernel: N=%d needs %.1f GiB per rank; the %d ranks on node %s need %.1f GiB, over %.0f%% of its %.1f GiB (lower n: N=%d fits)",
		n, perRank/gib, ranksOnNode, node, need/gib, 100*hplMemoryShare, float64(memory)/gib,
		int(math.Sqrt(hplMemoryShare*float64(memory)/float64(ranksOnNode)/8))-1)
}
