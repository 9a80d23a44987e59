package results

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleBundle() *Bundle {
	b := New()
	b.Campaign, b.Variant = "quickstart", "ntasks_per_node=1"
	b.Labels = map[string]string{"fabric": "tcp", "a": "b"}
	b.Job = Job{ID: "42", Step: "0", Nodes: []string{"n1", "n2"}, Tasks: 2, Restart: 1}
	b.Start = time.Date(2026, 11, 30, 1, 2, 3, 4, time.UTC)
	b.End = b.Start.Add(time.Second)
	b.Benchmark = Benchmark{Name: "latency", Kind: "native", Kernel: "latency"}
	b.Samples = []Sample{{Metric: "latency", Unit: "us", X: F(1), XUnit: "bytes", Value: 11.01, Min: F(10), Pair: []int{0, 1}}}
	b.Scalars = []Scalar{{Name: "n", Value: 3000}}
	b.Checks = []Check{{Name: "residual", Value: 0.003, Threshold: 16, Op: "<", Passed: true}}
	return b
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	b := sampleBundle()
	data, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, b) {
		t.Errorf("round trip changed the bundle:\n got %+v\nwant %+v", got, b)
	}
	// Deterministic: maps come out sorted, so the same bundle gives the same bytes.
	again, _ := Marshal(got)
	if !bytes.Equal(data, again) {
		t.Error("two encodings of one bundle differ")
	}
	if !strings.Contains(string(data), `"a": "b",`+"\n"+`    "fabric": "tcp"`) {
		t.Errorf("labels not sorted:\n%s", data)
	}
	if !strings.Contains(string(data), `"restart": 1`) {
		t.Errorf("no restart count:\n%s", data)
	}
}

// A bundle of a job's first attempt says nothing of restarts, as bundles
// did before the field existed: v1 readers and writers agree both ways.
func TestRestartIsOptional(t *testing.T) {
	b := sampleBundle()
	b.Job.Restart = 0
	data, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "restart") {
		t.Errorf("first attempt writes a restart count:\n%s", data)
	}
	got, err := Decode(bytes.NewReader(data))
	if err != nil || got.Job.Restart != 0 {
		t.Fatalf("%v, restart %d", err, got.Job.Restart)
	}
	b.Job.Restart = -1
	if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "job.restart: is -1") {
		t.Errorf("Validate: %v", err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	good, _ := Marshal(sampleBundle())
	tests := map[string]struct{ in, want string }{
		"other schema":  {strings.Replace(string(good), Schema, "sbench.result/v9", 1), `schema: is "sbench.result/v9"`},
		"unknown field": {strings.Replace(string(good), `"schema"`, `"bogus": 1, "schema"`, 1), `unknown field "bogus"`},
		"bad status":    {strings.Replace(string(good), `"status": "ok"`, `"status": "fine"`, 1), "status: is \"fine\""},
		"trailing":      {string(good) + "{}", "trailing data"},
		"not json":      {"OSU MPI Latency Test", "decode bundle"},
		"empty":         {"", "decode bundle"},
		"failed no err": {strings.Replace(string(good), `"status": "ok"`, `"status": "failed"`, 1), "error: is empty for a failed run"},
	}
	for name, tt := range tests {
		_, err := Decode(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", name, err, tt.want)
		}
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	b := sampleBundle()
	b.Benchmark.Name = ""
	b.Samples[0].Metric = ""
	b.End = b.Start.Add(-time.Second)
	err := b.Validate()
	for _, want := range []string{"benchmark.name: is empty", "samples[0].metric: is empty", "end: "} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want it to contain %q", err, want)
		}
	}
}

// A NUL in a label's or parameter's key is refused: the archive reads them
// back through SQLite's JSON functions, which end a key there.
func TestValidateRefusesNULInKeys(t *testing.T) {
	b := sampleBundle()
	b.Labels = map[string]string{"\x00": "0", "fabric": "a\x00b"} // a NUL in a value is kept
	b.Params = map[string]string{"win\x00dow": "8"}
	err := b.Validate()
	for _, want := range []string{`labels: key "\x00" contains a NUL byte`, `params: key "win\x00dow" contains a NUL byte`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v; want it to contain %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "fabric") {
		t.Errorf("Validate refused a NUL in a value: %v", err)
	}
}

