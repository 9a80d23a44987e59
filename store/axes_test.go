package store

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/sbench/sbench/results"
)

// SampleAxes lists the metrics and sizes of some runs' samples; SamplesAt
// reads only those on the axes asked for, in one pass.
func TestSampleAxesAndSamplesAt(t *testing.T) {
	db := openTemp(t)
	b := func(bench string, vals ...float64) *results.Bundle {
		bd := &results.Bundle{Schema: results.Schema, Benchmark: results.Benchmark{Name: bench, Kind: "tool"}, Status: results.StatusOK}
		for i, v := range vals {
			bd.Samples = append(bd.Samples, results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(float64(int(1) << (10 * i))), XUnit: "bytes", Value: v})
		}
		bd.Samples = append(bd.Samples, results.Sample{Metric: "rate", Unit: "MB/s", Value: vals[0] * 2})
		return bd
	}
	res, err := db.Ingest(context.Background(), "t", []*results.Bundle{b("a", 1, 2, 3), b("b", 4, 5), b("c", 7, 8, 9)})
	if err != nil {
		t.Fatal(err)
	}
	ids := res.Added[:2]
	axes, err := db.SampleAxes(context.Background(), ids)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range axes {
		x := "none"
		if a.X != nil {
			x = strconv.FormatFloat(*a.X, 'f', -1, 64)
		}
		got = append(got, a.Metric+"@"+x)
	}
	if want := "[bandwidth@1 bandwidth@1024 bandwidth@1048576 rate@none]"; fmt.Sprint(got) != want {
		t.Errorf("axes %v, want %s", got, want)
	}
	ss, err := db.SamplesAt(context.Background(), ids, []SampleAxis{{Metric: "bandwidth", X: results.F(1024)}, {Metric: "rate"}})
	if err != nil {
		t.Fatal(err)
	}
	var vals []float64
	for _, s := range ss {
		vals = append(vals, s.Value)
	}
	if len(vals) != 4 || vals[0] != 2 || vals[1] != 2 || vals[2] != 5 || vals[3] != 8 {
		t.Errorf("samples at 1 KiB and rate of runs 1-2: %v, want [2 2 5 8]", vals)
	}
}
