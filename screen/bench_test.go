package screen

import (
	"context"
	"testing"

	"github.com/sbench/sbench/internal/fleet"
	"github.com/sbench/sbench/store"
)

// BenchmarkAnalyze256 judges a 256-node screening: 65,280 pairs with
// re-tests, STREAM, HPL and 510 reference runs.
func BenchmarkAnalyze256(b *testing.B) {
	db, err := store.Open(b.TempDir() + "/s.db")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.Ingest(ctx, "fleet", fleet.Bundles(fleet.Spec{Nodes: 256, SlowNodes: []string{"n100"}, SlowSenders: []string{"n7"},
		BadLinks: [][2]string{{"n5", "n200"}}, Transient: [][2]string{{"n8", "n9"}}})); err != nil {
		b.Fatal(err)
	}
	in, err := Load(ctx, db, store.Filter{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := Analyze(in, DefaultOptions()); len(v.Findings) != 3 {
			b.Fatalf("findings %d", len(v.Findings))
		}
	}
}
