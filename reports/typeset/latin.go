package typeset

import (
	"maps"
	"slices"
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

// transliterations write the symbols tools and checks print most (HPL's
// "≥" in a failed residual check, arrows between nodes) with the
// characters Windows-1252 has, so that they need no embedded font.
var transliterations = map[rune]string{
	'≥': ">=", '≤': "<=", '≠': "!=", '≈': "~", '−': "-", '→': "->", '←': "<-",
	'↔': "<->", '⇒': "=>", '∞': "inf", '√': "sqrt", '✓': "ok", '✔': "ok", '✗': "x", '✘': "x",
	'µ': "u", '‐': "-", '‑': "-", '‒': "-", '⁄': "/", '∗': "*", '∼': "~", '\u00A0': " ", '\u2009': " ", '\u202F': " ",
}

// lookalikes stand in for characters a CJK font may lack with ones it
// usually has: IPA Gothic has the Greek mu but not the micro sign.
var lookalikes = map[rune]rune{'µ': 'μ', '\u00A0': ' ', '·': '・', '•': '・'}

// latin encodes UTF-8 text for the font the PDF sets it in and remembers
// what it could not encode, so the report can say that characters were
// replaced instead of showing garbage (or empty boxes) without a word. With
// the core fonts, text is written in Windows-1252; with an embedded
// TrueType font (utf8 set), it stays UTF-8 and only the characters the font
// has no glyph for are replaced.
type latin struct {
	table    map[rune]byte
	utf8     *Font
	replaced map[rune]int
}

// newEncoder encodes for the embedded font f, or for the core fonts when f
// is nil.
func newEncoder(f *Font) *latin {
	return &latin{table: cp1252Table(), utf8: f, replaced: make(map[rune]int)}
}

// encode returns s as the current fonts need it. A rune they cannot show
// becomes '?'; line breaks and tabs become spaces and other control
// characters are dropped, because every caller draws a single line.
func (l *latin) encode(s string) string {
	if l.utf8 != nil {
		return l.encodeUTF8(s)
	}
	return l.encodeCP1252(s)
}

// fits reports whether s can be set in the core fonts as it is.
func (l *latin) fits(s string) bool {
	for _, r := range s {
		if r < 0x80 {
			continue
		}
		if _, ok := l.table[r]; !ok {
			return false
		}
	}
	return true
}

func (l *latin) encodeUTF8(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7F:
		case r < 0x80:
			b.WriteRune(r)
		case l.utf8.Has(r):
			b.WriteRune(r)
		case lookalikes[r] != 0 && l.utf8.Has(lookalikes[r]):
			b.WriteRune(lookalikes[r])
		case transliterations[r] != "":
			b.WriteString(transliterations[r])
		default:
			l.replaced[r]++
			b.WriteByte('?')
		}
	}
	return b.String()
}

// encodeCP1252 returns s in Windows-1252, for the core fonts.
func (l *latin) encodeCP1252(s string) string {
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
			if t, ok := transliterations[r]; ok {
				b = append(b, t...)
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
	rs := slices.Sorted(maps.Keys(l.replaced))
	if len(rs) > max {
		rs = rs[:max]
	}
	return rs
}
