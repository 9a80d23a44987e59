package kernels

import (
	"slices"
	"testing"

	"github.com/sbench/sbench/results"
)

// Every kernel's metrics have a row of the metric table, and its family is
// point-to-point or a collective operation.
func TestKernelMetricsHaveRows(t *testing.T) {
	for _, k := range table {
		if len(k.Metrics) == 0 {
			t.Errorf("kernel %s declares no metric", k.Name)
		}
		for _, m := range k.Metrics {
			if _, ok := results.MetricOf(m); !ok {
				t.Errorf("kernel %s: metric %q has no row in results/metric.go", k.Name, m)
			}
		}
		if k.Family != "" && k.Family != results.FamilyPointToPoint && !slices.Contains(results.Collectives, k.Family) {
			t.Errorf("kernel %s: family %q is neither point-to-point nor in results.Collectives", k.Name, k.Family)
		}
	}
}
