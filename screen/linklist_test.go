package screen

import "testing"

// linkList names the links of one sending node by it, those of one
// receiving node by that node, and others node by node.
func TestLinkList(t *testing.T) {
	for _, c := range []struct {
		links []string
		want  string
	}{
		{[]string{"n3→n5"}, "n3→n5"},
		{[]string{"n7→n2", "n7→n1", "n7→n8"}, "n7→n[1-2,8]"},
		{[]string{"n2→n7", "n1→n7", "n8→n7"}, "n[1-2,8]→n7"},
		{[]string{"n2→n7", "n1→n7", "n2→n8"}, "n1→n7, n2→n[7-8]"},
		{nil, ""},
	} {
		if got := linkList(c.links); got != c.want {
			t.Errorf("linkList(%q) = %q, want %q", c.links, got, c.want)
		}
	}
}
