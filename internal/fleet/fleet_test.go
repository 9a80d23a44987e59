package fleet

import "testing"

func TestBundlesValidate(t *testing.T) {
	for _, b := range Bundles(Spec{Nodes: 8, SlowNodes: []string{"n3"}, Transient: [][2]string{{"n1", "n2"}}}) {
		if err := b.Validate(); err != nil {
			t.Fatalf("%s: %v", b.Benchmark.Name, err)
		}
	}
}
