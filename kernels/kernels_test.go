package kernels

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the kernel tables of docs/campaign.md from the table")

func TestParse(t *testing.T) {
	p, err := Parse("bw", map[string]string{"sizes": "1-8", "window": "16", "warmup": "0"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Sizes) != "[1 2 4 8]" || p.Window != 16 || p.Iterations != -1 || p.Warmup != 0 || p.Poll != PollSpin {
		t.Errorf("params %+v", p)
	}
	if it, w := p.Counts(8); it != 100 || w != 0 {
		t.Errorf("counts %d, %d; want the default 100 windows and the explicit 0 warm-up", it, w)
	}
	for _, tt := range []struct {
		kernel string
		params map[string]string
		want   string
	}{
		{"latency", nil, "sizes [1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576 2097152 4194304] window 64 poll spin placement  lat 0 bw 0 array 0 hpl {0 0 0 0}"},
		{"latency", map[string]string{"sizes": "1-4MiB"}, "sizes [1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576 2097152 4194304] window 64 poll spin placement  lat 0 bw 0 array 0 hpl {0 0 0 0}"},
		{"latency", map[string]string{"sizes": "0,64-256", "poll": "block"}, "sizes [0 64 128 256] window 64 poll block placement  lat 0 bw 0 array 0 hpl {0 0 0 0}"},
		{"allreduce", nil, "sizes [8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576] window 64 poll spin placement  lat 0 bw 0 array 0 hpl {0 0 0 0}"},
		{"pairs", nil, "sizes [1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576 2097152 4194304] window 64 poll spin placement half lat 0 bw 0 array 0 hpl {0 0 0 0}"},
		{"pairs", map[string]string{"placement": "intra", "sizes": "8"}, "sizes [8] window 64 poll spin placement intra lat 0 bw 0 array 0 hpl {0 0 0 0}"},
		{"matrix", nil, "sizes [0] window 8 poll spin placement  lat 8 bw 1048576 array 0 hpl {0 0 0 0}"},
		{"matrix", map[string]string{"latency_size": "1", "bandwidth_size": "4M", "window": "2"}, "sizes [0] window 2 poll spin placement  lat 1 bw 4194304 array 0 hpl {0 0 0 0}"},
		{"stream", nil, "sizes [0] window 64 poll spin placement  lat 0 bw 0 array 10000000 hpl {0 0 0 0}"},
		{"barrier", nil, "sizes [0] window 64 poll spin placement  lat 0 bw 0 array 0 hpl {0 0 0 0}"},
		{"hpl", nil, "sizes [0] window 64 poll spin placement  lat 0 bw 0 array 0 hpl {10000 0 1 0}"},
		{"hpl", map[string]string{"n": "500", "nb": "32", "seed": "18446744073709551615", "threads": "0"}, "sizes [0] window 64 poll spin placement  lat 0 bw 0 array 0 hpl {500 32 18446744073709551615 0}"},
	} {
		p, err := Parse(tt.kernel, tt.params)
		got := fmt.Sprintf("sizes %v window %d poll %s placement %s lat %d bw %d array %d hpl %v", p.Sizes, p.Window, p.Poll, p.Placement, p.LatencySize, p.BandwidthSize, p.ArraySize, p.HPL)
		if err != nil || got != tt.want {
			t.Errorf("%s %v: %s, %v; want %s", tt.kernel, tt.params, got, err, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct {
		kernel string
		params map[string]string
		want   string
	}{
		{"pingpong", nil, `unknown kernel "pingpong" (known: allreduce, alltoall, barrier, bcast, bibw, bw, hpl, latency, matrix, pairs, stream)`},
		{"latency", map[string]string{"window": "8"}, `param "window": not a parameter of the latency kernel (known: iterations, poll, sizes, warmup)`},
		{"latency", map[string]string{"iterations": "0"}, `param iterations: "0" is not an integer from 1 to 10000000`},
		{"latency", map[string]string{"warmup": "-1"}, `param warmup: "-1" is not an integer from 0 to 10000000`},
		{"bw", map[string]string{"window": "5000"}, `param window: "5000" is not an integer from 1 to 4096`},
		{"bw", map[string]string{"sizes": "x"}, `param sizes: size "x": want a number of bytes`},
		{"bw", map[string]string{"sizes": "8-1"}, `param sizes: range "8-1": 8 is above 1`},
		{"bw", map[string]string{"sizes": "1-2G"}, `param sizes: size 2 GiB is above the limit of 1 GiB`},
		{"latency", map[string]string{"poll": "busy"}, `param poll: "busy" is not spin or block`},
		{"pairs", map[string]string{"placement": "far"}, `param placement: "far" is not half, intra or inter`},
		{"matrix", map[string]string{"bandwidth_size": "0"}, `param bandwidth_size: 0 bytes make no bandwidth`},
		{"matrix", map[string]string{"latency_size": "2GiB"}, `param latency_size: 2 GiB is above the limit of 1 GiB`},
		{"allreduce", map[string]string{"sizes": "12"}, `param sizes: the allreduce kernel sums vectors of float64: size 12 is not a positive multiple of 8`},
		{"stream", map[string]string{"iterations": "201"}, `param iterations: 201 is above 200 (STREAM's values overflow a float64 beyond)`},
		{"stream", map[string]string{"array_size": "0"}, `param array_size: "0" is not an integer from 1 to 1073741824`},
		{"hpl", map[string]string{"seed": "-1"}, `param seed: "-1" is not an unsigned 64-bit integer`},
		{"hpl", map[string]string{"n": "0"}, `param n: "0" is not an integer from 1 to 1048576`},
		{"barrier", map[string]string{"sizes": "8"}, `param "sizes": not a parameter of the barrier kernel (known: iterations, warmup)`},
		{"matrix", map[string]string{"sizes": "8"}, `param "sizes": not a parameter of the matrix kernel (known: bandwidth_size, bandwidth_tolerance, iterations, latency_size, latency_tolerance, retests, schedule, send, warmup, window)`},
		{"matrix", map[string]string{"schedule": "all"}, `param schedule: "all" is not rounds or sequential`},
		{"matrix", map[string]string{"retests": "11"}, `param retests: "11" is not an integer from 0 to 10`},
		{"matrix", map[string]string{"latency_tolerance": "1"}, `param latency_tolerance: "1" is not a number above 1`},
		{"matrix", map[string]string{"latency_tolerance": "Inf"}, `param latency_tolerance: "Inf" is not a number above 1`},
		{"matrix", map[string]string{"latency_tolerance": "x"}, `param latency_tolerance: "x" is not a number above 1`},
		{"matrix", map[string]string{"bandwidth_tolerance": "93%"}, `param bandwidth_tolerance: "93%" is not a number between 0 and 1`},
		{"matrix", map[string]string{"bandwidth_tolerance": "1"}, `param bandwidth_tolerance: "1" is not a number between 0 and 1`},
		{"matrix", map[string]string{"bandwidth_tolerance": "NaN"}, `param bandwidth_tolerance: "NaN" is not a number between 0 and 1`},
		{"stream", map[string]string{"window": "2"}, `param "window": not a parameter of the stream kernel (known: array_size, iterations)`},
	} {
		_, err := Parse(tt.kernel, tt.params)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s %v: %v, want %q", tt.kernel, tt.params, err, tt.want)
		}
	}
}

// TestTable: every kernel's defaults parse, every parameter can be set,
// and the facts are sound.
func TestTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range All() {
		if seen[k.Name] || k.Name == "" || k.MinRanks < 1 || k.Measures == "" {
			t.Errorf("kernel %+v", k)
		}
		seen[k.Name] = true
		if _, err := Parse(k.Name, nil); err != nil {
			t.Errorf("%s: defaults: %v", k.Name, err)
		}
		for _, par := range k.Params {
			if par.Doc == "" {
				t.Errorf("%s: param %s has no doc", k.Name, par.Name)
			}
			v := par.Default
			switch {
			case v != "":
			case par.Kind == Count:
				v = fmt.Sprint(max(par.Min, 1))
			default:
				t.Errorf("%s: param %s: no default and no sample", k.Name, par.Name)
			}
			if _, err := Parse(k.Name, map[string]string{par.Name: v}); err != nil {
				t.Errorf("%s: %s=%s: %v", k.Name, par.Name, v, err)
			}
			if par.Kind == Choice && (len(par.Choices) < 2 || par.Default != par.Choices[0]) {
				t.Errorf("%s: choice %s: %v, default %q", k.Name, par.Name, par.Choices, par.Default)
			}
		}
	}
	if got := strings.Join(Names(), " "); got != "allreduce alltoall barrier bcast bibw bw hpl latency matrix pairs stream" {
		t.Errorf("Names() = %s", got)
	}
}

// TestParseMatrix: the schedule, the re-tests and ClusterKit's
// tolerances, by default and set.
func TestParseMatrix(t *testing.T) {
	p, err := Parse("matrix", nil)
	if err != nil || p.Schedule != ScheduleRounds || p.Retests != DefaultMatrixRetests || p.Tolerance != DefaultTolerance() {
		t.Errorf("defaults: schedule %q, retests %d, tolerance %+v, %v", p.Schedule, p.Retests, p.Tolerance, err)
	}
	p, err = Parse("matrix", map[string]string{"schedule": "sequential", "retests": "0", "latency_tolerance": "3", "bandwidth_tolerance": " 0.5"})
	if err != nil || p.Schedule != ScheduleSequential || p.Retests != 0 || p.Tolerance != (Tolerance{LatencyFactor: 3, BandwidthFraction: 0.5}) {
		t.Errorf("set: schedule %q, retests %d, tolerance %+v, %v", p.Schedule, p.Retests, p.Tolerance, err)
	}
	// Other kernels have no tolerance: the zero value, which Check rejects.
	if p, _ := Parse("pairs", nil); p.Schedule != "" || p.Tolerance.Check() == nil {
		t.Errorf("pairs: schedule %q, tolerance %+v", p.Schedule, p.Tolerance)
	}
}

func TestParseHPL(t *testing.T) {
	p, err := Parse("hpl", nil)
	if err != nil || p.HPL != (HPL{N: DefaultHPLN, Seed: DefaultHPLSeed}) {
		t.Errorf("defaults: %+v, %v", p.HPL, err)
	}
	p, err = Parse("hpl", map[string]string{"n": " 3000", "nb": "128", "seed": "18446744073709551615", "threads": "0"})
	if err != nil || p.HPL != (HPL{N: 3000, NB: 128, Seed: math.MaxUint64}) {
		t.Errorf("set: %+v, %v", p.HPL, err)
	}
	for _, tc := range []struct{ params, want string }{
		{"n=0", `param n: "0" is not an integer from 1 to 1048576`},
		{"n=1e4", `param n: "1e4" is not an integer from 1 to 1048576`},
		{"nb=5000", `param nb: "5000" is not an integer from 1 to 4096`},
		{"threads=-1", `param threads: "-1" is not an integer from 0 to 4096`},
		{"seed=-1", `param seed: "-1" is not an unsigned 64-bit integer`},
	} {
		k, v, _ := strings.Cut(tc.params, "=")
		if _, err := Parse("hpl", map[string]string{k: v}); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.params, err, tc.want)
		}
	}
	if k, _ := Lookup("hpl"); strings.Join(k.ParamNames(), " ") != "n nb seed threads" {
		t.Errorf("names %v", k.ParamNames())
	}
}

