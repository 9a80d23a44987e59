// Command sitearchive writes the runs of a site-like archive: several
// clusters measured every night for years, the archive bench/archive-scale.sh
// times sbench's commands on. The runs are what sbench itself would have
// archived — OSU outputs wrapped by sbench-runner and read by sbench's own
// OSU and HPL parsers, the runner's matrix (all node pairs, in rounds of
// disjoint pairs, suspect links re-tested) and pairs kernels — with the
// provenance each would carry, and with what makes an archive worth keeping:
//
//   - three systems (alpha: 64 nodes of HDR InfiniBand, beta: 32 of EDR,
//     gamma: 24 of 100G RoCE) from 2022-01-01 to 2025-12-31, every run
//     labelled with its system, fabric and MPI (which changes mid-2023);
//   - a step change: alpha's InfiniBand firmware upgrade of 2024-03-12
//     costs its inter-node osu_bw 11% (the hosts' firmware changes with
//     it), and gamma's kernel update of 2023-09-04 cuts its latency by 8%;
//   - failed runs (a task that exited, a node lost) and HPL runs whose
//     residual check failed (invalid).
//
// Output is either an archive file for "sbench archive import" (-o
// FILE.sbench.gz) or one bundle file per run for "sbench ingest" (-dir
// DIR). The same -runs and -seed give the same bytes.
//
//	go run ./bench/sitearchive -runs 20000 -o site.sbench.gz
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/sbench/sbench/hpl" // registers the hpl format
	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "sitearchive: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("sitearchive", flag.ContinueOnError)
	n := fs.Int("runs", 20000, "number of runs")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("o", "", "write an archive file (sbench archive import); .gz to compress")
	dir := fs.String("dir", "", "write one bundle file per run into this directory (sbench ingest)")
	fs.IntVar(&matrixNodes, "matrix-nodes", matrixNodes, "nodes of each matrix run (at most 24, gamma's size)")
	cluster := fs.Bool("cluster-field", false, "record the system as the runner does (job.cluster, SLURM_CLUSTER_NAME) instead of a system label")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if matrixNodes < 2 || matrixNodes > 24 {
		return fmt.Errorf("-matrix-nodes %d: want 2 to 24", matrixNodes)
	}
	if (*out == "") == (*dir == "") {
		return fmt.Errorf("give one of -o FILE and -dir DIR")
	}
	g := newGenerator(*n, *seed, *cluster)
	if *dir != "" {
		if err := os.MkdirAll(*dir, 0o755); err != nil {
			return err
		}
		return g.each(func(b *results.Bundle, source string) error {
			data, err := results.Marshal(b)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(*dir, filepath.Base(source)), data, 0o644)
		})
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	var w io.Writer = bw
	var zw *gzip.Writer
	if strings.HasSuffix(*out, ".gz") {
		zw, _ = gzip.NewWriterLevel(bw, gzip.BestSpeed)
		w = zw
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"schema": "sbench.archive/v1", "runs": *n}); err != nil {
		return err
	}
	err = g.each(func(b *results.Bundle, source string) error {
		data, err := json.Marshal(b)
		if err != nil {
			return err
		}
		return enc.Encode(struct {
			Source     string          `json:"source"`
			IngestedAt string          `json:"ingested_at"`
			Bundle     json.RawMessage `json:"bundle"`
		}{source, b.End.Add(7 * time.Minute).UTC().Format("2006-01-02T15:04:05.000000000Z"), data})
	})
	if err != nil {
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// system is one cluster of the site.
type system struct {
	name, fabric, prefix string
	nodes                int
	cpu                  string
	cores                int
	memGiB               uint64
	linkGbps             float64
	rate                 string // as /sys/class/infiniband says it
	linkLayer            string
	latency              float64 // µs at small sizes
	share                float64 // of the runs
}

var systems = []system{
	{name: "alpha", fabric: "ib-hdr", prefix: "a", nodes: 64, cpu: "Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz", cores: 64, memGiB: 512,
		linkGbps: 200, rate: "200 Gb/sec (4X HDR)", linkLayer: "InfiniBand", latency: 1.05, share: 0.45},
	{name: "beta", fabric: "ib-edr", prefix: "b", nodes: 32, cpu: "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", cores: 40, memGiB: 192,
		linkGbps: 100, rate: "100 Gb/sec (4X EDR)", linkLayer: "InfiniBand", latency: 1.2, share: 0.35},
	{name: "gamma", fabric: "roce-100", prefix: "g", nodes: 24, cpu: "AMD EPYC 7543 32-Core Processor", cores: 64, memGiB: 256,
		linkGbps: 100, rate: "100 Gb/sec (4X EDR)", linkLayer: "Ethernet", latency: 2.1, share: 0.20},
}

var (
	start        = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	end          = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	alphaUpgrade = time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	gammaKernel  = time.Date(2023, 9, 4, 0, 0, 0, 0, time.UTC)
	mpiUpgrade   = time.Date(2023, 7, 1, 0, 0, 0, 0, time.UTC)
)

// What a job step runs, with its share of the steps.
var benchmarks = []struct {
	name  string
	share float64
}{
	{"osu_bw", 0.235}, {"osu_latency", 0.235}, {"osu_allreduce", 0.18}, {"pairs", 0.12}, {"matrix", 0.145}, {"hpl", 0.085},
}

type generator struct {
	n       int
	rng     *rand.Rand
	cluster bool
	jobID   map[string]int
}

func newGenerator(n int, seed uint64, cluster bool) *generator {
	return &generator{n: n, rng: rand.New(rand.NewPCG(seed, 15)), cluster: cluster, jobID: map[string]int{}}
}

// each makes the runs in time order: nightly jobs of four steps spread
// evenly over the four years, each job on one system.
func (g *generator) each(fn func(*results.Bundle, string) error) error {
	const steps = 4
	jobs := (g.n + steps - 1) / steps
	span := end.Sub(start)
	made := 0
	for j := 0; j < jobs && made < g.n; j++ {
		t := start.Add(time.Duration(float64(span) * (float64(j) + g.rng.Float64()*0.5) / float64(jobs)))
		sys := g.pickSystem()
		g.jobID[sys.name]++
		i := slices.IndexFunc(systems, func(s system) bool { return s.name == sys.name })
		job := strconv.Itoa(100000*(1+i) + g.jobID[sys.name]) // alpha 100001…, beta 200001…
		for s := 0; s < steps && made < g.n; s++ {
			b, err := g.step(sys, job, s, t)
			if err != nil {
				return err
			}
			t = b.End.Add(20 * time.Second)
			source := fmt.Sprintf("sbench-runs/nightly/%s.%d.%s.json", job, s, b.Benchmark.Name)
			if err := fn(b, source); err != nil {
				return err
			}
			made++
		}
	}
	return nil
}

func (g *generator) pickSystem() *system {
	u := g.rng.Float64()
	for i := range systems {
		if u < systems[i].share {
			return &systems[i]
		}
		u -= systems[i].share
	}
	return &systems[len(systems)-1]
}

func (g *generator) pickBenchmark() string {
	u := g.rng.Float64()
	for _, b := range benchmarks {
		if u < b.share {
			return b.name
		}
		u -= b.share
	}
	return benchmarks[0].name
}

// noise is a run's multiplicative jitter, about 1.5%.
func (g *generator) noise() float64 { return 1 + 0.015*g.rng.NormFloat64() }

func mpiOf(sys *system, t time.Time) string {
	switch {
	case sys.name == "gamma":
		return "mvapich2-2.3.7"
	case t.Before(mpiUpgrade):
		return "openmpi-4.1.4"
	}
	return "openmpi-4.1.6"
}

func (g *generator) step(sys *system, job string, step int, t time.Time) (*results.Bundle, error) {
	bench := g.pickBenchmark()
	var b *results.Bundle
	var err error
	nodes := 2
	switch bench {
	case "osu_bw", "osu_latency":
		b, err = g.osuPointToPoint(sys, bench, t)
	case "osu_allreduce":
		nodes = []int{4, 8, 16}[g.rng.IntN(3)]
		b, err = g.osuAllreduce(sys, nodes, t)
	case "pairs":
		nodes = 8
		b = g.pairs(sys, t)
	case "matrix":
		nodes = matrixNodes
		b = g.matrix(sys, t)
	case "hpl":
		nodes = 4
		b, err = g.hpl(sys, t)
	}
	if err != nil {
		return nil, err
	}
	b.Campaign = "nightly"
	b.Labels = map[string]string{"fabric": sys.fabric, "mpi": mpiOf(sys, t)}
	if g.cluster {
		b.Job.Cluster = sys.name
	} else {
		b.Labels["system"] = sys.name
	}
	if b.Variant == "" {
		b.Variant = fmt.Sprintf("n%d", nodes)
	}
	b.Job.ID, b.Job.Step, b.Job.Name, b.Job.Partition = job, strconv.Itoa(step), "nightly-"+sys.name, "bench"
	first := g.rng.IntN(sys.nodes - nodes + 1)
	if b.Variant == "intra" {
		nodes = 1
	}
	for i := 0; i < nodes; i++ {
		b.Job.Nodes = append(b.Job.Nodes, nodeName(sys, first+i))
		b.Hosts = append(b.Hosts, hostOf(sys, first+i, t))
	}
	if b.Job.Tasks == 0 {
		b.Job.Tasks = nodes
	}
	b.RunnerVersion = "0.9.0"
	b.Start = t
	b.End = t.Add(time.Duration(30+g.rng.IntN(240)) * time.Second)
	// A task that died, a node lost: the step failed and measured nothing.
	if g.rng.Float64() < 0.02 {
		b.Status = results.StatusFailed
		victim := b.Job.Nodes[g.rng.IntN(len(b.Job.Nodes))]
		b.Error = []string{
			"srun: error: " + victim + ": task 1: Exited with exit code 1",
			"bootstrap: rank 1 on " + victim + " did not arrive within 60s",
			"Slurm job " + job + ": NODE_FAIL (" + victim + " not responding)",
		}[g.rng.IntN(3)]
		b.Samples, b.Scalars, b.Checks = nil, nil, nil
	}
	return b, nil
}

func nodeName(sys *system, i int) string {
	if sys.nodes >= 100 {
		return fmt.Sprintf("%s%03d", sys.prefix, i+1)
	}
	return fmt.Sprintf("%s%02d", sys.prefix, i+1)
}

// hostOf is node i of sys as the runner describes it at t: the firmware
// and kernel change at the dates the step changes happen.
func hostOf(sys *system, i int, t time.Time) results.Host {
	name := nodeName(sys, i)
	kernel, os := "4.18.0-372.9.1.el8.x86_64", "Rocky Linux 8.6 (Green Obsidian)"
	if sys.name == "gamma" && !t.Before(gammaKernel) {
		kernel, os = "5.14.0-284.11.1.el9_2.x86_64", "Rocky Linux 9.2 (Blue Onyx)"
	}
	fw := "20.31.1014"
	if sys.name == "alpha" && !t.Before(alphaUpgrade) {
		fw = "20.35.2000"
	}
	return results.Host{
		Hostname: name + ".cluster." + sys.name, NodeName: name, Ranks: []int{0},
		CPUModel: sys.cpu, Sockets: 2, Cores: sys.cores, Threads: 2 * sys.cores,
		CPUFlags: strings.Fields("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ss ht syscall nx pdpe1gb rdtscp lm constant_tsc " +
			"rep_good nopl xtopology nonstop_tsc cpuid pni pclmulqdq monitor ssse3 fma cx16 pcid sse4_1 sse4_2 x2apic movbe popcnt aes xsave avx f16c rdrand avx2 bmi2 avx512f"),
		Governor: "performance", MemoryBytes: sys.memGiB << 30, NUMANodes: 2,
		Kernel: kernel, OS: os, MPI: mpiOf(sys, t),
		IB:  []results.IBPort{{Device: "mlx5_0", Port: 1, State: "ACTIVE", Rate: sys.rate, RateGbps: sys.linkGbps, LinkLayer: sys.linkLayer, Firmware: fw}},
		Net: []results.NetIf{{Name: "eno1", SpeedMbps: 25000, MTU: 1500, State: "up"}},
	}
}

// bandwidth is sys's point-to-point bandwidth in MB/s at size bytes.
func bandwidth(sys *system, size float64, t time.Time) float64 {
	peak := sys.linkGbps * 125 * 0.93
	if sys.name == "alpha" && !t.Before(alphaUpgrade) {
		peak *= 0.89
	}
	lat := latency(sys, 0, t)
	return size / (lat + size/peak)
}

// latency is sys's one-way latency in µs at size bytes.
func latency(sys *system, size float64, t time.Time) float64 {
	l := sys.latency
	if sys.name == "gamma" && !t.Before(gammaKernel) {
		l *= 0.92
	}
	return l + size/(sys.linkGbps*125*0.93)
}

// osuPointToPoint is an osu_bw or osu_latency between two nodes (inter)
// or two ranks of one (intra), as sbench-runner wraps it.
func (g *generator) osuPointToPoint(sys *system, bench string, t time.Time) (*results.Bundle, error) {
	variant := "inter"
	if g.rng.Float64() < 0.2 {
		variant = "intra"
	}
	var b strings.Builder
	if bench == "osu_bw" {
		b.WriteString("# OSU MPI Bandwidth Test v7.3\n# Datatype: MPI_CHAR.\n# Size      Bandwidth (MB/s)\n")
	} else {
		b.WriteString("# OSU MPI Latency Test v7.3\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n")
	}
	j := g.noise()
	for size := 1.0; size <= 4<<20; size *= 2 {
		var v float64
		switch {
		case bench == "osu_bw" && variant == "intra":
			v = size / (0.25 + size/9500) * j
		case bench == "osu_bw":
			v = bandwidth(sys, size, t) * j
		case variant == "intra":
			v = (0.22 + size/9500) * j
		default:
			v = latency(sys, size, t) * j
		}
		fmt.Fprintf(&b, "%-10d%18.2f\n", int(size), v)
	}
	return g.tool(bench, "osu", b.String(), []string{"/opt/osu-7.3/mpi/pt2pt/" + bench, "-m", "1:4194304"}, variant)
}

func (g *generator) osuAllreduce(sys *system, nodes int, t time.Time) (*results.Bundle, error) {
	var b strings.Builder
	b.WriteString("# OSU MPI Allreduce Latency Test v7.3\n# Datatype: MPI_INT.\n# Size       Avg Latency(us)\n")
	j := g.noise()
	steps := math.Log2(float64(nodes))
	for size := 4.0; size <= 1<<20; size *= 2 {
		fmt.Fprintf(&b, "%-10d%18.2f\n", int(size), (latency(sys, 0, t)*2*steps+2*size/(sys.linkGbps*125*0.8))*j)
	}
	bd, err := g.tool("osu_allreduce", "osu", b.String(), []string{"/opt/osu-7.3/mpi/collective/osu_allreduce"}, fmt.Sprintf("n%d", nodes))
	if err == nil {
		bd.Job.Tasks = nodes
	}
	return bd, err
}

// tool reads a tool's output with sbench's own parser, as sbench-runner
// does for a wrapped command, and fills what the runner adds.
func (g *generator) tool(bench, parser, out string, command []string, variant string) (*results.Bundle, error) {
	bs, err := parsers.Parse(bench+".out", parser, []byte(out))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bench, err)
	}
	b := bs[0]
	b.Benchmark.Name = bench
	b.Benchmark.Command = command
	b.Benchmark.Launcher = "srun"
	b.Variant = variant
	b.Source = ""
	return b, nil
}

