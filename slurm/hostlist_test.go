package slurm

import (
	"reflect"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
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
		got, err := ExpandHostlist(tt.in)
		if err != nil {
			t.Errorf("ExpandHostlist(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ExpandHostlist(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExpandHostlistErrors(t *testing.T) {
	for _, in := range []string{
		"n[1-2", "n1-2]", "n[]", "n[2-1]", "n[a-b]", "n[1-2]]", "n[[1]]",
		"a,,b", "n[1-999999999]", "n[0-2000]x[0-2000]", "bad name",
	} {
		if got, err := ExpandHostlist(in); err == nil {
			t.Errorf("ExpandHostlist(%q) = %q, want an error", in, got)
		} else if !strings.Contains(err.Error(), "hostlist") {
			t.Errorf("ExpandHostlist(%q) error %q does not say hostlist", in, err)
		}
	}
}

func TestCompressHostlist(t *testing.T) {
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
		if got := CompressHostlist(tt.in); got != tt.want {
			t.Errorf("CompressHostlist(%q) = %q, want %q", tt.in, got, tt.want)
		}
		// Whatever we write, Slurm's expansion must give the names back.
		back, err := ExpandHostlist(CompressHostlist(tt.in))
		if err != nil || (len(tt.in) > 0 && !reflect.DeepEqual(back, tt.in)) {
			t.Errorf("round trip of %q gave %q, %v", tt.in, back, err)
		}
	}
}

func FuzzExpandHostlist(f *testing.F) {
	for _, s := range []string{"n[1-2]", "node[01-04,07]", "r[1-2]n[01-02]", "a,b", "n[1-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, err := ExpandHostlist(s)
		if err != nil {
			return
		}
		if len(names) > MaxHostlist {
			t.Fatalf("%q expanded to %d names", s, len(names))
		}
	})
}
