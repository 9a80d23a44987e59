package hpl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// HPL output is often quoted without its T/V header: a mailing-list
// message pastes the result row and its residual checks, a report keeps
// the rows of several tests. Such an excerpt is still HPL's output and
// reads exactly as it would with the header.

// hplFixtures are the xhpl outputs of testdata (HPCC's are read by
// hpcc_test.go).
var hplFixtures = []string{
	"000-hpl-100mbit.txt",
	"000-hpl-infiniband.txt",
	"hpl-1.0a-ompi-users-18tests.txt",
	"hpl-1.0a-tutorial-cut.txt",
	"hpl-2.2-lbnl-readme-tail.txt",
	"hpl-2.3-rpi-cluster-log.txt",
	"hpl-2.3-velocity-bench-failed.txt",
	"hpl-nvidia-wc0.txt",
	"intel-mkl-hpl-failed-excerpt.txt",
}

// withoutHeaders deletes every "T/V N NB P Q Time Gflops" line.
func withoutHeaders(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if f := strings.Fields(l); len(f) >= 7 && f[0] == "T/V" && f[1] == "N" {
			continue
		}
		b.WriteString(l)
	}
	return b.String()
}

// between returns the lines of s from the first that starts with from
// (after leading blanks) up to, not including, the first after it that
// starts with to; to "" keeps the rest.
func between(t *testing.T, s, from, to string) string {
	t.Helper()
	lines := strings.SplitAfter(s, "\n")
	start := -1
	for i, l := range lines {
		tl := strings.TrimSpace(l)
		if start < 0 && strings.HasPrefix(tl, from) {
			start = i
			continue
		}
		if start >= 0 && to != "" && strings.HasPrefix(tl, to) {
			return strings.Join(lines[start:i], "")
		}
	}
	if start < 0 || to != "" {
		t.Fatalf("no lines from %q to %q", from, to)
	}
	return strings.Join(lines[start:], "")
}

