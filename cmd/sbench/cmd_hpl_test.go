package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

func TestHPLSize(t *testing.T) {
	stdout, stderr, code := sbench(t, "hpl", "size", "--nodes", "4", "--mem-per-node", "64GiB", "--ranks-per-node", "36", "--nb", "192")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if lines[0] != "N=165696 NB=192 P=12 Q=12" {
		t.Errorf("first line %q", lines[0])
	}
	for _, want := range []string{"4 node(s) × 64 GiB = 256 GiB", "80% of it", "N=165696 (863 blocks)", "P×Q=12×12",
		`n = 165696, nb = 192, p = 12, q = 12`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "time:") {
		t.Errorf("a time without --gflops:\n%s", stdout)
	}

	stdout, stderr, code = sbench(t, "hpl", "size", "--nodes", "2", "--mem-per-node", "16G", "--ranks-per-node", "8",
		"--nb", "256", "--fraction", "0.9", "--gflops", "500", "--json")
	if code != 0 {
		t.Fatalf("--json: exit %d: %s", code, stderr)
	}
	var out struct {
		N, NB, P, Q, Nodes, Ranks int
		MemBytes                  uint64 `json:"mem_bytes"`
		MatrixBytes               uint64 `json:"matrix_bytes"`
		Fill, Gflops, Seconds     float64
		Reasons                   []string
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if out.N != 61952 || out.NB != 256 || out.P != 4 || out.Q != 4 || out.Ranks != 16 || out.MemBytes != 32<<30 ||
		out.MatrixBytes != 8*61952*61952 || out.Gflops != 500 || out.Seconds < 300 || out.Seconds > 330 || len(out.Reasons) < 5 {
		t.Errorf("--json: %+v", out)
	}
}

func TestHPLSizeUsageErrors(t *testing.T) {
	usageErrors{
		{[]string{"--nodes", "0", "--mem-per-node", "1GiB", "--ranks-per-node", "1"}, "--nodes 0"},
		{[]string{"--mem-per-node", "64000", "--ranks-per-node", "1"}, "give a unit"},
		{[]string{"--mem-per-node", "1GiB", "--ranks-per-node", "1", "--fraction", "2"}, "--fraction 2"},
		{[]string{"--mem-per-node", "1GiB", "--ranks-per-node", "-1"}, "--ranks-per-node -1"},
		{[]string{"--mem-per-node", "1MiB", "--ranks-per-node", "1", "--nb", "1024"}, "holds no 1024×1024 block"},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"extra"}, "unknown command"},
	}.check(t, []string{"hpl", "size"})
}

// What the user leaves out is this machine's, and the output says so.
func TestSizeFlagsDefaultToThisMachine(t *testing.T) {
	here := func() results.Host { return results.Host{MemoryBytes: 24 << 30, Cores: 2} }
	req, notes, err := hplSizeOptions{nodes: 1, nb: 128}.sizeRequest(here)
	if err != nil || req.MemPerNode != 24<<30 || req.RanksPerNode != 2 || len(notes) != 2 ||
		!strings.Contains(notes[0], "this machine's, 24 GiB") || !strings.Contains(notes[1], "one per core of this machine, 2") {
		t.Errorf("sizeRequest = %+v, %q, %v", req, notes, err)
	}
	req, notes, err = hplSizeOptions{nodes: 3, mem: "8GiB", ranksPerNode: 4}.sizeRequest(func() results.Host {
		t.Error("asked this machine though everything was given")
		return results.Host{}
	})
	if err != nil || req.MemPerNode != 8<<30 || req.RanksPerNode != 4 || req.Nodes != 3 || len(notes) != 0 {
		t.Errorf("sizeRequest = %+v, %q, %v", req, notes, err)
	}
	if _, _, err := (hplSizeOptions{nodes: 1}).sizeRequest(func() results.Host { return results.Host{} }); err == nil ||
		!strings.Contains(err.Error(), "give --mem-per-node") {
		t.Errorf("unknown machine: %v", err)
	}
}

func TestHPLRpeak(t *testing.T) {
	stdout, stderr, code := sbench(t, "hpl", "rpeak", "--nodes", "2", "--cores", "4", "--ghz", "2.5", "--flops-per-cycle", "16")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if first := strings.SplitN(stdout, "\n", 2)[0]; first != "Rpeak=320 Gflops" {
		t.Errorf("first line %q", first)
	}
	if !strings.Contains(stdout, "2 nodes × 4 cores (given) × 2.5 GHz (given) × 16 flops/cycle (given) = 320 Gflops") {
		t.Errorf("output:\n%s", stdout)
	}
	stdout, _, code = sbench(t, "hpl", "rpeak", "--cores", "1", "--ghz", "3", "--flops-per-cycle", "4", "--json")
	var out struct {
		Rpeak float64 `json:"rpeak_gflops"`
		How   string
	}
	if err := json.Unmarshal([]byte(stdout), &out); code != 0 || err != nil || out.Rpeak != 12 || out.How == "" {
		t.Errorf("--json: exit %d, %v, %+v", code, err, out)
	}
	if _, stderr, code := sbench(t, "hpl", "rpeak", "--nodes", "0"); code != exitUsage {
		t.Errorf("--nodes 0: exit %d, %s", code, stderr)
	}
}

func TestHPLInput(t *testing.T) {
	stdout, stderr, code := sbench(t, "hpl", "input", "../../examples/hpcc.toml")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"==> benchmark hpcc, variant default: hpccinf.txt (1 test(s), 2 rank(s) needed) <==",
		"\n2560         Ns\n", "\n128          NBs\n", "\n1            Ps\n2            Qs\n", "values of NB\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	dir := t.TempDir()
	stdout, stderr, code = sbench(t, "hpl", "input", "../../examples/hpcc.toml", "-o", dir)
	want := filepath.Join(dir, "hpcc.default.hpccinf.txt")
	if code != 0 || strings.TrimSpace(stdout) != want {
		t.Fatalf("-o: exit %d, %q, %s", code, stdout, stderr)
	}
	if data, err := os.ReadFile(want); err != nil || !strings.HasPrefix(string(data), "HPLinpack benchmark input file\n") {
		t.Errorf("%s: %v\n%s", want, err, data)
	}
	_, stderr, code = sbench(t, "hpl", "input", "../../examples/quickstart.toml")
	if code != exitUsage || !strings.Contains(stderr, "no benchmark of kind hpl or hpcc") {
		t.Errorf("quickstart: exit %d, %s", code, stderr)
	}
}
