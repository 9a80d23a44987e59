package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm/testcluster"
	"github.com/sbench/sbench/store"
)

// tomlStrings writes argv as a TOML array of basic strings.
func tomlStrings(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = strconv.Quote(a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// article000Campaign is examples/000's NetPIPE benchmark on the lab: the
// transmitter and the receiver as the example writes them, aimed at rank
// 1's node by its name ({node:1}{param:host_suffix}, the lab's nodes
// answering to their names: host_suffix ""), launched as the example
// launches them; and the same pair with the receiver wrapped to exit 3
// after its curve, with NetPIPE's words, as NPtcp 3.7.2's does when its
// closing handshake meets a closed connection (every such run of the
// example was archived failed, with no samples), up to 1 MiB.
func article000Campaign(t *testing.T, example string) string {
	t.Helper()
	c, err := campaign.Load(example)
	if err != nil {
		t.Fatal(err)
	}
	var np *campaign.Benchmark
	for i := range c.Benchmarks {
		if c.Benchmarks[i].Name == "nptcp" {
			np = &c.Benchmarks[i]
		}
	}
	if np == nil || len(np.PerRank["0"]) == 0 || len(np.PerRank["1"]) == 0 || np.Output == "" {
		t.Fatalf("%s has no NPtcp pair named nptcp: %+v", example, np)
	}
	small := []string{"-u", "1048576"}
	tx := append(append([]string{}, np.PerRank["0"]...), small...)
	rx := append([]string{"sh", "-c", `"$@"; echo '` + resetByPeer + `' >&2; exit 3`, "sh"}, append(append([]string{}, np.PerRank["1"]...), small...)...)
	benchmark := func(name string, tx, rx []string) string {
		return fmt.Sprintf(`
[[benchmark]]
name = %q
per_rank = { "0" = %s, "1" = %s }
parser = %q
output = %q
start_delay = %q
timeout = %q
`, name, tomlStrings(tx), tomlStrings(rx), np.Parser, np.Output, np.StartDelay, np.Timeout)
	}
	return fmt.Sprintf(`
[campaign]
name = "np000"
labels = { article = "000" }

[slurm]
nodes = 2
ntasks_per_node = 1
time = "00:10:00"

[launcher]
type = %q
mpi = %q

[[variant]]
name = "lab"
params = { host_suffix = "" }
`, c.Launcher.Type, c.Launcher.MPI) +
		benchmark("nptcp", np.PerRank["0"], np.PerRank["1"]) +
		benchmark("nptcp-exit3", tx, rx)
}

// TestSlurmNetPIPEArticle000 runs examples/000's NPtcp pair under Slurm on
// two fake nodes with a network namespace, an address and a name each, as
// the example writes it: the run is ok with a curve of samples. The pair
// whose receiver exits 3 after its curve is ok too, with the curve, and a
// note that names the receiver's exit; the job completes (every rank of
// the step exits 0).
func TestSlurmNetPIPEArticle000(t *testing.T) {
	requireSlurm(t)
	testenv.LookPath(t, "NPtcp", "netpipe-tcp")
	if err := testcluster.AvailableNetns(); err != nil {
		testenv.Require(t, err.Error())
	}
	root := repoRoot(t)
	buildBinaries(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir := t.TempDir()
	if err := testcluster.Searchable(dir); err != nil {
		t.Fatal(err)
	}
	lab, err := testcluster.Start(ctx, filepath.Join(dir, "lab"), 2, testcluster.WithNetns())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	t.Setenv("SLURM_CONF", lab.Conf)
	// Ranks find each other on their namespace's address, not loopback.
	t.Setenv("SBENCH_BIND", "")
	campaign := filepath.Join(dir, "np000.toml")
	if err := os.WriteFile(campaign, []byte(article000Campaign(t, filepath.Join(root, "examples/000-infiniband-vs-ethernet.toml"))), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	db := filepath.Join(dir, "np.db")
	mustSbench(t, 0, "submit", campaign, "--db", db)
	if out, stderr, code := slurmWait(t, slurmWaitLimit, db); code != 0 || !strings.Contains(out, "2 run(s) added") {
		logs, _ := filepath.Glob("sbench-runs/np000/*.out")
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, tail(string(data), 60))
		}
		t.Fatalf("status --wait: exit %d, want the job COMPLETED and 2 runs\n%s\n%s", code, out, stderr)
	}

	arch, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	runs, err := arch.Runs(ctx, store.Filter{Campaign: "np000"})
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	for _, r := range runs {
		samples, err := arch.Samples(ctx, store.Filter{RunIDs: []int64{r.ID}})
		if err != nil {
			t.Fatal(err)
		}
		sizes := 0
		for _, s := range samples {
			if s.Metric == "bandwidth" && s.Unit == results.UnitMBps && s.X != nil {
				sizes++
			}
		}
		t.Logf("run %d (%s): %s, %d sizes, tool %s %s, note %q", r.ID, r.Benchmark, r.Status, sizes, r.Tool, r.ToolBenchmark, r.Note)
		if r.Status != results.StatusOK || sizes < 20 || r.Tool != "NetPIPE" || strings.Join(r.Nodes, ",") != "n1,n2" {
			t.Errorf("run %d (%s): %s %q, %d sizes, tool %q on %v; want ok, a curve of 20 sizes or more, NetPIPE on n1,n2",
				r.ID, r.Benchmark, r.Status, r.Error, sizes, r.Tool, r.Nodes)
		}
		switch {
		case r.Benchmark == "nptcp-exit3":
			if !strings.HasPrefix(r.Note, "rank 1 (node n2): sh -c ") || !strings.Contains(r.Note, "exited with status 3: "+resetByPeer) {
				t.Errorf("run %d: note %q, want rank 1's exit 3", r.ID, r.Note)
			}
		case r.Note != "":
			// NPtcp's own receiver may exit 3 here too, as it did for the
			// example: then the note says so.
			if !strings.HasPrefix(r.Note, "rank 1 (node n2): NPtcp exited with status ") {
				t.Errorf("run %d: note %q", r.ID, r.Note)
			}
		}
	}
}

// TestSlurmHostname: a command with no figures to read, parser = "none",
// under Slurm: each run is ok, keeps what hostname printed, and has its
// wall time for a figure.
func TestSlurmHostname(t *testing.T) {
	requireSlurm(t)
	buildBinaries(t)
	campaign := filepath.Join(t.TempDir(), "hostname.toml")
	os.WriteFile(campaign, []byte(`
[campaign]
name = "hostname"
repeats = 2

[slurm]
nodes = 2
ntasks_per_node = 1
time = "00:02:00"

[[benchmark]]
name = "hostname"
command = ["hostname"]
parser = "none"
checks = ["wall_time<=60"]
`), 0o644)
	_, db, _, _ := slurmRun(t, campaign, "hostname", 1, 2)
	host, _ := os.Hostname()
	arch, err := store.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	ctx := context.Background()
	runs, err := arch.Runs(ctx, store.Filter{Campaign: "hostname"})
	if err != nil || len(runs) != 2 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	for _, r := range runs {
		samples, _ := arch.Samples(ctx, store.Filter{RunIDs: []int64{r.ID}})
		b, err := arch.Bundle(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != results.StatusOK || len(samples) != 1 || samples[0].Metric != results.MetricWallTime || samples[0].Unit != results.UnitSeconds ||
			!(samples[0].Value > 0 && samples[0].Value < 60) || b.Raw != host+"\n" {
			t.Errorf("run %d: %s %q, samples %+v, raw %q", r.ID, r.Status, r.Error, samples, b.Raw)
		}
	}
}
