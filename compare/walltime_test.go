package compare

import (
	"testing"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// A command without a parser has its wall time for a figure, a sample
// with no x: compare judges it lower is better, as every time, and leaves
// out a failed run's, whose samples are kept but are no figures.
func TestBuildWallTime(t *testing.T) {
	a, b := newSides("before", "after")
	wall := func(s *sideBuilder, run int64, v float64) {
		s.Samples = append(s.Samples, store.Sample{RunID: run, Sample: results.Sample{
			Metric: results.MetricWallTime, Unit: results.UnitSeconds, Value: v}})
	}
	for i := range 6 {
		wall(a, a.run("solver", "", nil), 100+float64(i%3))
		wall(b, b.run("solver", "", nil), 120+float64(i%3))
	}
	// A run that failed quickly (its command died): its time is kept in
	// the archive, and is no figure.
	failed := b.run("solver", "", nil)
	b.Runs[len(b.Runs)-1].Status, b.Runs[len(b.Runs)-1].Error = results.StatusFailed, "rank 0 (node n1): ./solver exited with status 1"
	wall(b, failed, 0.5)
	res := mustBuild(t, a.Side, b.Side)
	if len(res.Tables) != 1 || res.Tables[0].Metric != results.MetricWallTime || len(res.Tables[0].Rows) != 1 {
		t.Fatalf("tables %+v, want one of wall_time", res.Tables)
	}
	row := res.Tables[0].Rows[0]
	if row.Change != Worse || res.Tables[0].Better != "lower" || row.Old.N != 6 || row.New.N != 6 || res.Regressions() != 1 {
		t.Errorf("row %+v: want a regression, lower is better, 6 runs a side (the failed one left out)", row)
	}
	if len(res.New.Excluded) != 1 || res.New.Excluded[0] != failed {
		t.Errorf("excluded %v, want the failed run %d", res.New.Excluded, failed)
	}
}
