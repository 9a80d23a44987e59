package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func TestHostMismatchWarning(t *testing.T) {
	host := func(node, rate string) results.Host {
		return results.Host{Hostname: node, NodeName: node, CPUModel: "Xeon", Cores: 36, Kernel: "5.14",
			IB: []results.IBPort{{Device: "mlx5_0", Port: 1, State: "ACTIVE", Rate: rate, LinkLayer: "InfiniBand"}}}
	}
	runs := []store.Run{
		{ID: 1, Benchmark: "bw", Status: results.StatusOK, Hosts: []results.Host{host("n1", "100 Gb/sec (4X EDR)"), host("n2", "50 Gb/sec (2X EDR)")}},
		{ID: 2, Benchmark: "bw", Status: results.StatusOK, Hosts: []results.Host{host("n1", "100 Gb/sec (4X EDR)"), host("n3", "100 Gb/sec (4X EDR)")}},
	}
	got := hostMismatches(runs)
	want := "InfiniBand differs between the nodes of one run: mlx5_0 port 1 ACTIVE 100 Gb/sec (4X EDR) InfiniBand on n1; mlx5_0 port 1 ACTIVE 50 Gb/sec (2X EDR) InfiniBand on n2."
	if len(got) != 1 || got[0] != want {
		t.Fatalf("mismatches %q\nwant %q", got, want)
	}
	var buf bytes.Buffer
	if err := Write(&buf, Data{Runs: runs, Generated: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, buf.Bytes())
	if !strings.Contains(text, "nodes of a run are not alike") || !strings.Contains(text, "50 Gb/sec") {
		t.Errorf("report lacks the warning:\n%s", text)
	}
}
