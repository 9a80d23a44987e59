package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/hpl"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// TestSlurmHPCCOneNode submits examples/hpcc.toml to the test cluster: one
// fake node, hpccinf.txt written by sbench with N sized from the campaign's
// memory, Debian's hpcc started by mpirun inside the job (≈8 s). The
// archive must hold HPCC's HPL test with its residual check passed and a
// rate above zero, and HPCC's summary, both ok.
func TestSlurmHPCCOneNode(t *testing.T) {
	requireSlurm(t)
	testenv.LookPath(t, "hpcc", "hpcc")
	testenv.LookPath(t, "mpirun", "openmpi-bin")
	root := repoRoot(t)
	file := filepath.Join(root, "examples/hpcc.toml")
	// Two runs: HPL's test and HPCC's summary.
	_, db, _, _ := slurmRun(t, file, "hpcc", 1, 2)

	// The input the job got is the one sbench generates for the plan.
	c, err := campaign.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := c.Runs()
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.InputFiles(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	got, _ := filepath.Glob("sbench-runs/hpcc/work/*/hpccinf.txt")
	if len(got) != 1 {
		t.Fatalf("work directories hold %q, want one hpccinf.txt", got)
	}
	if data, _ := os.ReadFile(got[0]); !bytes.Equal(data, want["hpccinf.txt"]) {
		t.Errorf("%s is not the generated input:\n%s", got[0], data)
	}

	s, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	archived, err := s.Runs(ctx, store.Filter{Campaign: "hpcc"})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]store.Run{}
	for _, r := range archived {
		tools[r.ToolBenchmark] = r
		if r.Status != results.StatusOK || r.JobID == "" || r.Benchmark != "hpcc" || r.Tool != "hpcc" {
			t.Errorf("run %d (%s): status %s (%s), job %q, benchmark %q, tool %q", r.ID, r.ToolBenchmark, r.Status, r.Error, r.JobID, r.Benchmark, r.Tool)
		}
	}
	hplRun, ok1 := tools["hpcc-hpl"]
	summary, ok2 := tools["hpcc"]
	if len(archived) != 2 || !ok1 || !ok2 {
		t.Fatalf("archived runs by tool benchmark: %v, want hpcc-hpl and hpcc", tools)
	}
	scalars, err := s.Scalars(ctx, store.Filter{RunIDs: []int64{hplRun.ID, summary.ID}})
	if err != nil {
		t.Fatal(err)
	}
	byRun := map[int64]map[string]float64{}
	for _, sc := range scalars {
		if byRun[sc.RunID] == nil {
			byRun[sc.RunID] = map[string]float64{}
		}
		byRun[sc.RunID][sc.Name] = sc.Value
	}
	h := byRun[hplRun.ID]
	// N was "auto": the largest multiple of NB=128 within 80% of 64 MiB.
	if wantN := hpl.ProblemSize(64<<20, hpl.DefaultFraction, 128); h["n"] != float64(wantN) || h["nb"] != 128 || h["p"] != 1 || h["q"] != 2 {
		t.Errorf("HPL ran N=%v NB=%v P=%v Q=%v, want N=%d NB=128 1×2", h["n"], h["nb"], h["p"], h["q"], wantN)
	}
	if h["gflops"] <= 0 || h["time_s"] <= 0 {
		t.Errorf("HPL gflops %v in %v s, want both > 0", h["gflops"], h["time_s"])
	}
	if byRun[summary.ID]["hpl_tflops"] <= 0 {
		t.Errorf("HPCC summary HPL_Tflops = %v, want > 0", byRun[summary.ID]["hpl_tflops"])
	}
	checks, err := s.Checks(ctx, store.Filter{RunIDs: []int64{hplRun.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || !checks[0].Passed || !strings.Contains(checks[0].Name, "||Ax-b||") {
		t.Errorf("HPL's checks: %+v, want its one residual check, passed", checks)
	}
}
