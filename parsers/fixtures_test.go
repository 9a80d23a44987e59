package parsers

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/parsetest"
	"github.com/sbench/sbench/results"
)

// What the tests of every format share: reading and editing the real
// outputs of testdata (testdata/README.md says where each one comes from),
// and checking the curves read from them.

// mustRead is the content of the file at path; failing to read it fails
// the test.
func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fixture is the text of testdata/name.
func fixture(t testing.TB, name string) string {
	t.Helper()
	return string(mustRead(t, filepath.Join("testdata", name)))
}

// readFixture parses a testdata file with format "auto", checks what every
// bundle of a wrapped tool must hold, and returns the runs.
func readFixture(t *testing.T, file, kernel string) []*results.Bundle {
	t.Helper()
	runs, err := Parse(file, "auto", []byte(fixture(t, file)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for i, b := range runs {
		if err := b.Validate(); err != nil {
			t.Errorf("%s run %d: invalid bundle: %v", file, i, err)
		}
		if b.Benchmark.Kind != "tool" || b.Benchmark.Kernel != kernel || b.Benchmark.Tool == "" || b.Benchmark.ToolBenchmark != b.Benchmark.Name {
			t.Errorf("%s run %d: benchmark %+v, want kind tool, kernel %s, a tool and its benchmark", file, i, b.Benchmark, kernel)
		}
		if b.Raw == "" {
			t.Errorf("%s run %d: no raw output", file, i)
		}
	}
	return runs
}

// sniffHeads calls f with the head of every testdata file (what Detect
// reads of it: SniffLen bytes at most), README.md and folders left out.
func sniffHeads(t *testing.T, f func(file string, head []byte)) {
	t.Helper()
	files, err := filepath.Glob("testdata/*")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata: %v %v", files, err)
	}
	for _, file := range files {
		if st, err := os.Stat(file); err != nil || st.IsDir() || strings.HasSuffix(file, "README.md") {
			continue
		}
		data := mustRead(t, file)
		f(file, data[:min(len(data), SniffLen)])
	}
}

// checkRunHead checks a run's benchmark name, tool version and a subset
// of its parameters.
func checkRunHead(t *testing.T, where string, b *results.Bundle, name, version string, params map[string]string) {
	t.Helper()
	if b.Benchmark.Name != name || b.Benchmark.ToolVersion != version {
		t.Errorf("%s: benchmark %q version %q, want %q version %q", where, b.Benchmark.Name, b.Benchmark.ToolVersion, name, version)
	}
	for k, v := range params {
		if b.Params[k] != v {
			t.Errorf("%s: param %s = %q, want %q (params %v)", where, k, b.Params[k], v, b.Params)
		}
	}
}

// cutLines returns a fixture's lines [0, n) joined again.
func cutLines(t *testing.T, file string, n int) string {
	t.Helper()
	lines := strings.SplitAfter(fixture(t, file), "\n")
	return strings.Join(lines[:n], "")
}

// replaceLine returns a fixture with its line number line (from 1) made
// text.
func replaceLine(t *testing.T, file string, line int, text string) string {
	t.Helper()
	lines := strings.SplitAfter(fixture(t, file), "\n")
	lines[line-1] = text + "\n"
	return strings.Join(lines, "")
}

// badInput is an output a parser must refuse, and the whole error it
// gives, lines and all.
type badInput struct {
	what, in, want string
}

// checkRefused parses each input with format and checks that it fails
// with SyntaxErrors that read exactly as want.
func checkRefused(t *testing.T, format string, tests []badInput) {
	t.Helper()
	for _, tt := range tests {
		_, err := Parse("x", format, []byte(tt.in))
		var se SyntaxErrors
		if !errors.As(err, &se) || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.what, err, tt.want)
		}
	}
}

// badTable is a fixture damaged at one line, and the first syntax error
// it must cause: its line and part of its message.
type badTable struct {
	name, input string
	line        int
	msg         string
}

// checkFirstError parses each input with format and checks the first of
// its SyntaxErrors.
func checkFirstError(t *testing.T, format string, tests []badTable) {
	t.Helper()
	for _, tt := range tests {
		_, err := Parse("in.txt", format, []byte(tt.input))
		var se SyntaxErrors
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v, want syntax errors", tt.name, err)
			continue
		}
		if se[0].Line != tt.line || !strings.Contains(se[0].Msg, tt.msg) {
			t.Errorf("%s: %v, want line %d: …%s…", tt.name, se[0], tt.line, tt.msg)
		}
	}
}

// curve returns the samples of one metric, in order.
func curve(b *results.Bundle, metric string) []results.Sample {
	var out []results.Sample
	for _, s := range b.Samples {
		if s.Metric == metric {
			out = append(out, s)
		}
	}
	return out
}

// point is a (message size, value) pair as the tool printed it; x < 0
// stands for a point without a size (Barrier).
type point struct{ x, v float64 }

func pointOf(s results.Sample) point {
	if s.X == nil {
		return point{-1, s.Value}
	}
	return point{*s.X, s.Value}
}

// curveWant is what a test expects of one curve: its unit, its number of
// points and three of them.
type curveWant struct {
	metric string
	unit   string
	n      int
	first  point
	last   point
	peak   point // the point with the highest value
}