func (g *generator) hpl(sys *system, t time.Time) (*results.Bundle, error) {
	const n, nb, p, q = 120000, 232, 4, 16
	rpeak := 4 * float64(sys.cores) * 2.4 * 32
	gflops := rpeak * 0.78 * g.noise()
	secs := 2.0 / 3 * n * n * n / gflops / 1e9
	r1 := 0.0021 * g.noise()
	status := "PASSED"
	if g.rng.Float64() < 0.04 {
		r1, status = 44.6*g.noise(), "FAILED"
	}
	out := fmt.Sprintf(`================================================================================
HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018
================================================================================
The following parameter values will be used:
N      :  %6d
NB     :     %3d
PMAP   : Row-major process mapping
P      :       %d
Q      :      %d
PFACT  :   Right
NBMIN  :       4
NDIV   :       2
RFACT  :   Crout
BCAST  :  1ringM
DEPTH  :       1
SWAP   : Mix (threshold = 64)
L1     : transposed form
U      : transposed form
EQUIL  : yes
ALIGN  : 8 double precision words
--------------------------------------------------------------------------------
- The matrix A is randomly generated for each test.
- The following scaled residual check will be computed:
      ||Ax-b||_oo / ( eps * ( || x ||_oo * || A ||_oo + || b ||_oo ) * N )
- The relative machine precision (eps) is taken to be               1.110223e-16
- Computational tests pass if scaled residuals are less than                16.0
================================================================================
T/V                N    NB     P     Q               Time                 Gflops
--------------------------------------------------------------------------------
WR11C2R4      %6d   %3d     %d    %d          %9.2f             %.4e
HPL_pdgesv() start time Mon Mar  4 02:11:41 2024

HPL_pdgesv() end time   Mon Mar  4 02:27:03 2024

--------------------------------------------------------------------------------
||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   %.7e ...... %s
================================================================================

Finished      1 tests with the following results:
              %d tests completed and passed residual checks,
              %d tests completed and failed residual checks,
              0 tests skipped because of illegal input values.
--------------------------------------------------------------------------------

End of Tests.
================================================================================
`, n, nb, p, q, n, nb, p, q, secs, gflops, r1, status, boolInt(status == "PASSED"), boolInt(status != "PASSED"))
	b, err := g.tool("hpl", "hpl", out, []string{"/opt/hpl-2.3/bin/xhpl"}, "n4")
	if err == nil {
		b.Job.Tasks = p * q
	}
	return b, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// pairs is the runner's pairs kernel: four node pairs at once, both
// ranks of a pair on different nodes, bandwidth per pair and in all.
func (g *generator) pairs(sys *system, t time.Time) *results.Bundle {
	b := results.New()
	b.Benchmark = results.Benchmark{Name: "pairs", Kind: "native", Kernel: "pairs"}
	b.Variant = "inter"
	const pairs = 4
	b.Job.Tasks = 2 * pairs
	first := g.rng.IntN(sys.nodes - 2*pairs + 1)
	for size := 1024.0; size <= 4<<20; size *= 2 {
		agg := 0.0
		for p := 0; p < pairs; p++ {
			v := bandwidth(sys, size, t) * g.noise() * 0.97
			agg += v
			b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", Unit: results.UnitMBps, X: results.F(size), XUnit: results.UnitBytes,
				Value: round(v), Iterations: 64, Pair: []int{p, p + pairs},
				Tags: map[string]string{"placement": "inter-node", "from": nodeName(sys, first+p), "to": nodeName(sys, first+p+pairs)}})
		}
		tags := map[string]string{"pairs": strconv.Itoa(pairs), "placement": "inter-node"}
		b.Samples = append(b.Samples,
			results.Sample{Metric: "aggregate_bandwidth", Unit: results.UnitMBps, X: results.F(size), XUnit: results.UnitBytes, Value: round(agg), Iterations: 64, Tags: tags},
			results.Sample{Metric: "message_rate", Unit: "messages/s", X: results.F(size), XUnit: results.UnitBytes, Value: round(agg * 1e6 / size), Iterations: 64,
				Tags: map[string]string{"pairs": strconv.Itoa(pairs), "placement": "inter-node"}})
	}
	return b
}

