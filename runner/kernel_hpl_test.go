package runner

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sbench/sbench/hpl/lu"
	"github.com/sbench/sbench/results"
)

// hplStep is a step of the hpl kernel with parameters hp.
func hplStep(t *testing.T, nodes []string, tasksPerNode int, hp HPLParams) *step {
	params := map[string]string{"n": fmt.Sprint(hp.N), "seed": fmt.Sprint(hp.Seed), "threads": fmt.Sprint(hp.Threads)}
	if hp.NB != 0 {
		params["nb"] = fmt.Sprint(hp.NB)
	}
	return newStep(t, nodes, tasksPerNode, "hpl", params)
}

func TestHPLKernel(t *testing.T) {
	for _, l := range []layout{
		{"1 rank", []string{"n1"}, 1},
		{"2 local ranks", []string{"n1"}, 2},
		{"2 ranks on 2 nodes", []string{"n1", "n2"}, 1},
		{"4 ranks on 2 nodes", []string{"n1", "n2"}, 2},
	} {
		t.Run(l.name, func(t *testing.T) {
			b := runOK(t, hplStep(t, l.nodes, l.tasksPerNode, HPLParams{N: 300, NB: 48, Seed: 7, Threads: 1}))
			m := byMetric(b)
			n := l.ranks()
			gflops, times, resid, nodes := m["hpl_gflops"], m["hpl_time"], m["hpl_residual"], m["node_hpl_gflops"]
			if len(gflops) != n || len(times) != n || len(resid) != n || len(nodes) != len(l.nodes) || len(b.Samples) != 3*n+len(l.nodes) {
				t.Fatalf("%d gflops, %d times, %d residuals, %d node samples of %d", len(gflops), len(times), len(resid), len(nodes), len(b.Samples))
			}
			checkStats(t, append(gflops, times...))
			for r := 0; r < n; r++ {
				node := l.nodes[r/l.tasksPerNode]
				for _, s := range []results.Sample{gflops[r], times[r], resid[r]} {
					if s.Tags["rank"] != fmt.Sprint(r) || s.Tags["node"] != node || s.Tags["n"] != "300" || s.Tags["nb"] != "48" || s.Tags["threads"] != "1" {
						t.Errorf("rank %d: %s tags %v", r, s.Metric, s.Tags)
					}
				}
				if gflops[r].Unit != "Gflops" || times[r].Unit != "s" || !(resid[r].Value >= 0 && resid[r].Value < lu.Threshold) {
					t.Errorf("rank %d: %+v %+v %+v", r, gflops[r], times[r], resid[r])
				}
				// Every rank solved the same system: the same residual.
				if resid[r].Value != resid[0].Value {
					t.Errorf("rank %d: residual %v, rank 0's %v", r, resid[r].Value, resid[0].Value)
				}
				// Gflops are HPL's flops over the time (both rounded to 6 digits).
				if want := lu.Flops(300) / times[r].Value / 1e9; math.Abs(gflops[r].Value-want) > 1e-4*want {
					t.Errorf("rank %d: %v Gflops in %v s; flops over time give %v", r, gflops[r].Value, times[r].Value, want)
				}
			}
			for i, s := range nodes {
				var sum float64
				for r := i * l.tasksPerNode; r < (i+1)*l.tasksPerNode; r++ {
					sum += gflops[r].Value
				}
				if s.Tags["node"] != l.nodes[i] || s.Tags["ranks"] != fmt.Sprint(l.tasksPerNode) || s.Value != round(sum) || s.Unit != "Gflops" {
					t.Errorf("node %d: %+v, sum of its ranks %v", i, s, sum)
				}
			}

			if b.Status != results.StatusOK || b.Error != "" || len(b.Checks) != 1 || !b.Checks[0].Passed {
				t.Fatalf("finished bundle: %s %q %+v", b.Status, b.Error, b.Checks)
			}
			sc := map[string]float64{}
			for _, s := range b.Scalars {
				sc[s.Name] = s.Value
			}
			var total, slowest float64
			for r := range gflops {
				total += gflops[r].Value
				slowest = max(slowest, times[r].Value)
			}
			if sc["n"] != 300 || sc["nb"] != 48 || sc["ranks"] != float64(n) || sc["threads"] != 1 || sc["gflops"] != round(total) ||
				sc["time_s"] != slowest || sc["residual"] != resid[0].Value {
				t.Errorf("scalars %v", sc)
			}
			if err := b.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// A rank whose matrix turns out singular fails the run, everywhere, and
// rank 0's bundle says which rank and why.
func TestHPLKernelSingular(t *testing.T) {
	saved := hplSolve
	t.Cleanup(func() { hplSolve = saved })
	hplSolve = func(ctx context.Context, rank int, cfg lu.Config) (lu.Result, error) {
		if rank == 1 {
			return lu.Result{}, fmt.Errorf("hpl run: N=%d seed %d: %w", cfg.N, cfg.Seed, &lu.SingularError{Column: 3})
		}
		return lu.Run(ctx, cfg)
	}
	s := hplStep(t, []string{"n1", "n2"}, 1, HPLParams{N: 200, Seed: 3, Threads: 1})
	res := s.run()
	b := s.bundle(res)
	want := "hpl kernel on rank 1 (node n2): hpl run: N=200 seed 3: matrix is singular: U(3,3) is exactly zero after partial pivoting"
	if b.Status != results.StatusFailed || !strings.Contains(b.Error, want) {
		t.Fatalf("status %s, error %q; want failed with %q", b.Status, b.Error, want)
	}
	for r, rr := range res {
		if rr.err == nil {
			t.Errorf("rank %d succeeded", r)
		}
	}
}

// N too large for the node's memory is refused before anything is
// allocated.
func TestHPLKernelTooLarge(t *testing.T) {
	if memTotal("/proc/meminfo") == 0 {
		t.Skip("no /proc/meminfo: the memory check has nothing to go by")
	}
	s := hplStep(t, []string{"n1"}, 2, HPLParams{N: 1 << 20, Seed: 1})
	b := s.bundle(s.run())
	if b.Status != results.StatusFailed || !strings.Contains(b.Error, "hpl kernel: N=1048576 needs 8192.0 GiB per rank; the 2 ranks on node n1 need 16384.0 GiB") {
		t.Fatalf("status %s, error %q", b.Status, b.Error)
	}
}

func TestFinishHPL(t *testing.T) {
	sample := func(metric string, rank int, v float64) results.Sample {
		return results.Sample{Metric: metric, Value: v, Iterations: 1,
			Tags: map[string]string{"rank": fmt.Sprint(rank), "node": "n1", "n": "1000", "nb": "192", "threads": "2"}}
	}
	bundle := func(res0, res1 float64) *results.Bundle {
		b := results.New()
		b.Benchmark.Name = "hpl"
		b.Samples = []results.Sample{
			sample("hpl_gflops", 0, 50), sample("hpl_time", 0, 1.5), sample("hpl_residual", 0, res0),
			sample("hpl_gflops", 1, 40), sample("hpl_time", 1, 2), sample("hpl_residual", 1, res1),
		}
		return b
	}
	b := bundle(0.004, 0.005)
	finishHPL(b)
	if b.Status != results.StatusOK || fmt.Sprint(b.Scalars) != "[{n  1000} {nb  192} {ranks  2} {threads  2} {time_s s 2} {gflops Gflops 90} {residual  0.005}]" ||
		fmt.Sprint(b.Checks) != "[{"+hplCheckName+" 0.005 16 < true}]" {
		t.Errorf("passing: %s %q\n%v\n%v", b.Status, b.Error, b.Scalars, b.Checks)
	}

	b = bundle(0.004, 17.5)
	finishHPL(b)
	if want := "residual check failed on rank 1: " + hplCheckName + " = 17.5 is not below 16"; b.Status != results.StatusInvalid || b.Error != want || b.Checks[0].Passed {
		t.Errorf("failing: %s %q, want invalid with %q", b.Status, b.Error, want)
	}

	b = bundle(finiteResidual(math.NaN()), 0.1)
	b.Error = "check gflops>=100 failed"
	finishHPL(b)
	if want := "check gflops>=100 failed; residual check failed on rank 0: " + hplCheckName + " = NaN or Inf is not below 16"; b.Status != results.StatusInvalid || b.Error != want {
		t.Errorf("NaN: %s %q, want %q", b.Status, b.Error, want)
	}
	for _, s := range b.Scalars {
		if s.Name == "residual" {
			t.Errorf("a NaN residual became the scalar %v", s.Value)
		}
	}
	if err := b.Validate(); err != nil {
		t.Errorf("NaN: %v", err)
	}

	b = bundle(0.1, 0.1)
	b.Status, b.Error = results.StatusFailed, "rank 1 died"
	finishHPL(b)
	if b.Status != results.StatusFailed || b.Error != "rank 1 died" || b.Scalars != nil || b.Checks != nil {
		t.Errorf("failed bundle changed: %s %q %v %v", b.Status, b.Error, b.Scalars, b.Checks)
	}

	b = results.New()
	finishHPL(b)
	if b.Status != results.StatusInvalid || b.Error != "hpl kernel: no residual to check" {
		t.Errorf("no samples: %s %q", b.Status, b.Error)
	}
}

func TestHPLThreads(t *testing.T) {
	for _, tc := range []struct{ usable, online, ranks, want int }{
		{64, 64, 1, 64}, // one rank, all cores
		{64, 64, 4, 16}, // unbound ranks share the node
		{16, 64, 4, 16}, // bound by the launcher: its share already
		{2, 2, 3, 1},    // more ranks than cores: one each
		{8, 0, 4, 8},    // online CPUs unknown: trust the mask
	} {
		if got := hplThreads(tc.usable, tc.online, tc.ranks); got != tc.want {
			t.Errorf("hplThreads(%d, %d, %d) = %d, want %d", tc.usable, tc.online, tc.ranks, got, tc.want)
		}
	}
}

func TestCountCPUList(t *testing.T) {
	for s, want := range map[string]int{"0-63": 64, "0": 1, "0,2-5,7": 6, "": 0, "3-1": 0, "a-b": 0, "0-": 0} {
		if got := countCPUList(s); got != want {
			t.Errorf("countCPUList(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestHPLFits(t *testing.T) {
	const gib = 1 << 30
	if err := hplFits(10000, 2, "n1", 24*gib); err != nil { // 2 × 0.75 GiB
		t.Error(err)
	}
	if err := hplFits(10000, 2, "n1", 0); err != nil {
		t.Errorf("unknown memory: %v", err)
	}
	err := hplFits(40000, 2, "n1", 24*gib) // 2 × 11.9 GiB
	want := "hpl kernel: N=40000 needs 11.9 GiB per rank; the 2 ranks on node n1 need 23.8 GiB, over 80% of its 24.0 GiB (lower n: N=35894 fits)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if err := hplFits(35894, 2, "n1", 24*gib); err != nil {
		t.Errorf("the N the error proposes does not fit: %v", err)
	}
}

// A rank whose residual check fails leaves the run's figures, and makes
// the bundle invalid, naming the rank.
func TestHPLKernelResidualFails(t *testing.T) {
	saved := hplSolve
	t.Cleanup(func() { hplSolve = saved })
	hplSolve = func(ctx context.Context, rank int, cfg lu.Config) (lu.Result, error) {
		res, err := lu.Run(ctx, cfg)
		if rank == 1 {
			res.Residual = 1e3 // as a node with a faulty FPU or memory might
		}
		return res, err
	}
	s := hplStep(t, []string{"n1", "n2"}, 1, HPLParams{N: 100, Seed: 5, Threads: 1})
	b := s.bundle(s.run())
	want := "residual check failed on rank 1: " + hplCheckName + " = 1000 is not below 16"
	if b.Status != results.StatusInvalid || b.Error != want || len(b.Checks) != 1 || b.Checks[0].Passed || b.Checks[0].Value != 1e3 {
		t.Fatalf("status %s, error %q, checks %+v; want invalid with %q", b.Status, b.Error, b.Checks, want)
	}
	if len(byMetric(b)["hpl_gflops"]) != 2 {
		t.Errorf("samples %+v", b.Samples)
	}
}
