package reports

import (
	"maps"
	"slices"

	"github.com/sbench/sbench/kernels"
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
// one screening — every ok run a screening starts from (screen.Newest:
// matrix, else reference, else STREAM or HPL) in one submission or job —
// judges all its screening runs. A report holding several (a site's
// years) judges the newest as sbench screen's default selection does —
// its partition as the newest screening found it, not every matrix of
// four years pooled — and holds only that screening's samples while it
// reads.
func (r *Report) chooseScreening() {
	sel, ok := screen.Newest(r.runs, r.data.Jobs)
	if !ok {
		return
	}
	one := true
	for i := range r.runs {
		if run := &r.runs[i]; run.Status == results.StatusOK && sel.Starts(run) && !sel.Holds(run) {
			one = false
			break
		}
	}
	r.screenRuns = map[int64]bool{}
	for i := range r.runs {
		if run := &r.runs[i]; screen.Screening(run) && (one || sel.Holds(run)) {
			r.screenRuns[run.ID] = true
		}
	}
}

// screenMatrix is the screening's matrix check when the heatmap g is of
// its runs and of a metric it judges, else nil.
func (r *Report) screenMatrix(g *matrixGroup) *screen.MatrixCheck {
	if r.screen == nil || r.screen.Matrix == nil {
		return nil
	}
	if g.metric != kernels.MetricMatrixLatency && g.metric != kernels.MetricMatrixBandwidth {
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
		if !slices.ContainsFunc(f.Evidence, func(e screen.Evidence) bool { return e.Check == screen.CheckMatrix && e.Metric == what }) {
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
