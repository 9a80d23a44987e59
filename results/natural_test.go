package results

import (
	"slices"
	"testing"
)

func TestNaturalCompare(t *testing.T) {
	in := []string{"a/77.10.x.json", "a/77.2.x.json", "a/77.1.x.json", "a/77_3.0.x.json", "a/77_12.0.x.json", "b", "a/77.02.x.json", "a10", "a9z"}
	slices.SortFunc(in, NaturalCompare)
	want := []string{"a/77.1.x.json", "a/77.02.x.json", "a/77.2.x.json", "a/77.10.x.json", "a/77_3.0.x.json", "a/77_12.0.x.json", "a9z", "a10", "b"}
	if !slices.Equal(in, want) {
		t.Errorf("natural order:\n got %q\nwant %q", in, want)
	}
}
