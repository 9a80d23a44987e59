package reports_test

import (
	"fmt"
	"math"
	"time"

	"github.com/sbench/sbench/reports"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Two configurations of one ping-pong benchmark give one bandwidth and one
// latency figure, each with a line per configuration.
func ExampleReport_Figures() {
	d := reports.Data{Generated: time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC)}
	for id, variant := range []string{"ib", "gbe"} {
		d.Runs = append(d.Runs, store.Run{ID: int64(id + 1), Campaign: "fabric", Variant: variant,
			Benchmark: "pingpong", Status: results.StatusOK})
		for k := 0; k <= 22; k++ {
			size := math.Ldexp(1, k)
			lat := 1.5*float64(id+1) + size/float64(10000/(id*80+1))
			d.Samples = append(d.Samples,
				store.Sample{RunID: int64(id + 1), Sample: results.Sample{Metric: "latency", Unit: "us", X: results.F(size), Value: lat}},
				store.Sample{RunID: int64(id + 1), Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(size), Value: size / lat}})
		}
	}
	r, err := reports.New(d)
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
}
