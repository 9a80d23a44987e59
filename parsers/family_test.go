package parsers

import (
	"slices"
	"testing"

	"github.com/sbench/sbench/results"
)

// The family tables name operations of results.Collectives.
func TestFamilyTables(t *testing.T) {
	for _, row := range osuTitles {
		if row[0] != "" && !slices.Contains(results.Collectives, row[0]) {
			t.Errorf("osuTitles: %s's %q is not in results.Collectives", row[1], row[0])
		}
	}
	for name, op := range imbCollectives {
		if !slices.Contains(results.Collectives, op) {
			t.Errorf("imbCollectives: %s's %q is not in results.Collectives", name, op)
		}
	}
}
