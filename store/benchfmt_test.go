package store

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// benchfmtArchive holds what a benchfmt export must get right: two repeats
// of one configuration and one of another (config lines change, then
// clear), a rank pair and tags, a label that needs sanitising and one that
// clashes with a fixed key, an invalid HPL run with scalars, and a latency
// unit.
func benchfmtArchive(t *testing.T) *DB {
	t.Helper()
	db := openTemp(t)
	a1 := osuBundle("acc", "ib", "101", 3)
	a2 := osuBundle("acc", "ib", "102", 3)
	for i := range a2.Samples {
		a2.Samples[i].Value *= 1.01
	}
	a2.Samples[2].Pair = []int{0, 1}
	a2.Samples[2].Tags = map[string]string{"direction": "n01 -> n02"}
	b := osuBundle("acc", "eth", "103", 2)
	b.Labels["Node Pair"] = "n01/n02"
	b.Labels["status"] = "retest"
	lat := osuBundle("acc", "ib", "104", 1)
	lat.Benchmark.Name = "osu_latency"
	lat.Labels = nil
	lat.Samples[0].Metric, lat.Samples[0].Unit, lat.Samples[0].Value = "latency", results.UnitMicroseconds, 1.23
	ingest(t, db, "a.json", a1, a2, b, lat)
	ingest(t, db, "hpl.txt", hplBundle("acc", "105", time.Date(2024, 5, 2, 3, 4, 5, 0, time.UTC)))
	return db
}

func TestExportBenchfmtGolden(t *testing.T) {
	db := benchfmtArchive(t)
	var buf bytes.Buffer
	if err := db.ExportBenchfmt(context.Background(), &buf, Filter{}); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "export.benchfmt"), buf.Bytes())
}

// TestExportBenchfmtFollowsTheFormat reads an export back with
// golang.org/x/perf/benchfmt's reader: every line is a result, a unit or a
// configuration line, every result has its run's configuration, and the
// values are the archive's.
func TestExportBenchfmtFollowsTheFormat(t *testing.T) {
	db := benchfmtArchive(t)
	var buf bytes.Buffer
	if err := db.ExportBenchfmt(context.Background(), &buf, Filter{}); err != nil {
		t.Fatal(err)
	}
	// The reader skips what is none of the three: no line may be that.
	for n, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		k, _, isConfig := strings.Cut(line, ":")
		isConfig = isConfig && k != "" && k == strings.ToLower(k) && !strings.ContainsAny(k, " \t") && 'a' <= k[0] && k[0] <= 'z'
		if line != "" && !isConfig && !strings.HasPrefix(line, "Unit ") && !strings.HasPrefix(line, "Benchmark") {
			t.Errorf("line %d: %q is neither a result, a unit nor a config line", n+1, line)
		}
	}
	rd := benchfmt.NewReader(bytes.NewReader(buf.Bytes()), "export")
	results, better := 0, 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Errorf("%v", rec)
		case *benchfmt.UnitMetadata:
			if rec.Key != "better" || rec.Value != "higher" && rec.Value != "lower" {
				t.Errorf("unit metadata %+v", rec)
			}
			better++
		case *benchfmt.Result:
			results++
			if rec.GetConfig("campaign") != "acc" || rec.GetConfig("status") == "" || len(rec.Values) != 1 {
				t.Errorf("%s: config %v, values %v", rec.Name, rec.Config, rec.Values)
			}
			// A final -DIGITS would be read as GOMAXPROCS.
			if _, procs := rec.Name.Parts(); len(procs) > 0 && bytes.HasPrefix(procs[len(procs)-1], []byte("-")) {
				t.Errorf("name %s ends in -DIGITS", rec.Name.Full())
			}
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	// 3+3+2+1 samples, 2 HPL samples and HPL's time: its Gflops scalar
	// repeats a sample, its N, NB, P, Q have no unit.
	if results != 12 || better != 4 {
		t.Errorf("%d result lines, %d units, want 12 and 4", results, better)
	}
}