func TestDefaultCounts(t *testing.T) {
	lat, _ := Parse("latency", nil)
	bw, _ := Parse("bw", nil)
	for _, tt := range []struct {
		p          Params
		size       int
		iters, war int
	}{
		{lat, 1, 1000, 100},
		{lat, 8192, 1000, 100},
		{lat, 8193, 100, 10},
		{lat, 4 << 20, 100, 10},
		{bw, 8192, 100, 10},
		{bw, 16384, 20, 2},
		{bw, 256 << 10, 20, 2},
		{bw, 1 << 20, 8, 1}, // 512 MiB / (1 MiB × 64)
		{bw, 4 << 20, 2, 1},
		{bw, 1 << 30, 2, 1},
	} {
		it, w := tt.p.Counts(tt.size)
		if it != tt.iters || w != tt.war {
			t.Errorf("%s at %d bytes: %d+%d, want %d+%d", tt.p.Kernel, tt.size, it, w, tt.iters, tt.war)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, k := range Names() {
		f.Add(k, "sizes", "8-64", "placement", "intra")
	}
	f.Add("matrix", "latency_size", "1K", "bandwidth_size", "4M")
	f.Add("matrix", "latency_tolerance", "1.5", "bandwidth_tolerance", "0.9")
	f.Add("matrix", "schedule", "sequential", "retests", "0")
	f.Add("stream", "array_size", "100", "iterations", "3")
	f.Add("allreduce", "sizes", "12", "warmup", "0")
	f.Add("hpl", "n", "100", "seed", "7")
	f.Fuzz(func(t *testing.T, kernel, k1, v1, k2, v2 string) {
		p, err := Parse(kernel, map[string]string{k1: v1, k2: v2})
		if err != nil {
			if !strings.Contains(err.Error(), "kernel") && !strings.Contains(err.Error(), "param") {
				t.Fatalf("error %q names neither the kernel nor the param", err)
			}
			return
		}
		if len(p.Sizes) == 0 || p.Window < 1 {
			t.Fatalf("%s: sizes %v, window %d", kernel, p.Sizes, p.Window)
		}
		for _, s := range p.Sizes {
			if s < 0 || s > MaxMessageSize {
				t.Fatalf("%s: size %d", kernel, s)
			}
		}
		switch kernel {
		case "allreduce":
			for _, s := range p.Sizes {
				if s <= 0 || s%8 != 0 {
					t.Fatalf("allreduce size %d", s)
				}
			}
		case "pairs":
			if p.Placement != PlacementHalf && p.Placement != PlacementIntra && p.Placement != PlacementInter {
				t.Fatalf("placement %q", p.Placement)
			}
		case "matrix":
			if p.BandwidthSize < 1 || p.BandwidthSize > MaxMessageSize || p.LatencySize < 0 || p.LatencySize > MaxMessageSize {
				t.Fatalf("matrix sizes %d %d", p.LatencySize, p.BandwidthSize)
			}
			if err := p.Tolerance.Check(); err != nil || p.Retests < 0 || p.Retests > MaxMatrixRetests ||
				p.Schedule != ScheduleRounds && p.Schedule != ScheduleSequential {
				t.Fatalf("matrix schedule %q, retests %d, tolerance %+v: %v", p.Schedule, p.Retests, p.Tolerance, err)
			}
		case "stream":
			if p.ArraySize < 1 || p.ArraySize > MaxStreamArraySize || p.Iterations > MaxStreamIterations {
				t.Fatalf("stream %d × %d", p.ArraySize, p.Iterations)
			}
		}
	})
}

// docTables writes the table as docs/campaign.md shows it: one row per
// kernel, then one per parameter.
func docTables() string {
	var b strings.Builder
	b.WriteString("| kernel | ranks | measures | params (default) |\n|---|---|---|---|\n")
	for _, k := range All() {
		var ps []string
		for _, p := range k.Params {
			s := "`" + p.Name + "`"
			if p.Default != "" {
				s += " (`" + p.Default + "`)"
			}
			ps = append(ps, s)
		}
		fmt.Fprintf(&b, "| `%s` | ≥ %d | %s | %s |\n", k.Name, k.MinRanks, k.Measures, strings.Join(ps, ", "))
	}
	b.WriteString("\n| param | value | kernels | meaning |\n|---|---|---|---|\n")
	for _, row := range ParamDocs() {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", row.Name, row.Value, strings.Join(row.Kernels, ", "), row.Doc)
	}
	return b.String()
}

// TestDocsAgree holds docs/campaign.md's kernel tables to the table;
// -update-docs rewrites them.
func TestDocsAgree(t *testing.T) {
	const path = "../docs/campaign.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	const first = "| kernel | ranks |"
	start := strings.Index(doc, first)
	if start < 0 {
		t.Fatalf("%s has no kernel table (a line starting %q)", path, first)
	}
	// The tables end at the first line after the parameter table that is
	// not a table row.
	end := start
	tables := 0
	for _, line := range strings.SplitAfter(doc[start:], "\n") {
		switch {
		case strings.HasPrefix(line, "|"):
		case strings.TrimSpace(line) == "" && tables == 0:
			tables++
		default:
			tables = 2
		}
		if tables == 2 {
			break
		}
		end += len(line)
	}
	want := docTables()
	if got := strings.TrimRight(doc[start:end], "\n") + "\n"; got != want {
		if *updateDocs {
			if err := os.WriteFile(path, []byte(doc[:start]+want+"\n"+strings.TrimLeft(doc[end:], "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's kernel tables differ from package kernels' table (go test ./kernels -update-docs rewrites them):\n--- docs\n%s--- table\n%s", path, got, want)
	}
}

// TestSendDefaultsToCopy: the streaming kernels write by default, as NPtcp,
// iperf3 and MPI libraries do. What splicing gains depends on the host: on
// one 2-vCPU VM it beat writing at 256-512 KiB, on a 2-core AMD EPYC VM
// it measured 0.40-0.92x NPtcp from 64 KiB up where writing reached
// 1.04-3.07x. As the default it moved every native bandwidth history by
// 2x with the host.
func TestSendDefaultsToCopy(t *testing.T) {
	for _, kernel := range []string{"bw", "pairs", "matrix"} {
		p, err := Parse(kernel, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Send != SendCopy {
			t.Errorf("%s: send %q by default, want %q", kernel, p.Send, SendCopy)
		}
		p, err = Parse(kernel, map[string]string{"send": SendSplice})
		if err != nil || p.Send != SendSplice {
			t.Errorf("%s with send=splice: send %q, %v", kernel, p.Send, err)
		}
	}
}
