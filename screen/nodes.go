package screen

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// minNodeValues is the fewest nodes a per-node figure is judged on: with
// two, the median is their mean and "far below it" means little.
const minNodeValues = 3

// NodeValueCheck is one per-node figure — STREAM triad, HPL Gflops — held
// to a share of its median over the nodes.
type NodeValueCheck struct {
	// Check is "stream" or "hpl"; Metric the sample's metric.
	Check  string  `json:"check"`
	Metric string  `json:"metric"`
	Unit   string  `json:"unit"`
	Runs   []int64 `json:"runs"`
	// Ranks is the ranks per node the values were measured with ("" when
	// the samples do not say): nodes are only compared at one count.
	Ranks string `json:"ranks,omitempty"`
	// Values is each node's figure (the median of its samples).
	Values map[string]float64 `json:"values"`
	Median float64            `json:"median"`
	Limit  float64            `json:"limit"`
	// Low are the nodes below Limit, the lowest first.
	Low []string `json:"low,omitempty"`
}

// The checks of a screening (Evidence.Check, NodeValueCheck.Check).
const (
	CheckMatrix     = kernels.KernelMatrix
	CheckReference  = "reference"
	CheckStream     = kernels.KernelStream
	CheckHPL        = kernels.KernelHPL
	CheckProvenance = "provenance"
	CheckRun        = "run"
)

// nodeMetrics are the per-node figures a screening judges: what the
// stream and hpl kernels report per node, under the kernel's name as the
// check's (NodeValueCheck.Check).
var nodeMetrics = []struct{ check, metric, what string }{
	{CheckStream, kernels.MetricNodeStreamTriad, "STREAM triad"},
	{CheckHPL, kernels.MetricNodeHPLGflops, "HPL"},
}

// CheckName is what a per-node check (NodeValueCheck.Check) measures, in
// words: "STREAM triad" for stream.
func CheckName(check string) string {
	for _, nm := range nodeMetrics {
		if nm.check == check {
			return nm.what
		}
	}
	return check
}

// nodeValues holds every node's STREAM triad and HPL Gflops to
// NodeFraction of the median over the nodes.
func (b *builder) nodeValues(runs []store.Run, byRun map[int64][]store.Sample) {
	for _, nm := range nodeMetrics {
		// By the ranks per node the samples say.
		vals := map[string]map[string][]float64{}
		runIDs := map[string]map[int64]bool{}
		unit := ""
		for _, r := range runs {
			for _, s := range byRun[r.ID] {
				if s.Metric != nm.metric || s.Tags["node"] == "" {
					continue
				}
				k := s.Tags["ranks"]
				if vals[k] == nil {
					vals[k], runIDs[k] = map[string][]float64{}, map[int64]bool{}
				}
				vals[k][s.Tags["node"]] = append(vals[k][s.Tags["node"]], s.Value)
				runIDs[k][r.ID] = true
				unit = cmp.Or(unit, s.Unit)
			}
		}
		keys := slices.SortedFunc(maps.Keys(vals), results.NaturalCompare)
		if len(keys) > 1 {
			b.warnf("%s was measured with different ranks per node; each count is judged on its own", nm.what)
		}
		for _, k := range keys {
			c := NodeValueCheck{Check: nm.check, Metric: nm.metric, Unit: unit, Ranks: k, Values: map[string]float64{},
				Runs: slices.Sorted(maps.Keys(runIDs[k]))}
			var all []float64
			for n, vs := range vals[k] {
				c.Values[n] = medianOr0(vs)
				all = append(all, c.Values[n])
				b.see(n)
				if nm.check == CheckStream {
					b.stat(n).Stream = c.Values[n]
				} else {
					b.stat(n).HPL = c.Values[n]
				}
			}
			c.Median = medianOr0(all)
			c.Limit = c.Median * b.o.NodeFraction
			if len(c.Values) < minNodeValues {
				b.warnf("%s was measured on %d node(s): at least %d are needed to tell one that is low", nm.what, len(c.Values), minNodeValues)
				b.v.NodeValues = append(b.v.NodeValues, c)
				continue
			}
			for _, n := range slices.SortedFunc(maps.Keys(c.Values), hostlist.Compare) {
				if c.Values[n] < c.Limit {
					c.Low = append(c.Low, n)
				}
			}
			slices.SortStableFunc(c.Low, func(x, y string) int { return cmp.Compare(c.Values[x], c.Values[y]) })
			for _, n := range c.Low {
				val := c.Values[n]
				b.nodeFinding(n, []Evidence{{Check: nm.check, Metric: nm.metric,
					Text: fmt.Sprintf("%s %s %s is %s of the node median %s %s, below the limit %s %s (%s)",
						nm.what, ftoa(val), unit, pct(val/c.Median), ftoa(c.Median), unit, ftoa(c.Limit), unit, pct(b.o.NodeFraction)),
					Value: val, Reference: c.Median, Limit: c.Limit, Unit: unit}})
			}
			b.v.NodeValues = append(b.v.NodeValues, c)
		}
	}
}
