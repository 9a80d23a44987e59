package campaign

import "testing"

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"kernel", "kernel", 0}, {"kernal", "kernel", 1}, {"latncy", "latency", 1},
		{"ab", "ba", 1}, {"sise", "sizes", 2}, {"osux", "osu", 1}, {"", "abc", 3}, {"ca", "abc", 3},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"bw", "hpl", "kernel", "latency", "nodes", "ntasks", "osu", "osu_latency", "sizes"}
	for name, want := range map[string]string{
		"kernal": "kernel", "Kernel": "kernel", "latncy": "latency", "osu_latncy": "osu_latency", "osux": "osu",
		"nodez": "nodes", "sise": "sizes", "bww": "bw",
		"xy": "", "hp": "hpl", "completely": "", "": "",
	} {
		if got, _ := closest(name, known); got != want {
			t.Errorf("closest(%q) = %q, want %q", name, got, want)
		}
	}
}
