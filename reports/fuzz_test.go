package reports

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func FuzzLatinEncode(f *testing.F) {
	for _, s := range []string{"", "plain", "µs × 1000 — “quoted” €", "日本語", "tab\there\nnew\x00line", "\xff\xfe bad utf-8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := newLatin()
		out := l.encode(s)
		kept := 0
		for _, r := range s {
			if r >= 0x20 && r != 0x7F || r == '\t' || r == '\n' || r == '\r' {
				kept++
			}
		}
		if len(out) != kept {
			t.Fatalf("encode(%q) = %q: %d bytes for %d printable runes", s, out, len(out), kept)
		}
		for i := 0; i < len(out); i++ {
			if out[i] < 0x20 || out[i] == 0x7F {
				t.Fatalf("encode(%q) holds control byte %#x", s, out[i])
			}
		}
		replaced := strings.Count(out, "?") - strings.Count(s, "?")
		if replaced != l.replacedCount() {
			t.Fatalf("encode(%q): %d '?' added but %d counted as replaced", s, replaced, l.replacedCount())
		}
	})
}

// expandForTest expands what compressHosts writes: single bracket groups of
// numbers and ranges, the only form it produces.
func expandForTest(t *testing.T, list string) []string {
	var out []string
	for _, item := range splitOutsideBrackets(list) {
		open := strings.IndexByte(item, '[')
		if open < 0 {
			out = append(out, item)
			continue
		}
		prefix, body := item[:open], strings.TrimSuffix(item[open+1:], "]")
		for _, part := range strings.Split(body, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			if !isRange {
				hi = lo
			}
			a, err1 := strconv.Atoi(lo)
			b, err2 := strconv.Atoi(hi)
			if err1 != nil || err2 != nil || b < a {
				t.Fatalf("bad range %q in %q", part, list)
			}
			for n := a; n <= b; n++ {
				out = append(out, fmt.Sprintf("%s%0*d", prefix, len(lo), n))
			}
		}
	}
	return out
}

func splitOutsideBrackets(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func FuzzCompressHosts(f *testing.F) {
	for _, s := range []string{"n1 n2 n3 n7", "node09 node10 node11", "a b a", "n01 n1 n001", "r1n01 r1n02 r2n01", "10 11 12"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var names []string
		seen := map[string]bool{}
		for _, n := range strings.Fields(s) {
			if strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" || seen[n] {
				return // hostnames only; repeats are dropped by design
			}
			if _, digits := splitTrailingDigits(n); len(digits) > 9 {
				return
			}
			seen[n] = true
			names = append(names, n)
		}
		if len(names) == 0 {
			return
		}
		list := compressHosts(names)
		if got := expandForTest(t, list); strings.Join(got, " ") != strings.Join(names, " ") {
			t.Fatalf("compressHosts(%q) = %q, which expands to %q", names, list, got)
		}
	})
}

// FuzzWrite feeds arbitrary text where users put theirs: the report must
// still be a complete PDF.
func FuzzWrite(f *testing.F) {
	f.Add("title", "variant", "error text", "bandwidth", "MB/s", 1.0, 100.0)
	f.Add("ベンチ", "日本", "(unbalanced \\ paren", "latency", "us", 0.0, -1.0)
	f.Add("", "", "", "latency", "ns", 3e9, 1e-300)
	f.Fuzz(func(t *testing.T, title, variant, errText, metric, unit string, x, v float64) {
		if !utf8.ValidString(title + variant + errText + metric + unit) {
			return
		}
		d := Data{Title: title, Runs: []store.Run{
			{ID: 1, Variant: variant, Benchmark: metric, Status: results.StatusOK},
			{ID: 2, Variant: variant, Benchmark: metric, Status: results.StatusFailed, Error: errText},
		}}
		for _, xv := range []float64{x, x * 2, 1, 1 << 20} {
			xv := xv
			d.Samples = append(d.Samples, store.Sample{RunID: 1, Sample: results.Sample{Metric: metric, Unit: unit, X: &xv, Value: v}})
		}
		var buf bytes.Buffer
		if err := Write(&buf, d); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if out := buf.Bytes(); !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(out), []byte("%%EOF")) {
			t.Fatalf("output is not a complete PDF")
		}
	})
}