func bundlesJSON(t *testing.T, bs []*results.Bundle) string {
	t.Helper()
	data, err := json.MarshalIndent(bs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// parseAuto reads an excerpt as "sbench ingest --format auto" does and
// wants HPL to be recognised.
func parseAuto(t *testing.T, name, text string) []*results.Bundle {
	t.Helper()
	f, err := parsers.Detect([]byte(text))
	if err != nil || f.Name != "hpl" {
		t.Fatalf("%s: detected %q (%v), want hpl", name, f.Name, err)
	}
	bs, err := parsers.Parse(name, "auto", []byte(text))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, b := range bs {
		if err := b.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	return bs
}

func TestHPLWithoutHeaderReadsAsWithIt(t *testing.T) {
	for _, name := range hplFixtures {
		t.Run(name, func(t *testing.T) {
			full := string(readFixture(t, name))
			want, err := ParseHPL(name, strings.NewReader(full))
			if err != nil {
				t.Fatal(err)
			}
			cut := withoutHeaders(full)
			if cut == full {
				t.Fatal("fixture has no T/V header")
			}
			got, err := ParseHPL(name, strings.NewReader(cut))
			if err != nil {
				t.Fatalf("without its header: %v", err)
			}
			if g, w := bundlesJSON(t, got), bundlesJSON(t, want); g != w {
				t.Errorf("without its header:\n%s", golden.Diff(w, g))
			}
			parseAuto(t, name, cut)
		})
	}
}

// The excerpt of issue 12, as a mailing list quotes HPL 2.x.
func TestHPLMailingListExcerpt(t *testing.T) {
	in := "WR11C2R4        5000   160     1     2              10.10              8.253e+00\n" +
		"--------------------------------------------------------------------------------\n" +
		"||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=        0.0034561 ...... PASSED\n"
	bs := parseAuto(t, "excerpt.txt", in)
	if len(bs) != 1 {
		t.Fatalf("%d bundles, want 1", len(bs))
	}
	b := bs[0]
	for name, want := range map[string]float64{"n": 5000, "nb": 160, "p": 1, "q": 2, "time_s": 10.10, "gflops": 8.253, "residual": 0.0034561} {
		if got := scalar(t, b, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if b.Params["tv"] != "WR11C2R4" || b.Params["BCAST"] != "1ringM" || b.Params["RFACT"] != "Crout" || b.Params["PFACT"] != "Right" {
		t.Errorf("T/V not decoded: %v", b.Params)
	}
	if len(b.Checks) != 1 || !b.Checks[0].Passed || b.Checks[0].Value != 0.0034561 {
		t.Errorf("checks %+v", b.Checks)
	}
	// Like any output cut before "End of Tests.", and no worse: the check
	// passed.
	if b.Status != results.StatusInvalid || b.Error != `output ends before "End of Tests." (the run was killed or the file is cut)` {
		t.Errorf("status %q error %q", b.Status, b.Error)
	}
}

// Article 000's runs quoted from the row on: HPL 1.0's three residual
// lines stay with their row, and the two FAILED ones make it invalid.
func TestHPLArticle000Excerpts(t *testing.T) {
	for _, tt := range []struct {
		file          string
		gflops        float64
		r1, r2, r3    float64
		passed        [3]bool
		failedPhrases []string
	}{
		{"000-hpl-infiniband.txt", 7.240, 44.6046954, 43.1710652, 8.2276427, [3]bool{false, false, true},
			[]string{"residual check failed: ||Ax-b||_oo/(eps*||A||_1*N) = 44.6046954", "residual check failed: ||Ax-b||_oo/(eps*||A||_1*||x||_1) = 43.1710652"}},
		{"000-hpl-100mbit.txt", 5.598, 0, 0, 0, [3]bool{false, false, true}, []string{"residual check failed"}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../examples/articles/testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			for _, cut := range []struct{ name, text string }{
				{"row to summary", between(t, string(data), "WR", "Finished")},
				{"row to end", between(t, string(data), "WR", "")},
				{"quoted in a message", "On the InfiniBand run I get:\n\n" + between(t, string(data), "WR", "=====") + "\nWhy do two checks fail?\n"},
			} {
				bs := parseAuto(t, cut.name, cut.text)
				if len(bs) != 1 {
					t.Fatalf("%s: %d bundles, want 1", cut.name, len(bs))
				}
				b := bs[0]
				if got := scalar(t, b, "gflops"); got != tt.gflops {
					t.Errorf("%s: gflops %v, want %v", cut.name, got, tt.gflops)
				}
				if len(b.Checks) != 3 {
					t.Fatalf("%s: %d checks, want HPL 1.0's three: %+v", cut.name, len(b.Checks), b.Checks)
				}
				for i, c := range b.Checks {
					if c.Passed != tt.passed[i] {
						t.Errorf("%s: check %d passed %v, want %v", cut.name, i+1, c.Passed, tt.passed[i])
					}
				}
				if tt.r1 != 0 && (scalar(t, b, "residual_1") != tt.r1 || scalar(t, b, "residual_2") != tt.r2 || scalar(t, b, "residual_3") != tt.r3) {
					t.Errorf("%s: residuals %+v", cut.name, b.Scalars)
				}
				if b.Status != results.StatusInvalid {
					t.Errorf("%s: status %q: a FAILED check must make the run invalid", cut.name, b.Status)
				}
				for _, p := range tt.failedPhrases {
					if !strings.Contains(b.Error, p) {
						t.Errorf("%s: error %q, want it to say %q", cut.name, b.Error, p)
					}
				}
				if !hasScalar(b, "norm_a_1") {
					t.Errorf("%s: the norms after the checks are lost: %+v", cut.name, b.Scalars)
				}
			}
		})
	}
}

// A row quoted alone: read, and invalid, since nothing shows it was
// checked.
func TestHPLRowAlone(t *testing.T) {
	bs := parseAuto(t, "row.txt", "WR10R2C4       20000   104     1     4             736.74          7.240e+00\n")
	if len(bs) != 1 {
		t.Fatalf("%d bundles", len(bs))
	}
	if b := bs[0]; b.Status != results.StatusInvalid || !strings.Contains(b.Error, "no residual check printed for this test") || scalar(t, b, "gflops") != 7.240 {
		t.Errorf("status %q error %q", b.Status, b.Error)
	}
	// HPL-NVIDIA's row keeps its rate per GPU without the header that
	// announces the column.
	nv := parseAuto(t, "nv.txt", "WC0           299008  1024     2     4        52.88       3.370e+05 ( 4.213e+04)\n")
	if len(nv) != 1 || scalar(t, nv[0], "gflops_per_gpu") != 4.213e+04 {
		t.Errorf("HPL-NVIDIA row: %+v", nv)
	}
}

// Several tests quoted one after the other, without headers: each row
// keeps its own checks.
func TestHPLSeveralRowsWithoutHeader(t *testing.T) {
	full := string(readFixture(t, "hpl-1.0a-ompi-users-18tests.txt"))
	want := parseHPLFixture(t, "hpl-1.0a-ompi-users-18tests.txt")

	rows := withoutHeaders(between(t, full, "WR00L2L2", "Finished"))
	bs := parseAuto(t, "rows.txt", rows)
	if len(bs) != len(want) {
		t.Fatalf("%d bundles, want %d", len(bs), len(want))
	}
	for i, b := range bs {
		w := want[i]
		if b.Params["tv"] != w.Params["tv"] || scalar(t, b, "gflops") != scalar(t, w, "gflops") || len(b.Checks) != 3 {
			t.Errorf("row %d: %s %v Gflops %d checks, want %s %v Gflops 3 checks", i+1, b.Params["tv"], scalar(t, b, "gflops"), len(b.Checks), w.Params["tv"], scalar(t, w, "gflops"))
			continue
		}
		for k := range b.Checks {
			// The excerpt has no threshold line: none is made up.
			bc, wc := b.Checks[k], w.Checks[k]
			if bc.Name != wc.Name || bc.Value != wc.Value || bc.Passed != wc.Passed || bc.Op != "" {
				t.Errorf("row %d check %d: %+v, want %+v", i+1, k+1, b.Checks[k], w.Checks[k])
			}
		}
	}

	// Rows only, as a table in a report: every one read, none valid.
	var only []string
	for _, l := range strings.Split(rows, "\n") {
		if strings.HasPrefix(l, "WR") {
			only = append(only, l)
		}
	}
	bs = parseAuto(t, "table.txt", strings.Join(only, "\n")+"\n")
	if len(bs) != 18 {
		t.Fatalf("rows only: %d bundles, want 18", len(bs))
	}
	for i, b := range bs {
		if b.Status != results.StatusInvalid || len(b.Checks) != 0 || b.Params["test"] != strconv.Itoa(i+1) {
			t.Errorf("rows only, row %d: status %q checks %v test %q", i+1, b.Status, b.Checks, b.Params["test"])
		}
	}
}

// A row-shaped line is what recognises HPL without its header; no other
// tool's output has one.
func TestSniffHeaderlessAmongEveryFixture(t *testing.T) {
	var files []string
	for _, g := range []string{"testdata/*", "../parsers/testdata/*", "../examples/articles/testdata/*"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil || strings.HasSuffix(f, ".md") {
			continue
		}
		head := data[:min(len(data), parsers.SniffLen)]
		base := filepath.Base(f)
		isHPL := strings.Contains(base, "hpl") && !strings.Contains(base, "hpcc")
		isHPCC := strings.Contains(base, "hpccoutf")
		s := sniffHPL(head)
		switch {
		case isHPL:
			if s < parsers.MinSniffScore {
				t.Errorf("%s: hpl sniff %d", f, s)
			}
			if s := sniffHPL([]byte(withoutHeaders(string(head)))); s < parsers.MinSniffScore {
				t.Errorf("%s without headers: hpl sniff %d", f, s)
			}
		case isHPCC:
			if h := sniffHPCC(head); h <= s {
				t.Errorf("%s: hpcc %d must beat hpl %d", f, h, s)
			}
		default:
			if s != 0 {
				t.Errorf("%s: hpl sniff %d on another tool's output", f, s)
			}
		}
	}
	// Near misses: a T/V code needs its six numbers.
	for _, in := range []string{
		"WR11C2R4 5000 160 1 2\n",
		"WR11C2R4 5000 160 1 2 ten 8.253e+00\n",
		"WRONG 5000 160 1 2 10.10 8.253e+00\n",
		"W 5000 160 1 2 10.10 8.253e+00\n",
		"# WR11C2R4 5000 160 1 2 10.10 8.253e+00\n",
	} {
		if s := sniffHPL([]byte(in)); s != 0 {
			t.Errorf("sniffHPL(%q) = %d, want 0", in, s)
		}
	}
}
