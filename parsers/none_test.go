package parsers

import (
	"slices"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

// Parser none reads nothing and refuses nothing: the output of hostname,
// of an application, of nothing at all, is kept as the one run's Raw, with
// no samples, whatever it looks like.
func TestParseNone(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"hostname", "n1\n"},
		{"silent", ""},
		{"an OSU table is not read", "# OSU MPI Latency Test v7.5\n# Size          Latency (us)\n0                       1.20\n"},
		{"a shell script is not refused", "#!/bin/sh\necho hi\n"},
		{"invalid UTF-8", "caf\xe9\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := Parse("app", None, []byte(tt.in))
			if err != nil || len(runs) != 1 {
				t.Fatalf("%d runs, %v; want one run", len(runs), err)
			}
			b := runs[0]
			if len(b.Samples) != 0 || len(b.Scalars) != 0 || b.Benchmark.Kind != "tool" || b.Benchmark.Kernel != None ||
				b.Benchmark.Tool != "" || b.Status != results.StatusOK || b.Raw != strings.ToValidUTF8(tt.in, "\uFFFD") {
				t.Errorf("run %+v", b)
			}
		})
	}
	big := strings.Repeat("x", MaxRaw+10)
	runs, err := Parse("app", None, []byte(big))
	if err != nil || len(runs[0].Raw) > MaxRaw+100 || !strings.Contains(runs[0].Raw, "[… output cut by sbench …]") {
		t.Errorf("%v: raw of %d bytes from %d, want it cut to MaxRaw", err, len(runs[0].Raw), len(big))
	}
	// None is no format: sbench ingest --format none has no run to make
	// of a file alone.
	if _, ok := Lookup(None); ok || slices.Contains(Names(), None) {
		t.Errorf("none is a registered format: %v", Names())
	}
}
