package store

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// FuzzIngestRoundTrip stores arbitrary strings and floats and reads them
// back three ways: as samples, as the bundle, and through the CSV export.
// Whatever a parser puts in a bundle must come out of the archive unchanged.
func FuzzIngestRoundTrip(f *testing.F) {
	f.Add("bandwidth", "MB/s", 1.5, 1024.0, true, "fabric", "ib", "raw output\n", int64(0))
	f.Add("", "", 0.0, 0.0, false, "", "", "", int64(-1))
	f.Add("lat,\"q\"\n", "µs", -0.0, 1e308, true, "status", "a\x00b", "\xff\xfe", int64(1<<62))
	f.Add("x", "u", 5e-324, -1e-300, true, "label:run", "v,\"w\"", "r", int64(1700000000))

	db, err := Open(filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	ctx := context.Background()

	f.Fuzz(func(t *testing.T, metric, unit string, value, x float64, hasX bool, key, val, raw string, startSec int64) {
		b := results.New()
		b.Campaign = "fuzz"
		b.Benchmark.Name = "fuzz"
		b.Labels = map[string]string{key: val}
		b.Raw = raw
		b.Start = time.Unix(startSec%(1<<35), 0)
		s := results.Sample{Metric: metric, Unit: unit, Value: value, Repeat: int(startSec % 5)}
		if hasX {
			s.X = results.F(x)
		}
		b.Samples = []results.Sample{s}
		if b.Validate() != nil || checkTime(b.Start) != nil {
			// Ingest must refuse it, and store nothing.
			if res, err := db.Ingest(ctx, "fuzz.json", []*results.Bundle{b}); err == nil {
				t.Fatalf("Ingest accepted an invalid bundle: %+v", res)
			}
			return
		}
		res, err := db.Ingest(ctx, "fuzz.json", []*results.Bundle{b})
		if err != nil {
			t.Fatal(err)
		}
		ids := append(res.Added, res.Skipped...)
		if len(ids) != 1 {
			t.Fatalf("Ingest = %+v, want one run", res)
		}
		id := ids[0]

		// What JSON makes of b: invalid UTF-8 becomes U+FFFD.
		want := roundTrip(t, b)
		got, err := db.Bundle(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Bundle =\n%+v\nwant\n%+v", got, want)
		}

		samples, err := db.Samples(ctx, Filter{RunIDs: []int64{id}})
		if err != nil {
			t.Fatal(err)
		}
		if len(samples) != 1 || !sameSample(samples[0].Sample, want.Samples[0]) {
			t.Fatalf("Samples = %+v, want %+v", samples, want.Samples[0])
		}

		var buf bytes.Buffer
		if err := db.ExportCSV(ctx, &buf, Filter{RunIDs: []int64{id}}); err != nil {
			t.Fatal(err)
		}
		records, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatalf("export does not read back as CSV: %v\n%s", err, buf.Bytes())
		}
		if len(records) != 2 {
			t.Fatalf("%d CSV records, want header and one row", len(records))
		}
		row := map[string]string{}
		for i, h := range records[0] {
			row[h] = records[1][i]
		}
		v, err := strconv.ParseFloat(row["value"], 64)
		if err != nil || math.Float64bits(v) != math.Float64bits(samples[0].Value) {
			t.Errorf("CSV value %q, want %v", row["value"], samples[0].Value)
		}
		for k, v := range want.Labels {
			if got := row[labelColumn(k)]; got != v && !csvNormalises(v, got) {
				t.Errorf("CSV label column %q = %q, want %q", labelColumn(k), got, v)
			}
		}
		if got, w := row["metric"], want.Samples[0].Metric; got != w && !csvNormalises(w, got) {
			t.Errorf("CSV metric %q, want %q", got, w)
		}
	})
}

// sameSample compares samples as stored numbers compare: SQLite keeps -0 as
// 0, which is the same value.
func sameSample(a, b results.Sample) bool {
	if a.Value != b.Value || (a.X == nil) != (b.X == nil) || (a.X != nil && *a.X != *b.X) {
		return false
	}
	a.Value, b.Value, a.X, b.X = 0, 0, nil, nil
	return reflect.DeepEqual(a, b)
}

// csvNormalises reports whether encoding/csv's reader turned want into got
// the way it documents: a "\r\n" inside a quoted field reads back as "\n".
func csvNormalises(want, got string) bool {
	return bytes.Equal(bytes.ReplaceAll([]byte(want), []byte("\r\n"), []byte("\n")), []byte(got))
}
