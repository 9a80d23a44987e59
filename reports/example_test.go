package reports_test

import (
	"fmt"
	"math"
	"time"

	"github.com/sbench/sbench/reports"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// pingpong is two runs of one ping-pong benchmark, over "ib" and "gbe":
// their bandwidth from 1 B to 4 MiB and, with latency, their latency too.
func pingpong(latency bool) reports.Data {
	d := reports.Data{Generated: time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)}
	for id, variant := range []string{"ib", "gbe"} {
		run := int64(id + 1)
		d.Runs = append(d.Runs, store.Run{ID: run, Campaign: "fabric", Variant: variant,
			Benchmark: "pingpong", Status: results.StatusOK})
		for k := 0; k <= 22; k++ {
			size := math.Ldexp(1, k)
			lat := 1.5*float64(id+1) + size/float64(10000/(id*80+1))
			if latency {
				d.Samples = append(d.Samples, store.Sample{RunID: run, Sample: results.Sample{Metric: "latency", Unit: "us", X: results.F(size), Value: lat}})
			}
			d.Samples = append(d.Samples, store.Sample{RunID: run, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(size), Value: size / lat}})
		}
	}
	return d
}

// Two configurations of one ping-pong benchmark give one bandwidth and one
// latency figure, each with a line per configuration.
func ExampleReport_Figures() {
	r, err := reports.New(pingpong(true))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range r.Figures() {
		fmt.Printf("%s (%s):", f.Name, f.Unit)
		for _, s := range f.Series {
			fmt.Printf(" %s", s.Config)
		}
		fmt.Println()
	}
	// Output:
	// pingpong-bandwidth (MB/s): ib gbe
	// pingpong-latency (us): ib gbe
	// pingpong-latency-small (us): ib gbe
}

// The numbers of the summary tables, without writing the PDF.
func ExampleReport_Summaries() {
	r, err := reports.New(pingpong(false))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range r.Summaries() {
		for _, b := range s.Bandwidth["bandwidth"] {
			// Ratio is 0 where a factor would rest on a single run.
			ratio := "no factor against the best from one run"
			if b.Ratio > 0 {
				ratio = fmt.Sprintf("%.2f of the best", b.Ratio)
			}
			fmt.Printf("%s %s: peak %.0f MB/s at %.0f bytes, %s\n", s.Benchmark, b.Config, b.Peak, b.PeakAt, ratio)
		}
	}
	for _, v := range r.Verdict() {
		fmt.Println(v)
	}
	// Output:
	// pingpong ib: peak 9964 MB/s at 4194304 bytes, no factor against the best from one run
	// pingpong gbe: peak 123 MB/s at 4194304 bytes, no factor against the best from one run
	// pingpong: ib reached 9964.36 MB/s at 4 MiB (1 run: no spread known); gbe 122.99 MB/s at 4 MiB (1 run: no spread known): with 1 run each no factor is claimed: their spread is unknown.
}