// near compares computed figures (unit conversions) to 1e-9 relative.
func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

func checkCurves(t *testing.T, where string, b *results.Bundle, curves []curveWant) {
	t.Helper()
	for _, c := range curves {
		pts := curve(b, c.metric)
		if len(pts) != c.n {
			t.Errorf("%s: %d %s points, want %d", where, len(pts), c.metric, c.n)
			continue
		}
		if c.n == 0 {
			continue
		}
		peak := pts[0]
		for _, s := range pts {
			if s.Unit != c.unit {
				t.Errorf("%s: %s unit %q, want %q", where, c.metric, s.Unit, c.unit)
				break
			}
			if (s.X == nil) != (c.first.x < 0) || (s.X != nil && s.XUnit != results.UnitBytes) {
				t.Errorf("%s: %s point x %v %q, want bytes", where, c.metric, s.X, s.XUnit)
				break
			}
			if s.Value > peak.Value {
				peak = s
			}
		}
		for _, p := range []struct {
			what      string
			got, want point
		}{{"first", pointOf(pts[0]), c.first}, {"last", pointOf(pts[len(pts)-1]), c.last}, {"peak", pointOf(peak), c.peak}} {
			if p.got.x != p.want.x || !near(p.got.v, p.want.v) {
				t.Errorf("%s: %s %s point %v, want %v", where, p.what, c.metric, p.got, p.want)
			}
		}
	}
}

// mibToMB converts a rate in MiB/s (2^20 bytes/s: IMB before 2018 and
// perftest call it Mbytes/sec or MB/sec) to MB/s.
func mibToMB(v float64) float64 { return v * 1048576 / 1e6 }

// seedPieces cuts a fixture into pieces of a few kilobytes: the fuzzer
// minimizes every new input for up to a minute, which for whole 30 kB
// fixtures left it almost no time to fuzz.
func seedPieces(data []byte) [][]byte {
	const size = 3000
	if len(data) <= size {
		return [][]byte{data}
	}
	var out [][]byte
	for start := 0; start < len(data) && len(out) < 4; start += size {
		end := min(start+size, len(data))
		// Cut at line ends so that every seed is well-formed text.
		if i := bytes.LastIndexByte(data[start:end], '\n'); i > 0 && end < len(data) {
			end = start + i + 1
		}
		out = append(out, data[start:end])
		start = end - size
	}
	return out
}

// seedFixtures seeds f with the pieces (seedPieces) of every fixture that
// matches pattern.
func seedFixtures(f *testing.F, pattern string) {
	for _, data := range golden.Files(f, pattern) {
		for _, seed := range seedPieces(data) {
			f.Add(seed)
		}
	}
}

// fuzzParse fuzzes a line-based parser of this package from f's seeds: the
// rules of every parser (parsetest.Fuzz), syntax errors capped by the
// Scanner, then the format's own rules in check.
func fuzzParse(f *testing.F, parse parsetest.ParseFunc, check func(t *testing.T, data []byte, runs []*results.Bundle, err error)) {
	parsetest.Fuzz[SyntaxErrors](f, parse, func(t *testing.T, data []byte, runs []*results.Bundle, err error) {
		if se, ok := err.(SyntaxErrors); ok && len(se) > MaxErrors+1 {
			t.Fatalf("%d syntax errors, more than MaxErrors+1", len(se))
		}
		check(t, data, runs, err)
	})
}

// checkSamples fails on a run without samples.
func checkSamples(t *testing.T, _ []byte, runs []*results.Bundle, _ error) {
	for _, b := range runs {
		if len(b.Samples) == 0 {
			t.Fatalf("bundle without samples: %+v", b)
		}
	}
}

// checkSizes fails on a sample without a message size.
func checkSizes(t *testing.T, runs []*results.Bundle) {
	for _, b := range runs {
		for _, s := range b.Samples {
			if s.X == nil || math.IsNaN(*s.X) || *s.X < 0 {
				t.Fatalf("sample without a size: %+v", s)
			}
		}
	}
}

// samples counts the samples of runs.
func samples(runs []*results.Bundle) int {
	n := 0
	for _, b := range runs {
		n += len(b.Samples)
	}
	return n
}

// checkNoiseIsSkipped parses testdata/file with parse, and again with the
// launcher noise addNoise puts in, and wants the same runs.
func checkNoiseIsSkipped(t *testing.T, file string, parse func(name string, r io.Reader) ([]*results.Bundle, error), addNoise func(string) string) {
	t.Helper()
	data := fixture(t, file)
	clean, err := parse("clean", strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	noisy, err := parse("noisy", strings.NewReader(addNoise(data)))
	if err != nil {
		t.Fatal(err)
	}
	checkSameRuns(t, noisy, clean)
}

// checkSameRuns fails unless noisy, the runs read from an output with
// launcher noise added, are the runs read without it, byte for byte.
func checkSameRuns(t *testing.T, noisy, clean []*results.Bundle) {
	t.Helper()
	if len(noisy) != len(clean) {
		t.Fatalf("%d runs with noise, %d without", len(noisy), len(clean))
	}
	for i := range noisy {
		a, _ := results.Marshal(noisy[i])
		b, _ := results.Marshal(clean[i])
		if !bytes.Equal(a, b) {
			t.Errorf("run %d differs with noise", i)
		}
	}
}