// TestBenchstatReadsExport runs benchstat itself, from the module proxy, on
// an export: it must parse every line and compare the two fabrics.
func TestBenchstatReadsExport(t *testing.T) {
	goBin := testenv.LookPath(t, "go", "")
	db := benchfmtArchive(t)
	dir := t.TempDir()
	var ib, eth bytes.Buffer
	if err := db.ExportBenchfmt(context.Background(), &ib, Filter{Labels: map[string]string{"fabric": "ib"}, Benchmark: "osu_bw"}); err != nil {
		t.Fatal(err)
	}
	if err := db.ExportBenchfmt(context.Background(), &eth, Filter{Labels: map[string]string{"fabric": "eth"}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "ib.txt"), ib.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "eth.txt"), eth.Bytes(), 0o644)
	// Outside the module: benchstat's own dependencies are not sbench's.
	cmd := exec.Command(goBin, "run", "golang.org/x/perf/cmd/benchstat@"+benchstatVersion,
		"-table", "", "-col", ".file", "-row", ".fullname", "ib.txt", "eth.txt")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("proxy")) || bytes.Contains(out, []byte("dial tcp")) || bytes.Contains(out, []byte("no such host")) {
			testenv.Require(t, "benchstat cannot be fetched: "+firstLine(out))
		}
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	text := string(out)
	t.Logf("benchstat:\n%s", text)
	for _, want := range []string{"ib.txt", "eth.txt", "Osu_bw/metric=bandwidth/size=1", "Osu_bw/metric=bandwidth/size=2", "B/s",
		// Two ib runs against one eth run: repeats were grouped.
		"n=2+1"} {
		if !strings.Contains(text, want) {
			t.Errorf("benchstat output lacks %q", want)
		}
	}
	if strings.Contains(text, "parsing") || strings.Contains(text, "syntax") {
		t.Errorf("benchstat reported a problem with the export:\n%s", text)
	}
}

// benchstatVersion is the golang.org/x/perf the benchfmt export is tested
// with.
const benchstatVersion = "v0.0.0-20260908200009-22c9c6c9d4da"

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

// FuzzBenchfmtNames: whatever the names, labels and units in the archive,
// what the export writes is a config line, a name or a unit that the
// format's reader takes as such.
func FuzzBenchfmtNames(f *testing.F) {
	for _, s := range []string{"osu_bw", "Node Pair", "a:b", "status", "x\ny", "-12", "ümlaut", "", " ", "/", "Benchmark"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// As benchfmt's reader has it: a lower-case first letter, no
		// space, no upper-case letter, and the colon ends the key.
		k := benchfmtKey(s)
		first, _ := utf8.DecodeRuneInString(k)
		if !unicode.IsLower(first) || strings.ContainsRune(k, ':') ||
			strings.IndexFunc(k, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsUpper(r) }) >= 0 {
			t.Errorf("benchfmtKey(%q) = %q: not a config key", s, k)
		}
		if v := benchfmtValue(s); strings.ContainsAny(v, "\n\r") || v != strings.TrimSpace(v) {
			t.Errorf("benchfmtValue(%q) = %q", s, v)
		}
		name := benchfmtName(benchfmtBase(s) + "/metric=" + benchfmtPart(s))
		if strings.ContainsAny(name, " \t\n\r") || !strings.HasPrefix(name, "Benchmark") {
			t.Errorf("name %q from %q", name, s)
		}
		if i := strings.LastIndexByte(name, '-'); i >= 0 && i+1 < len(name) && strings.Trim(name[i+1:], "0123456789") == "" {
			t.Errorf("name %q ends in -DIGITS", name)
		}
		if u := benchfmtUnit(s); strings.ContainsAny(u, " \t\n\r") {
			t.Errorf("benchfmtUnit(%q) = %q", s, u)
		}
	})
}
