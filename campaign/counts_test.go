package campaign

import (
	"reflect"
	"testing"
)

// TestExpandCountsBraces: text around the counts, stray braces and
// unknown names stay as written; a count known only at run time is a
// piece of its own.
func TestExpandCountsBraces(t *testing.T) {
	counts := map[string]count{"{ranks}": {n: 4}, "{nodes}": {expr: "$N"}, "{ppn}": {n: 2}}
	for _, tc := range []struct {
		arg  string
		want word
	}{
		{"plain", word{{s: "plain"}}},
		{"", word{{s: ""}}},
		{"{{ranks}x{other}{ppn", word{{s: "{4x{other}{ppn"}}},
		{"n={nodes},r={ranks}", word{{s: "n="}, {s: "$N", expr: true}, {s: ",r=4"}}},
		{"{nodes}", word{{s: "$N", expr: true}}},
	} {
		if got := expandCounts(tc.arg, counts); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("expandCounts(%q) = %#v, want %#v", tc.arg, got, tc.want)
		}
	}
}
