package reports

import (
	"sort"
	"strings"
	"sync"

	"github.com/jung-kurt/gofpdf"
)

// cp1252Table maps the runes above ASCII that the core fonts can show to
// their Windows-1252 byte. It is built from gofpdf's own translator (so the
// PDF and our idea of "supported" cannot disagree) by feeding it every rune
// of the BMP's lower part once: the translator writes '.' for a rune it
// cannot map and gives no other sign, which is why we probe instead of
// calling it on report text.
var cp1252Table = sync.OnceValue(func() map[rune]byte {
	const last = 0x2FFF // cp1252's highest mapping is U+2122 (™)
	var probe strings.Builder
	for r := rune(0x80); r <= last; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			probe.WriteRune(' ') // surrogates are not runes; keep positions aligned
			continue
		}
		probe.WriteRune(r)
	}
	tr := gofpdf.New("P", "pt", "A4", "").UnicodeTranslatorFromDescriptor("")
	out := tr(probe.String())
	m := make(map[rune]byte)
	for i := 0; i < len(out); i++ {
		if r := rune(0x80 + i); out[i] != '.' && (r < 0xD800 || r > 0xDFFF) {
			m[r] = out[i]
		}
	}
	return m
})

// latin encodes UTF-8 text for the core fonts and remembers what it could
// not encode, so the report can say that characters were replaced instead of
// showing garbage without a word.
type latin struct {
	table    map[rune]byte
	replaced map[rune]int
}

func newLatin() *latin {
	return &latin{table: cp1252Table(), replaced: make(map[rune]int)}
}

// encode returns s in Windows-1252. A rune outside it becomes '?'; line
// breaks and tabs become spaces and other control characters are dropped,
// because every caller draws a single line.
func (l *latin) encode(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b = append(b, ' ')
		case r < 0x20 || r == 0x7F:
			// drop: no glyph, and some break the PDF string syntax of viewers
		case r < 0x80:
			b = append(b, byte(r))
		default:
			if c, ok := l.table[r]; ok {
				b = append(b, c)
				continue
			}
			l.replaced[r]++
			b = append(b, '?')
		}
	}
	return string(b)
}

// replacedCount is how many characters were replaced so far.
func (l *latin) replacedCount() int {
	n := 0
	for _, c := range l.replaced {
		n += c
	}
	return n
}

// replacedSample returns up to max distinct replaced runes, in rune order,
// for a note that shows the reader what went missing.
func (l *latin) replacedSample(max int) []rune {
	rs := make([]rune, 0, len(l.replaced))
	for r := range l.replaced {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	if len(rs) > max {
		rs = rs[:max]
	}
	return rs
}
