package parsers

import (
	"bytes"
	"strings"
	"testing"
)

func TestSectionsOfArticle004JobOutput(t *testing.T) {
	data := mustRead(t, "testdata/004-erdma-vs-tcp-job11.out")
	secs := Sections(data)
	want := []struct {
		label string
		line  int
	}{
		{"use erdma for osu_lat", 2},
		{"use tcp for osu_lat", 30},
		{"use erdma for osu_bw", 58},
		{"use tcp for osu_bw", 86},
	}
	if len(secs) != len(want) {
		t.Fatalf("%d sections, want %d: %+v", len(secs), len(want), secs)
	}
	lines := strings.Split(string(data), "\n")
	for i, w := range want {
		s := secs[i]
		if s.Label != w.label || s.Line != w.line {
			t.Errorf("section %d: %q at line %d, want %q at line %d", i, s.Label, s.Line, w.label, w.line)
		}
		// The section's first line is the input's line s.Line.
		if first := strings.SplitN(string(s.Data), "\n", 2)[0]; first != lines[s.Line-1] {
			t.Errorf("section %d starts with %q, input line %d is %q", i, first, s.Line, lines[s.Line-1])
		}
		if strings.Contains(string(s.Data), "START") || strings.Contains(string(s.Data), ": END") {
			t.Errorf("section %d holds a marker", i)
		}
	}
}

func TestSectionsWithoutMarkers(t *testing.T) {
	in := []byte("# OSU MPI Latency Test v7.5\n1 2.0\n")
	secs := Sections(in)
	if len(secs) != 1 || secs[0].Label != "" || secs[0].Line != 1 || string(secs[0].Data) != string(in) {
		t.Errorf("got %+v", secs)
	}
}

func TestSectionsKeepsChatterAndUnclosed(t *testing.T) {
	in := "module load x\n=== run A: START ===\na\nb\n=== run A: END ===\nbetween\n+++ run B START\nc\n"
	secs := Sections([]byte(in))
	if len(secs) != 4 {
		t.Fatalf("got %d sections: %+v", len(secs), secs)
	}
	if secs[0].Label != "" || string(secs[0].Data) != "module load x\n" || secs[0].Line != 1 {
		t.Errorf("leading chatter: %+v", secs[0])
	}
	if secs[1].Label != "run A" || string(secs[1].Data) != "a\nb\n" || secs[1].Line != 3 {
		t.Errorf("section A: %+v", secs[1])
	}
	if secs[2].Label != "" || string(secs[2].Data) != "between\n" {
		t.Errorf("chatter between: %+v", secs[2])
	}
	if secs[3].Label != "run B" || string(secs[3].Data) != "c\n" || secs[3].Line != 8 {
		t.Errorf("unclosed section B: %+v", secs[3])
	}
}

func TestParseRefusesGarbage(t *testing.T) {
	tests := map[string]struct {
		in   []byte
		want string
	}{
		"empty":   {[]byte(""), "x.txt: empty input"},
		"blank":   {[]byte("\n  \n"), "x.txt: empty input"},
		"binary":  {[]byte("\x7fELF\x02\x01\x01\x00\x00\x00"), "x.txt: binary data"},
		"unknown": {[]byte("hello world\nthis is not a benchmark\n"), "x.txt:1: not output of any known tool"},
	}
	for name, tt := range tests {
		_, err := Parse("x.txt", "auto", tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", name, err, tt.want)
		}
	}
	if _, err := Parse("x.txt", "nosuch", []byte("a")); err == nil || !strings.Contains(err.Error(), `unknown format "nosuch"`) {
		t.Errorf("unknown format: %v", err)
	}
}

func TestNumber(t *testing.T) {
	for s, want := range map[string]float64{"11.01": 11.01, "7.240e+00": 7.24, "-3": -3, "0": 0, "1E3": 1000} {
		if v, ok := Number(s); !ok || v != want {
			t.Errorf("Number(%q) = %v, %v", s, v, ok)
		}
	}
	for _, s := range []string{"", "1.2.3", "NaN", "Inf", "-inf", "0x10", "1_000", "1e999", "abc"} {
		if _, ok := Number(s); ok {
			t.Errorf("Number(%q) accepted", s)
		}
	}
}

// Sections skips its regexps when hasMarkerLine finds no line that could
// be a marker: that must never miss a line the regexps take for one.
func FuzzMarkerPrefilter(f *testing.F) {
	for _, s := range []string{
		"=== run A: START ===\na\n=== run A: END ===\n",
		" \t+++ x START\n", "\f### y: begin\n#### y: End\n", "# OSU MPI Latency Test\n1 2\n",
		"--- a: END", "-- a: END\n", "\r\n==\n=== START", "\v=== START\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if hasMarkerLine(data) {
			return
		}
		for i, l := range bytes.SplitAfter(data, []byte("\n")) {
			text := strings.TrimRight(string(l), "\r\n")
			if startRE.MatchString(text) || endRE.MatchString(text) {
				t.Fatalf("line %d %q is a marker, but hasMarkerLine says there is none", i+1, text)
			}
		}
	})
}
