package parsers

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParseOSUFile parses one osu_latency output of 25 rows the way
// ingest does (Parse with format auto: sections, detection, the reader),
// the unit of cmd/sbench's BenchmarkIngest of 10,000 such files.
func BenchmarkParseOSUFile(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("# OSU MPI Latency Test v7.5\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n")
	fmt.Fprintf(&sb, "%-20d%.2f\n", 0, 1.00)
	for size := 1; size <= 8<<20; size *= 2 {
		fmt.Fprintf(&sb, "%-20d%.2f\n", size, 1.5+float64(size)/1e3)
	}
	data := []byte(sb.String())
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		runs, err := Parse("osu_latency.txt", "auto", data)
		if err != nil || len(runs) != 1 || len(runs[0].Samples) != 25 {
			b.Fatalf("%d runs, %v", len(runs), err)
		}
	}
}
