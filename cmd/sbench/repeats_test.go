package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

// repeatCampaign is a campaign of one benchmark with 5 repeats, run twice
// unchanged: what sbench compare run:1-5 run:6-10 is asked about.
const repeatCampaign = `
[campaign]
name = "repeats"
repeats = 5
labels = { fabric = "tcp" }

[slurm]
nodes = 1
ntasks_per_node = 2

[[benchmark]]
name = "latency"
kernel = "latency"
params = { sizes = "1,1024,65536", iterations = 200, warmup = 20 }
`

// TestCompareTwoRunsOfARepeatedCampaign: the repeats of one configuration
// are pooled — one table per metric with n=5+5 — not one table per repeat
// index with n=1+1.
func TestCompareTwoRunsOfARepeatedCampaign(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign twice")
	if err := os.WriteFile("repeats.toml", []byte(repeatCampaign), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "a.db")
	for range 2 {
		if out, errs, code := sbench(t, "local", "repeats.toml", "--db", db); code != 0 {
			t.Fatalf("local: exit %d\n%s\n%s", code, out, errs)
		}
	}
	out, errs, code := sbench(t, "compare", "--db", db, "run:1-5", "run:6-10")
	if code != 0 && code != 1 {
		t.Fatalf("compare: exit %d\n%s", code, errs)
	}
	if n := strings.Count(out, "latency ·"); n != 1 {
		t.Errorf("%d tables, want one for the latency metric:\n%s", n, out)
	}
	if strings.Contains(out, "repeat=") || strings.Count(out, "n=5+5") != 3 {
		t.Errorf("want 3 rows of n=5+5 and no repeat=k tables:\n%s", out)
	}
}

// TestCompareRepeatsSeededTrials: two campaigns of 5 repeats drawn from one
// distribution, archived as the runner writes them (repeat index in the
// parameters, the sweep's beside it) and compared through the CLI: no
// regression in at least 95% of seeded trials, every row n=5+5.
func TestCompareRepeatsSeededTrials(t *testing.T) {
	const trials = 100
	regressions := 0
	for trial := range trials {
		rng := rand.New(rand.NewPCG(uint64(trial), 12))
		path, db := newArchive(t, "a.db")
		for job := range 2 {
			for k := range 5 {
				b := results.New()
				b.Campaign, b.Variant = "acceptance", "ntasks_per_node=1"
				b.Params = map[string]string{"ntasks_per_node": "1", "repeat": strconv.Itoa(k)}
				b.Labels = map[string]string{"fabric": "tcp"}
				b.Job = results.Job{ID: strconv.Itoa(100 + job), Step: strconv.Itoa(k), Nodes: []string{"n1", "n2"}, Tasks: 2}
				b.Benchmark = results.Benchmark{Name: "bandwidth", Kind: "native", Kernel: "bw"}
				for _, x := range []float64{1024, 1 << 20} {
					b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(x), XUnit: "bytes",
						Value: 5000 * x / (x + 4096) * (1 + 0.03*rng.NormFloat64()), Repeat: k})
				}
				mustIngest(t, db, fmt.Sprintf("job%d.%d", job, k), b)
			}
		}
		db.Close()
		out, errs, code := sbench(t, "compare", "--db", path, "--threshold", "0", "run:1-5", "run:6-10")
		switch {
		case code == 1:
			regressions++
		case code != 0:
			t.Fatalf("trial %d: exit %d\n%s", trial, code, errs)
		}
		if strings.Count(out, "n=5+5") != 2 || strings.Contains(out, "repeat=") {
			t.Fatalf("trial %d: want two rows of n=5+5, one table:\n%s", trial, out)
		}
	}
	t.Logf("%d trials of identical campaigns (5 repeats each, threshold 0): a regression in %d", trials, regressions)
	if regressions > trials*5/100 {
		t.Errorf("a regression in %d of %d trials, want ≤ 5%%", regressions, trials)
	}
}
