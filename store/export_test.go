package store

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
)

// exportArchive is a small archive whose exports are golden files: an OSU
// run with statistics and a rank pair, an HPL run with scalars, and a run
// whose label key clashes with a fixed column.
func exportArchive(t *testing.T) *DB {
	t.Helper()
	db := openTemp(t)
	osu := osuBundle("acc", "ib", "1234", 4)
	osu.Samples[0].Min, osu.Samples[0].Max, osu.Samples[0].P50, osu.Samples[0].P99 =
		results.F(0.1), results.F(1e-7), results.F(1.0/3), results.F(123456789012)
	osu.Samples[1].Pair = []int{0, 1}
	osu.Samples[1].Tags = map[string]string{"direction": "n01->n02"}
	osu.Labels["note"] = `quoted "so", and commas`
	hpl := hplBundle("acc", "1235", time.Date(2024, 5, 2, 3, 4, 5, 0, time.UTC))
	clash := results.New()
	clash.Campaign = "acc"
	clash.Variant = "clash"
	clash.Benchmark = results.Benchmark{Name: "osu_latency", Kind: "tool", Kernel: "osu"}
	clash.Labels = map[string]string{"status": "golden", "label:x": "y", "fabric": "tcp"}
	clash.Samples = []results.Sample{{Metric: "latency", Unit: "us", X: results.F(1 << 20), XUnit: "bytes", Value: 1e6}}
	ingest(t, db, "f.json", osu, hpl, clash)
	ingest(t, db, "other.json", hplBundle("other", "9", time.Date(2024, 5, 9, 0, 0, 0, 0, time.UTC)))
	return db
}

func TestExportGolden(t *testing.T) {
	db := exportArchive(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name   string
		filter Filter
	}{
		{"export", Filter{Campaign: "acc"}},
		{"export-osu", Filter{Campaign: "acc", Benchmark: "osu_bw"}},
		{"export-empty", Filter{Campaign: "none"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var c, j bytes.Buffer
			if err := db.ExportCSV(ctx, &c, tt.filter); err != nil {
				t.Fatal(err)
			}
			if err := db.ExportJSON(ctx, &j, tt.filter); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", tt.name+".csv"), c.Bytes())
			golden.Check(t, filepath.Join("testdata", tt.name+".json"), j.Bytes())
			if !json.Valid(j.Bytes()) {
				t.Errorf("JSON export is not valid JSON:\n%s", j.Bytes())
			}
		})
	}
}

// TestExportCSVReadsBack checks the export by reading it as a user's script
// would, independently of the golden file's bytes.
func TestExportCSVReadsBack(t *testing.T) {
	db := exportArchive(t)
	ctx := context.Background()
	var buf bytes.Buffer
	if err := db.ExportCSV(ctx, &buf, Filter{Campaign: "acc"}); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := records[0]
	wantHeader := append(append([]string{}, exportColumns...), "fabric", "label:label:x", "mpi", "note", "site", "label:status") // in label key order
	if !reflect.DeepEqual(header, wantHeader) {
		t.Fatalf("header %q\nwant   %q", header, wantHeader)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	samples, _ := db.Samples(ctx, Filter{Campaign: "acc"})
	scalars, _ := db.Scalars(ctx, Filter{Campaign: "acc"})
	rows := records[1:]
	if len(rows) != len(samples)+len(scalars) {
		t.Fatalf("%d rows, want %d samples + %d scalars", len(rows), len(samples), len(scalars))
	}
	for i, s := range samples {
		r := rows[i]
		v, err := strconv.ParseFloat(r[col["value"]], 64)
		if err != nil || v != s.Value || r[col["metric"]] != s.Metric || r[col["run"]] != strconv.FormatInt(s.RunID, 10) {
			t.Errorf("row %d = %q, want sample %+v", i, r, s)
		}
		if s.X == nil && r[col["x"]] != "" {
			t.Errorf("row %d has x %q for a sample with none", i, r[col["x"]])
		}
		if s.X != nil {
			if x, err := strconv.ParseFloat(r[col["x"]], 64); err != nil || x != *s.X {
				t.Errorf("row %d x = %q, want %v", i, r[col["x"]], *s.X)
			}
		}
	}
	for i, s := range scalars {
		r := rows[len(samples)+i]
		if r[col["metric"]] != s.Name || r[col["x"]] != "" || r[col["repeat"]] != "" || r[col["value"]] != formatFloat(s.Value) {
			t.Errorf("row %d = %q, want scalar %+v", len(samples)+i, r, s)
		}
	}
	// The clashing labels keep their values under prefixed names, and the
	// fixed status column still holds the run's status.
	last := rows[len(samples)-1] // the clash run's only sample sorts last: its run id is highest
	if last[col["label:status"]] != "golden" || last[col["status"]] != "ok" || last[col["label:label:x"]] != "y" {
		t.Errorf("clash row = %q", last)
	}
}

func TestExportJSONReadsBack(t *testing.T) {
	db := exportArchive(t)
	var buf bytes.Buffer
	if err := db.ExportJSON(context.Background(), &buf, Filter{Campaign: "acc", Benchmark: "osu_bw"}); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 {
		t.Fatalf("%d rows, want 4", len(rows))
	}
	r := rows[0]
	if r["min"] != 0.1 || r["max"] != 1e-7 || r["x"] != 1.0 || r["iterations"] != 1000.0 || r["repeat"] != 0.0 {
		t.Errorf("first row = %v", r)
	}
	labels, _ := r["labels"].(map[string]any)
	if labels["note"] != `quoted "so", and commas` || labels["fabric"] != "ib" {
		t.Errorf("labels = %v", labels)
	}
	if tags, _ := rows[1]["tags"].(map[string]any); tags["direction"] != "n01->n02" {
		t.Errorf("second row tags = %v", rows[1]["tags"])
	}
	for _, k := range exportColumns {
		if _, ok := r[k]; !ok {
			t.Errorf("JSON row lacks %q", k)
		}
	}
}
