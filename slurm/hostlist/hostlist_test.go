package hostlist

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"n1", []string{"n1"}},
		{"n[1-2]", []string{"n1", "n2"}},
		{"n[9-11]", []string{"n9", "n10", "n11"}},
		{"node[01-04,07]", []string{"node01", "node02", "node03", "node04", "node07"}},
		{"r[1-2]n[01-02]", []string{"r1n01", "r1n02", "r2n01", "r2n02"}},
		{"a,b[9-10],c", []string{"a", "b9", "b10", "c"}},
		{"n[3,1,2]", []string{"n3", "n1", "n2"}},
		{"gpu[1-2]-ib", []string{"gpu1-ib", "gpu2-ib"}},
		{"x[008-010]", []string{"x008", "x009", "x010"}},
		{" n[1-2] ", []string{"n1", "n2"}},
		{"", nil},
	}
	for _, tt := range tests {
		got, err := Expand(tt.in)
		if err != nil {
			t.Errorf("Expand(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Expand(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	for _, in := range []string{
		"n[1-2", "n1-2]", "n[]", "n[2-1]", "n[a-b]", "n[1-2]]", "n[[1]]",
		"a,,b", "n[1-999999999]", "n[0-2000]x[0-2000]", "bad name",
	} {
		if got, err := Expand(in); err == nil {
			t.Errorf("Expand(%q) = %q, want an error", in, got)
		} else if !strings.Contains(err.Error(), "hostlist") {
			t.Errorf("Expand(%q) error %q does not say hostlist", in, err)
		}
	}
}

func TestCompress(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"n1", "n2"}, "n[1-2]"},
		{[]string{"n1", "n2", "n3", "n7"}, "n[1-3,7]"},
		{[]string{"node09", "node10"}, "node[09-10]"},
		{[]string{"n2", "n1"}, "n[2,1]"},
		{[]string{"a", "n1"}, "a,n1"},
		{[]string{"r1n01", "r1n02", "r2n01"}, "r1n[01-02],r2n01"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := Compress(tt.in); got != tt.want {
			t.Errorf("Compress(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// Whatever we write, Slurm's expansion must give the names back.
		back, err := Expand(Compress(tt.in))
		if err != nil || (len(tt.in) > 0 && !reflect.DeepEqual(back, tt.in)) {
			t.Errorf("round trip of %q gave %q, %v", tt.in, back, err)
		}
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"n[1-2]", "node[01-04,07]", "r[1-2]n[01-02]", "a,b", "n[1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := Expand(s)
		if err != nil {
			return
		}
		if len(names) > Max {
			t.Fatalf("%q expanded to %d names", s, len(names))
		}
	})
}

// FuzzCompress: whatever Compress writes, Expand gives the names back.
func FuzzCompress(f *testing.F) {
	for _, s := range []string{"n1 n2 n3 n7", "node09 node10 node11", "n01 n1 n001", "r1n01 r1n02 r2n01", "10 11 12", "x1234567890"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names := strings.Fields(s)
		for _, n := range names {
			if strings.Trim(n, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" {
				return // hostnames only
			}
		}
		if len(names) == 0 {
			return
		}
		list := Compress(names)
		got, err := Expand(list)
		if err != nil || strings.Join(got, " ") != strings.Join(names, " ") {
			t.Fatalf("Compress(%q) = %q, which expands to %q, %v", names, list, got, err)
		}
	})
}

func TestCompare(t *testing.T) {
	names := []string{"n10", "n2", "login", "n1", "node09", "node10", "n02", "a"}
	slices.SortFunc(names, Compare)
	if got := strings.Join(names, " "); got != "a login n1 n02 n2 n10 node09 node10" {
		t.Errorf("sorted: %s", got)
	}
}
