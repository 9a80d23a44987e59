package reports

import (
	"maps"
	"slices"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/screen"
	"github.com/sbench/sbench/store"
)

// screening judges the report's screening as sbench screen does (package
// screen: one analysis, drawn here as a section and on the heatmaps): the
// runs chooseScreening picked, with the samples analyse kept of them. It is
// nil when the report holds no screening.
func (r *Report) screening() *screen.Verdict {
	if len(r.screenRuns) == 0 {
		return nil
	}
	var runs []store.Run
	for i := range r.runs {
		if r.screenRuns[r.runs[i].ID] {
			runs = append(runs, r.runs[i])
		}
	}
	v := screen.Analyze(screen.Input{Runs: runs, Samples: r.screenSamples}, r.opts.screen)
	r.screenSamples = nil
	if v.Matrix == nil && v.Reference == nil && len(v.NodeValues) == 0 {
		return nil
	}
	return v
}

// chooseScreening picks the runs the screening judges. A report holding
// one screening — every ok matrix run (else reference run, else native
// STREAM or HPL run) in one submission or job — judges all its screening
// runs, as before. A report holding several (a site's years) judges the
// newest as sbench screen's default selection does (screen.Latest): the
// submission (else the job) of the newest ok matrix run, else of the
// newest run of a reference placement, else of the newest native STREAM or
// HPL run — its partition as the newest screening found it, not every
// matrix of four years pooled — and holds only that screening's samples
// while it reads.
func (r *Report) chooseScreening() {
	var start *store.Run
	var starts func(*store.Run) bool
	for _, starts = range []func(*store.Run) bool{
		func(run *store.Run) bool { return run.Kernel == "matrix" },
		referenceRun,
		func(run *store.Run) bool {
			return (run.Kernel == "stream" || run.Kernel == "hpl") && run.Kind == "native"
		},
	} {
		for i := range r.runs {
			run := &r.runs[i]
			if run.Status != results.StatusOK || !starts(run) {
				continue
			}
			if start == nil || run.Start.After(start.Start) || run.Start.Equal(start.Start) && run.ID > start.ID {
				start = run
			}
		}
		if start != nil {
			break
		}
	}
	if start == nil {
		return
	}
	in := func(run *store.Run) bool { return run.ID == start.ID }
	switch {
	case start.JobID != "":
		jobs := map[string]bool{start.JobID: true}
		var campaign []store.Job
		for _, j := range r.data.Jobs {
			if j.Campaign == start.Campaign {
				campaign = append(campaign, j)
			}
		}
		for _, sub := range compare.Submissions(campaign) {
			ids := map[string]bool{}
			for _, j := range sub {
				ids[j.SlurmID] = true
			}
			if ids[start.JobID] {
				jobs = ids
			}
		}
		in = func(run *store.Run) bool { return run.Campaign == start.Campaign && jobs[run.JobID] }
	}
	one := true
	for i := range r.runs {
		if run := &r.runs[i]; run.Status == results.StatusOK && starts(run) && !in(run) {
			one = false
			break
		}
	}
	if one {
		in = func(*store.Run) bool { return true }
	}
	r.screenRuns = map[int64]bool{}
	for i := range r.runs {
		if run := &r.runs[i]; screeningRun(run) && in(run) {
			r.screenRuns[run.ID] = true
		}
	}
}

// screeningRun reports whether a run is part of a screening.
func screeningRun(run *store.Run) bool {
	return run.Kernel == "matrix" || referenceRun(run) ||
		(run.Kernel == "stream" || run.Kernel == "hpl") && run.Kind == "native"
}

// referenceRun reports whether a run is one of a reference placement's
// (pairs = "reference"): the screening section shows them as one table of
// every node's links, not as a configuration per node pair.
func referenceRun(run *store.Run) bool {
	return run.Labels[screen.LabelReference] != "" && run.Labels["pair"] != ""
}

// screenMatrix is the screening's matrix check when the heatmap g is of
// its runs and of a metric it judges, else nil.
func (r *Report) screenMatrix(g *matrixGroup) *screen.MatrixCheck {
	if r.screen == nil || r.screen.Matrix == nil {
		return nil
	}
	if g.metric != screen.MetricLatency && g.metric != screen.MetricBandwidth {
		return nil
	}
	if !slices.Equal(slices.Sorted(maps.Keys(g.runs)), r.screen.Matrix.Runs) {
		return nil
	}
	return r.screen.Matrix
}

// blamedLines are the heatmap rows (what a node sends) and columns (what
// it receives) of the nodes the screening blames for their links in what
// the heatmap shows (latency or bandwidth): both for a bad node, one for a
// one-way finding. A node blamed for its STREAM figure or its provenance
// alone is not framed: its links are fine.
func (r *Report) blamedLines(g *matrixGroup, what string) (rows, cols map[int]bool) {
	rows, cols = map[int]bool{}, map[int]bool{}
	for _, f := range r.screen.Findings {
		links := false
		for _, e := range f.Evidence {
			links = links || e.Check == "matrix" && e.Metric == what
		}
		if !links {
			continue
		}
		for _, n := range f.Nodes {
			k, ok := g.index[n]
			if !ok {
				continue
			}
			switch {
			case f.Kind == screen.KindNode:
				rows[k], cols[k] = true, true
			case f.Kind == screen.KindOneWay && f.Subject == n+"→*":
				rows[k] = true
			case f.Kind == screen.KindOneWay:
				cols[k] = true
			}
		}
	}
	return rows, cols
}