func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "42.0.latency.json")
	if err := WriteFile(path, sampleBundle()); err != nil {
		t.Fatal(err)
	}
	// An invalid bundle must not replace the good one, nor leave a temp file.
	bad := sampleBundle()
	bad.Status = "nope"
	if err := WriteFile(path, bad); err == nil {
		t.Fatal("WriteFile accepted an invalid bundle")
	}
	got, err := ReadFile(path)
	if err != nil || got.Status != StatusOK {
		t.Fatalf("good bundle lost: %v %+v", err, got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the bundle", len(entries))
	}
}

func TestHashFollowsContent(t *testing.T) {
	a, b := sampleBundle(), sampleBundle()
	ha, _ := Hash(a)
	hb, _ := Hash(b)
	if ha != hb {
		t.Error("equal bundles hash differently")
	}
	b.Samples[0].Value = 11.02
	if hb, _ = Hash(b); ha == hb {
		t.Error("different bundles hash the same")
	}
}

func TestBetterFor(t *testing.T) {
	for unit, want := range map[string]Better{"us": BetterLower, "MB/s": BetterHigher, "Gflops": BetterHigher, "s": BetterLower, "bytes": BetterUnknown} {
		if got := BetterFor(unit); got != want {
			t.Errorf("BetterFor(%q) = %v, want %v", unit, got, want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := Marshal(sampleBundle())
	f.Add(good)
	f.Add([]byte(`{"schema":"sbench.result/v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Whatever decodes must encode and decode to the same bundle.
		again, err := Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(bytes.NewReader(again)); err != nil {
			t.Fatalf("re-decoding a valid bundle failed: %v", err)
		}
	})
}

// TestAtomicFile: a file written in pieces replaces the old one only once
// committed; aborted, it leaves the old one and no temporary file.
func TestAtomicFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.pdf")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := CreateAtomic(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("aborted: the file holds %q", data)
	}
	f, err = CreateAtomic(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	for _, p := range []string{"new ", "report"} {
		if _, err := f.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("before Commit the file holds %q", data)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if data, _ := os.ReadFile(path); string(data) != "new report" || st.Mode().Perm() != 0o644 {
		t.Errorf("committed: %q, mode %v", data, st.Mode())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

// An ok run's note travels with its bundle, and a bundle without one says
// nothing of notes, as bundles did before the field existed.
func TestNoteIsOptional(t *testing.T) {
	b := sampleBundle()
	data, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), `"note"`) {
		t.Errorf("a bundle without a note writes one:\n%s", data)
	}
	b.Note = "rank 1 (node n2): NPtcp exited with status 3"
	if data, err = Marshal(b); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(bytes.NewReader(data))
	if err != nil || got.Note != b.Note || got.Status != StatusOK {
		t.Fatalf("%v: note %q, status %s", err, got.Note, got.Status)
	}
}

// A command's wall time is a time: compare and history judge it lower is
// better by its unit, as they judge every figure.
func TestWallTimeIsLowerIsBetter(t *testing.T) {
	if got := BetterFor(UnitSeconds); got != BetterLower {
		t.Errorf("BetterFor(%q) = %v, want BetterLower", UnitSeconds, got)
	}
	if MetricWallTime != "wall_time" {
		t.Errorf("MetricWallTime = %q: archived runs name it wall_time", MetricWallTime)
	}
}

// ToolOutput leaves out the ranks' standard error the runner appends to a
// wrapped tool's output, as it writes it (StderrTailMark).
func TestToolOutput(t *testing.T) {
	tail := StderrTailMark + "1: NPtcp <==\nNetPIPE: error writing\n"
	for raw, want := range map[string]string{
		"0: 1 bytes 1.0\n" + tail: "0: 1 bytes 1.0\n",
		tail:                      "",
		"0: 1 bytes 1.0\n":        "0: 1 bytes 1.0\n",
		"":                        "",
	} {
		if got := ToolOutput(raw); got != want {
			t.Errorf("ToolOutput(%q) = %q, want %q", raw, got, want)
		}
	}
}
