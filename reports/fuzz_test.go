package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"codeberg.org/go-fonts/liberation/liberationsansregular"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// FuzzWrite feeds arbitrary text where users put theirs: the report must
// still be a complete PDF.
func FuzzWrite(f *testing.F) {
	f.Add("title", "variant", "error text", "bandwidth", "MB/s", 1.0, 100.0, false)
	f.Add("ベンチ", "日本", "(unbalanced \\ paren", "latency", "us", 0.0, -1.0, true)
	f.Add("", "", "", "latency", "ns", 3e9, 1e-300, false)
	f.Add("Ω Σ report — µs", "ελ 日本", "≥ 16.0", "matrix_bandwidth", "MB/s", 8.0, 5.0, true)
	// A TrueType font to embed when the text asks for one: Liberation Sans
	// has Greek but no Japanese, so both paths of the encoder run.
	fonts := f.TempDir()
	if err := os.WriteFile(filepath.Join(fonts, "LiberationSans-Regular.ttf"), liberationsansregular.TTF, 0o644); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, title, variant, errText, metric, unit string, x, v float64, embed bool) {
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
		var opts []Option
		if embed {
			opts = append(opts, WithFontSearch(fonts))
		}
		var buf bytes.Buffer
		if err := Write(&buf, d, opts...); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if out := buf.Bytes(); !bytes.HasPrefix(out, []byte("%PDF-")) || !bytes.HasSuffix(bytes.TrimSpace(out), []byte("%%EOF")) {
			t.Fatalf("output is not a complete PDF")
		}
	})
}
