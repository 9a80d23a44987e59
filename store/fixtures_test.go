package store

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// clock is the fixed time tests stamp ingests and job updates with.
var clock = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// openTemp opens a new archive in the test's temporary directory.
func openTemp(t testing.TB) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "archive.db"))
}

// openAt opens the archive at path, new or not, stamping its writes with
// clock; it is closed with the test.
func openAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	db.now = func() time.Time { return clock }
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// archiveAt creates an archive at path holding one run and closes it.
func archiveAt(t *testing.T, path string) {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ingest(t, db, "f.json", osuBundle("c", "ib", "1", 4))
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// archiveWithVersion creates an archive at path that says it has schema
// version v, and closes it.
func archiveWithVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(fmt.Sprintf("PRAGMA user_version = %d", v)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// olderArchiveAt creates an archive at path one schema version behind this
// sbench's, and closes it.
func olderArchiveAt(t *testing.T, path string) {
	t.Helper()
	old, err := openWith(context.Background(), path, migrations[:LatestSchemaVersion()-1])
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
}

// count returns the number of rows of table.
func count(t testing.TB, db *DB, table string) int {
	t.Helper()
	var n int
	if err := db.r.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

var dataTables = []string{"runs", "bundles", "run_labels", "run_params", "hosts", "run_hosts", "samples", "scalars", "checks"}

// counts returns the row count of every data table, to show that something
// did or did not change.
func counts(t testing.TB, db *DB) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, tb := range dataTables {
		m[tb] = count(t, db, tb)
	}
	return m
}

func ingest(t testing.TB, db *DB, source string, bs ...*results.Bundle) IngestResult {
	t.Helper()
	res, err := db.Ingest(context.Background(), source, bs)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// osuHost is a compute node as the runner describes it.
func osuHost(name string, rank int) results.Host {
	return results.Host{
		Hostname:    name + ".cluster.local",
		NodeName:    name,
		Ranks:       []int{rank},
		CPUModel:    "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz",
		Sockets:     2,
		Cores:       40,
		Threads:     80,
		CPUFlags:    []string{"avx2", "avx512f", "fma"},
		Governor:    "performance",
		MemoryBytes: 192 << 30,
		NUMANodes:   2,
		Kernel:      "4.18.0-477.el8.x86_64",
		OS:          "Rocky Linux 8.8",
		MPI:         "Open MPI 4.1.5",
		Modules:     []string{"openmpi/4.1.5"},
		IB:          []results.IBPort{{Device: "mlx5_0", Port: 1, State: "ACTIVE", Rate: "100 Gb/sec (4X EDR)", RateGbps: 100, LinkLayer: "InfiniBand", Firmware: "16.35.2000"}},
		Net:         []results.NetIf{{Name: "eth0", SpeedMbps: 10000, MTU: 1500, State: "up"}},
		Extra:       map[string]string{"bios": "2.14.2"},
	}
}

// osuBundle is one osu_bw run between two nodes: the bundle the runner
// writes for a wrapped OSU tool, with samples at sizes 1 B … 2^(points-1) B.
func osuBundle(campaign, variant, job string, points int) *results.Bundle {
	b := results.New()
	b.Campaign = campaign
	b.Variant = variant
	b.Params = map[string]string{"transport": variant, "tool": "osu_bw"}
	b.Labels = map[string]string{"fabric": variant, "site": "lab"}
	b.Job = results.Job{ID: job, Step: "0", Name: "osu", Partition: "compute",
		Nodes: []string{"n01", "n02"}, Tasks: 2, TasksPerNode: "1(x2)"}
	b.Start = time.Date(2024, 5, 1, 10, 0, 0, 123456789, time.UTC)
	b.End = b.Start.Add(30 * time.Second)
	b.RunnerVersion = "v0.1.0"
	b.Hosts = []results.Host{osuHost("n01", 0), osuHost("n02", 1)}
	b.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool", Kernel: "osu",
		Command: []string{"osu_bw", "-m", "1:4194304"}, Launcher: "srun", Tool: "osu_bw", ToolVersion: "7.4"}
	var raw strings.Builder
	raw.WriteString("# OSU MPI Bandwidth Test v7.4\n# Size      Bandwidth (MB/s)\n")
	for i := 0; i < points; i++ {
		x := float64(int64(1) << i)
		v := 12000 * x / (x + 8192)
		b.Samples = append(b.Samples, results.Sample{
			Metric: "bandwidth", Unit: results.UnitMBps, X: results.F(x), XUnit: results.UnitBytes,
			Value: v, Iterations: 1000,
		})
		fmt.Fprintf(&raw, "%-10d %18.2f\n", int64(x), v)
	}
	b.Raw = raw.String()
	return b
}

// osuBundles is n osuBundle runs of one campaign, jobs "0" to n-1.
func osuBundles(campaign string, n, points int) []*results.Bundle {
	bs := make([]*results.Bundle, n)
	for i := range bs {
		bs[i] = osuBundle(campaign, "ib", fmt.Sprint(i), points)
	}
	return bs
}

// hplBundle is an HPL run with scalars and residual checks, one of which
// failed: an invalid result.
func hplBundle(campaign, job string, start time.Time) *results.Bundle {
	b := results.New()
	b.Campaign = campaign
	b.Variant = "hpl/n20000"
	b.Params = map[string]string{"N": "20000", "NB": "192"}
	b.Labels = map[string]string{"fabric": "ib", "mpi": "intel"}
	b.Job = results.Job{ID: job, Step: "1", Nodes: []string{"n01", "n02", "n03", "n04"}, Tasks: 160, TasksPerNode: "40(x4)"}
	b.Start = start
	b.End = start.Add(10 * time.Minute)
	b.Benchmark = results.Benchmark{Name: "hpl", Kind: "tool", Kernel: "hpl", Command: []string{"xhpl"}, Tool: "xhpl", ToolVersion: "2.3"}
	b.Status = results.StatusInvalid
	b.Samples = []results.Sample{{Metric: "gflops", Unit: "Gflops", Value: 2345.6, Repeat: 0}, {Metric: "gflops", Unit: "Gflops", Value: 2351.25, Repeat: 1}}
	b.Scalars = []results.Scalar{
		{Name: "N", Value: 20000}, {Name: "NB", Value: 192}, {Name: "P", Value: 8}, {Name: "Q", Value: 20},
		{Name: "time", Unit: "s", Value: 2.2743e+03}, {Name: "gflops", Unit: "Gflops", Value: 2351.25},
	}
	b.Checks = []results.Check{
		{Name: "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)", Value: 0.0040137, Threshold: 16, Op: "<", Passed: true},
		{Name: "||Ax-b||_oo/(eps*||A||_1*N)", Value: 18.52, Threshold: 16, Op: "<", Passed: false},
	}
	b.Raw = "T/V N NB P Q Time Gflops\nWR11C2R4 20000 192 8 20 2274.30 2.35125e+03\n"
	return b
}

// campaignVariants returns "campaign/variant" of each run, in order.
func campaignVariants(runs []Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Campaign+"/"+r.Variant)
	}
	return out
}

// runSystems returns the system of each run, in order.
func runSystems(runs []Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.System)
	}
	return out
}

// roundTrip returns b as a reader of its JSON would see it: what Bundle()
// must return for an ingested b.
func roundTrip(t testing.TB, b *results.Bundle) *results.Bundle {
	t.Helper()
	data, err := results.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := results.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
