package reports

import (
	"maps"
	"slices"

	"github.com/sbench/sbench/screen"
	"github.com/sbench/sbench/store"
)

// screening judges the report's runs as sbench screen does (package
// screen: one analysis, drawn here as a section and on the heatmaps),
// when they hold a screening: a matrix, the links to a reference node, or
// per-node STREAM or HPL figures. It is nil otherwise.
func (r *Report) screening() *screen.Verdict {
	any := false
	for i := range r.runs {
		if screeningRun(&r.runs[i]) {
			any = true
			break
		}
	}
	if !any {
		return nil
	}
	v := screen.Analyze(screen.Input{Runs: r.runs, Samples: r.data.Samples}, r.opts.screen)
	if v.Matrix == nil && v.Reference == nil && len(v.NodeValues) == 0 {
		return nil
	}
	return v
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
