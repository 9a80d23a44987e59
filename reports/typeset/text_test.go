package typeset

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestWrapRunes(t *testing.T) {
	width := func(s string) float64 { return float64(len([]rune(s))) } // one unit a character
	for _, c := range []struct {
		in   string
		w    float64
		want string
	}{
		{"eRDMA と TCP の比較", 8, "eRDMA と|TCP の比較"},
		{"帯域幅テストの実行", 4, "帯域幅テ|ストの実|行"},
		{"one two three", 7, "one two|three"},
		{"abcdefghij", 4, "abcd|efgh|ij"},
	} {
		if got := strings.Join(wrapRunes(c.in, c.w, width), "|"); got != c.want {
			t.Errorf("wrapRunes(%q, %v) = %q, want %q", c.in, c.w, got, c.want)
		}
	}
}

func FuzzLatinEncode(f *testing.F) {
	for _, s := range []string{"", "plain", "µs × 1000 — “quoted” €", "日本語", "tab\there\nnew\x00line", "\xff\xfe bad utf-8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l := newEncoder(nil)
		out := l.encode(s)
		kept, added := 0, 0
		for _, r := range s {
			switch {
			case r < 0x20 && r != '\t' && r != '\n' && r != '\r', r == 0x7F:
			case r >= 0x80 && transliterations[r] != "" && l.table[r] == 0:
				kept += len(transliterations[r])
				added += strings.Count(transliterations[r], "?")
			default:
				kept++
			}
		}
		if len(out) != kept {
			t.Fatalf("encode(%q) = %q: %d bytes for %d printable runes", s, out, len(out), kept)
		}
		for i := 0; i < len(out); i++ {
			if out[i] < 0x20 || out[i] == 0x7F {
				t.Fatalf("encode(%q) holds control byte %#x", s, out[i])
			}
		}
		replaced := strings.Count(out, "?") - strings.Count(s, "?") - added
		if replaced != l.replacedCount() {
			t.Fatalf("encode(%q): %d '?' added but %d counted as replaced", s, replaced, l.replacedCount())
		}
	})
}

// Columns of width 0 share what the fixed ones leave of the text width,
// so a table with one is exactly as wide as the text.
func TestWidths(t *testing.T) {
	got := widths([]Column{{Width: 30}, {}, {Width: 100}, {}})
	share := (ContentWidth - 130) / 2
	if want := []float64{30, share, 100, share}; !slices.Equal(got, want) {
		t.Errorf("widths = %v, want %v", got, want)
	}
	if sum := got[0] + got[1] + got[2] + got[3]; math.Abs(sum-ContentWidth) > 1e-9 {
		t.Errorf("the columns span %v, the text %v", sum, ContentWidth)
	}
	if got := widths([]Column{{Width: 30}, {Width: 40}}); !slices.Equal(got, []float64{30, 40}) {
		t.Errorf("fixed widths changed: %v", got)
	}
}