// matrixNodes is the size of a screening's partition (-matrix-nodes).
var matrixNodes = 16

// matrix is the runner's matrix kernel on sixteen nodes: every ordered
// node pair, in rounds of disjoint pairs, latency and bandwidth each; a
// pair well below the others is re-tested. A 20k-run archive holds about
// 2.9k of them, a site's weekly screenings beside its nightly runs.
func (g *generator) matrix(sys *system, t time.Time) *results.Bundle {
	b := results.New()
	b.Benchmark = results.Benchmark{Name: "matrix", Kind: "native", Kernel: "matrix"}
	b.Variant = "all-pairs"
	nodes := matrixNodes
	b.Job.Tasks = nodes
	first := g.rng.IntN(sys.nodes - nodes + 1)
	bad := -1
	if g.rng.Float64() < 0.3 {
		bad = g.rng.IntN(nodes) // a node with a bad cable this week
	}
	rnd := 0
	for a := 0; a < nodes; a++ {
		for c := 0; c < nodes; c++ {
			if a == c {
				continue
			}
			rnd = (rnd + 1) % (nodes - 1)
			from, to := nodeName(sys, first+a), nodeName(sys, first+c)
			tags := func() map[string]string {
				return map[string]string{"from": from, "to": to, "round": strconv.Itoa(rnd), "schedule": "rounds"}
			}
			bw := bandwidth(sys, 1<<22, t) * g.noise()
			lat := latency(sys, 8, t) * g.noise()
			if a == bad || c == bad {
				bw *= 0.55
				lat *= 1.6
			}
			b.Samples = append(b.Samples,
				results.Sample{Metric: kernels.MetricMatrixLatency, Unit: results.UnitMicroseconds, Value: round2(lat), Iterations: 100, Pair: []int{a, c}, Tags: tags()},
				results.Sample{Metric: kernels.MetricMatrixBandwidth, Unit: results.UnitMBps, Value: round(bw), Iterations: 8, Pair: []int{a, c}, Tags: tags()})
			if a == bad || c == bad {
				for pass := 1; pass <= 2; pass++ {
					tt := tags()
					tt["pass"] = strconv.Itoa(pass)
					b.Samples = append(b.Samples, results.Sample{Metric: kernels.MetricMatrixRetestBandwidth, Unit: results.UnitMBps,
						Value: round(bw * g.noise()), Iterations: 8, Pair: []int{a, c}, Tags: tt})
				}
			}
		}
	}
	return b
}

func round(v float64) float64  { return math.Round(v*100) / 100 }
func round2(v float64) float64 { return math.Round(v*1000) / 1000 }
