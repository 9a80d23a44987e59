package reports

import (
	"bytes"
	"strings"
	"testing"
)

func TestComparisonSection(t *testing.T) {
	c := &Comparison{
		Title:   "Compared with baseline pre-upgrade",
		Summary: []string{"Warning: 1 of 2 points regressed."},
		Tables: []ComparisonTable{{
			Heading: "osu_bw · bandwidth (MB/s, higher is better)",
			Header:  []string{"size", "baseline", "this report", "vs baseline", ""},
			Rows:    [][]string{{"1 B", "4.640", "3.710", "-20.04%", "REGRESSION"}, {"2 B", "9.3", "9.3", "~", ""}},
			Worse:   []bool{true, false},
		}},
		Notes: []string{"*: no p-value"},
	}
	r, err := New(testData(), WithComparison(c), WithCompression(false))
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Verdict(); v[len(v)-1] != c.Summary[0] {
		t.Errorf("verdict ends %q, want the comparison's summary", v[len(v)-1])
	}
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	// Uncompressed page streams hold the text as written (Windows-1252).
	for _, want := range []string{"Compared with baseline pre-upgrade", "REGRESSION", "-20.04%"} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("PDF lacks %q", want)
		}
	}

	bad := *c
	bad.Tables = []ComparisonTable{{Heading: "x", Header: []string{"a", "b"}, Rows: [][]string{{"1"}}}}
	if _, err := New(testData(), WithComparison(&bad)); err == nil || !strings.Contains(err.Error(), "1 cells for 2 columns") {
		t.Errorf("ragged table: %v", err)
	}
	if _, err := New(testData(), WithComparison(&Comparison{})); err == nil {
		t.Error("a comparison without a title was accepted")
	}
}
