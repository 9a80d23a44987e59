package parsers

import (
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
)

func TestPerfMainFixtures(t *testing.T) {
	tests := []struct {
		file    string
		version string
		params  map[string]string
	}{
		{"000-perf_main-rc-bw.txt", "",
			map[string]string{"transport": "RC", "test": "BW", "direction": "unidirectional", "port": "1"}},
		// The article's console as published: prompts, both sides' banners
		// (with NBSPs for spaces), Korean prose.
		{"perfmain-article000-console.txt", "10.3",
			map[string]string{"transport": "RC", "test": "BW", "direction": "unidirectional", "port": "1", "cpu_mcps": "2993.00", "arch": "X86"}},
	}
	for _, tt := range tests {
		runs, err := Parse(tt.file, "auto", []byte(fixture(t, tt.file)))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		if len(runs) != 1 {
			t.Fatalf("%s: %d runs", tt.file, len(runs))
		}
		b := runs[0]
		want := results.Benchmark{Name: "perf_main RC BW", Kind: "tool", Kernel: "perf_main", Tool: "perf_main", ToolVersion: tt.version}
		if b.Benchmark.Name != want.Name || b.Benchmark.Kind != want.Kind || b.Benchmark.Kernel != want.Kernel ||
			b.Benchmark.Tool != want.Tool || b.Benchmark.ToolVersion != want.ToolVersion || b.Status != results.StatusOK {
			t.Errorf("%s: benchmark %+v status %s", tt.file, b.Benchmark, b.Status)
		}
		if len(b.Params) != len(tt.params) {
			t.Errorf("%s: params %v, want %v", tt.file, b.Params, tt.params)
		}
		for k, v := range tt.params {
			if b.Params[k] != v {
				t.Errorf("%s: param %s = %q, want %q", tt.file, k, b.Params[k], v)
			}
		}
		// BW: 935.6 MBytes/sec [size: 128000 bytes, iter: 1000, total 128000000]
		if len(b.Samples) != 2 {
			t.Fatalf("%s: %d samples", tt.file, len(b.Samples))
		}
		mb, mib := b.Samples[0], b.Samples[1]
		if mb.Metric != "bandwidth" || mb.Unit != "MB/s" || *mb.X != 128000 || mb.XUnit != "bytes" || mb.Iterations != 1000 || mb.Value != 935.6*1048576/1e6 {
			t.Errorf("%s: bandwidth %+v", tt.file, mb)
		}
		if mib.Metric != "bandwidth_mibps" || mib.Unit != "MiB/s" || *mib.X != 128000 || mib.Value != 935.6 || mib.Iterations != 1000 {
			t.Errorf("%s: printed figure %+v", tt.file, mib)
		}
		if err := b.Validate(); err != nil {
			t.Error(err)
		}
	}
}

func TestPerfMainRefusals(t *testing.T) {
	lines := strings.SplitAfter(fixture(t, "000-perf_main-rc-bw.txt"), "\n")
	start, bw, end := lines[0], lines[1], lines[2]
	checkRefused(t, "perf_main", []badInput{
		{"cut after the result", start + bw, "x:1: perf_main RC BW Unidirection test started here never finished: the output is cut"},
		{"finish without start", bw + end, "x:1: perf_main result line outside a \"Test started … Test Finished\" block\n" +
			"x:2: perf_main RC BW Unidirection test finished without a start line"},
		{"no result line", start + end, "x:2: perf_main RC BW Unidirection test holds no result line this parser knows (\"BW: … MBytes/sec [size: …]\")"},
		{"1.2.3", start + strings.Replace(bw, "935.6", "935.6.1", 1) + end, `x:2: perf_main result line has a field that is not a number: "BW: 935.6.1 MBytes/sec [size: 128000 bytes, iter: 1000, total 128000000]"`},
		{"missing field", start + strings.Replace(bw, ", total 128000000", "", 1) + end, `x:2: perf_main result line does not parse: "BW: 935.6 MBytes/sec [size: 128000 bytes, iter: 1000]"`},
		{"another port finishes", start + bw + strings.Replace(end, "port 1", "port 2", 1),
			"x:3: perf_main RC BW Unidirection test on port 2 finishes the RC BW Unidirection test on port 1 started at line 1"},
	})
}

// Two blocks one after the other are two runs; the banner's version goes to
// both.
func TestPerfMainSeveralBlocks(t *testing.T) {
	console := fixture(t, "perfmain-article000-console.txt")
	block := fixture(t, "000-perf_main-rc-bw.txt")
	runs, err := Parse("x", "perf_main", []byte(console+"\n"+block))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[1].Benchmark.ToolVersion != "10.3" || runs[0].Samples[1].Value != runs[1].Samples[1].Value {
		t.Errorf("got %d runs: %+v", len(runs), runs)
	}
}

func TestPerfMainSniff(t *testing.T) {
	for file, want := range map[string]string{
		"000-perf_main-rc-bw.txt":         "perf_main",
		"perfmain-article000-console.txt": "perf_main",
	} {
		f, err := Detect([]byte(fixture(t, file)))
		if err != nil || f.Name != want {
			t.Errorf("%s: %q, %v", file, f.Name, err)
		}
	}
	if s := sniffPerfMain([]byte(fixture(t, "nptcp-transmitter.stdout"))); s != 0 {
		t.Errorf("NetPIPE output scored %d", s)
	}
}

func FuzzPerfMain(f *testing.F) {
	golden.Seed(f, "testdata/000-perf_main-rc-bw.txt", "testdata/perfmain-article000-console.txt")
	fuzzParse(f, ParsePerfMain, checkSamples)
}
