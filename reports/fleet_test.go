package reports

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/fleet"
	"github.com/sbench/sbench/store"
)

// fleetData is a synthetic screening of a partition, archived and read
// back as sbench report reads it.
func fleetData(t testing.TB, s fleet.Spec) Data {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "fleet.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Ingest(ctx, "fleet", fleet.Bundles(s)); err != nil {
		t.Fatal(err)
	}
	runs, err := db.Runs(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	samples, err := db.Samples(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return Data{Runs: runs, Samples: samples, Generated: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC), Version: "test"}
}

// fleet64 is the 64-node screening the pages are looked at for.
var fleet64 = fleet.Spec{Nodes: 64, SlowNodes: []string{"n17"}, SlowSenders: []string{"n33"}, BadLinks: [][2]string{{"n5", "n40"}},
	Transient: [][2]string{{"n8", "n9"}}, LowStream: []string{"n50"}, OddFirmware: []string{"n60"}, HalfRate: []string{"n61"}}

// TestFleetPages renders the report of a 64-node screening, every page
// checked for ink; with SBENCH_PAGES=DIR the PDF and its pages stay in
// DIR to be looked at. The screening section says what sbench screen
// says, and the heatmaps put the bad node last, framed and labelled.
func TestFleetPages(t *testing.T) {
	d := fleetData(t, fleet64)
	r, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("SBENCH_PAGES")
	if dir == "" {
		dir = t.TempDir()
	}
	path := savePDF(t, dir, "fleet64.pdf", buf.Bytes())
	n := pageCount(t, path)
	t.Logf("%d pages, %d KB", n, buf.Len()/1024)
	renderPages(t, path, n)

	text := pdfText(t, buf.Bytes())
	for _, want := range []string{
		"Screening: 4 bad nodes (n17, n50, n60, n61), 1 one-way node link (n33->*), 1 bad link (n5->n40); drain",
		"node n17", "one-way n33->*", "link n5->n40",
		`scontrol update NodeName=n17 State=DRAIN \`, `Reason="sbench: links bandwidth`,
		"Nodes, the worst 15 of 64", "Node pairs, the worst 15 of 4032", "Links to the reference node n1",
		"1 link outside tolerance once", "n8->n9",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// Neither a heatmap of re-tests nor a section per reference pair.
	for _, unwanted := range []string{"Benchmark: ref-bw", "Benchmark: ref-latency", "matrix_retest"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("the report has %q", unwanted)
		}
	}
	heatmaps := 0
	for _, f := range r.Figures() {
		if f.Kind != KindMatrix {
			continue
		}
		heatmaps++
		g := f.matrix
		last := g.nodes[g.display[len(g.display)-1]]
		if last != "n17" {
			t.Errorf("%s: the last node is %s, want the bad node n17", f.Title, last)
		}
		ticks := heatmapTicks(g, g.display, map[int]bool{g.index["n17"]: true}, 6)
		labelled := false
		for _, tk := range ticks {
			labelled = labelled || strings.Contains(tk.Label, "n17")
		}
		if !labelled || len(ticks) > 40 {
			t.Errorf("%s: %d labels, n17 labelled %v", f.Title, len(ticks), labelled)
		}
	}
	if heatmaps != 2 {
		t.Errorf("%d heatmaps, want bandwidth and latency", heatmaps)
	}
}

// Labels of a 256-node heatmap: every 8th, the blamed ones, and blamed
// ones side by side as one.
func TestHeatmapTicks(t *testing.T) {
	g := newMatrixGroup("matrix", "matrix_bandwidth", "MB/s", "default")
	order := make([]int, 256)
	for i := range order {
		g.node(fmt.Sprintf("n%d", i+1))
		order[i] = i
	}
	blamed := map[int]bool{254: true, 255: true, 100: true}
	ticks := heatmapTicks(g, order, blamed, 1.9)
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, tk.Label)
	}
	got := strings.Join(labels, " ")
	if !strings.Contains(got, "n89 n101 n113") || !strings.HasSuffix(got, "n249 n255, n256") || strings.Contains(got, "n105 ") {
		t.Errorf("labels: %s", got)
	}
}

// BenchmarkFleetReport256 is the report of a 256-node screening: 65,280
// pairs, two heatmaps.
func BenchmarkFleetReport256(b *testing.B) {
	d := fleetData(b, fleet.Spec{Nodes: 256, SlowNodes: []string{"n100"}, SlowSenders: []string{"n7"}, BadLinks: [][2]string{{"n5", "n200"}}, NoReference: true})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var buf bytes.Buffer
		if err := Write(&buf, d); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(buf.Len())/1e6, "MB")
	}
}
