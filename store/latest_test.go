package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// LatestRun: the newest ok run of the kernels asked for, within the
// filter; failed runs and other kernels do not count.
func TestLatestRun(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	mk := func(job, kernel string, status results.Status, start time.Time) *results.Bundle {
		b := osuBundle("screen", "v", job, 2)
		b.Benchmark.Kernel, b.Benchmark.Kind = kernel, "native"
		b.Start, b.End = start, start.Add(time.Second)
		if b.Status = status; status == results.StatusFailed {
			b.Error = "rank 3 never arrived"
		}
		return b
	}
	ingest(t, db, "a", mk("1", "matrix", results.StatusOK, at))
	ingest(t, db, "b", mk("2", "matrix", results.StatusOK, at.Add(time.Hour)))
	ingest(t, db, "c", mk("3", "matrix", results.StatusFailed, at.Add(2*time.Hour)))
	ingest(t, db, "d", mk("4", "stream", results.StatusOK, at.Add(3*time.Hour)))
	for _, tc := range []struct {
		f       Filter
		kernels []string
		job     string
	}{
		{Filter{}, []string{"matrix"}, "2"},
		{Filter{JobIDs: []string{"1", "3"}}, []string{"matrix"}, "1"},
		{Filter{}, []string{"stream", "matrix"}, "4"},
		{Filter{}, nil, "4"},
	} {
		r, err := db.LatestRun(ctx, tc.f, tc.kernels...)
		if err != nil || r.JobID != tc.job {
			t.Errorf("LatestRun(%+v, %v): job %q, %v; want job %s", tc.f, tc.kernels, r.JobID, err, tc.job)
		}
		if err == nil && len(r.Hosts) == 0 {
			t.Errorf("LatestRun(%+v, %v): the run has no hosts", tc.f, tc.kernels)
		}
	}
	if _, err := db.LatestRun(ctx, Filter{Campaign: "other"}, "matrix"); !errors.Is(err, ErrNotFound) {
		t.Errorf("no such run: %v, want ErrNotFound", err)
	}
}
