package parsers

import (
	"slices"
	"testing"

	"github.com/sbench/sbench/results"
)

// The family tables name programs the parsers know, and operations of
// results.Collectives.
func TestFamilyTables(t *testing.T) {
	for name, op := range osuCollectives {
		if !osuNames()[name] {
			t.Errorf("osuCollectives: %s is no program of osuTitles", name)
		}
		if !slices.Contains(results.Collectives, op) {
			t.Errorf("osuCollectives: %s's %q is not in results.Collectives", name, op)
		}
	}
	for name, op := range imbCollectives {
		if !slices.Contains(results.Collectives, op) {
			t.Errorf("imbCollectives: %s's %q is not in results.Collectives", name, op)
		}
	}
}
