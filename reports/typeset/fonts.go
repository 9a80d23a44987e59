package typeset

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
)

// SystemFontDirs are where a report looks for a font when its text needs
// characters the PDF core fonts lack (Japanese or Korean labels, say) and no
// font was given: the places Debian's fonts-ipafont-gothic and fonts-nanum
// install to, and the user's own font folders.
var SystemFontDirs = []string{
	"/usr/share/fonts",
	"/usr/local/share/fonts",
	"~/.local/share/fonts",
	"~/.fonts",
}

// preferredFonts are tried first, in order, when looking for a font: Gothic
// (sans-serif) faces, proportional ones first (IPA's ipag.ttf sets Latin
// text like a typewriter), that gofpdf can embed (TrueType outlines in a .ttf, not
// an OpenType/CFF .otf or a .ttc collection) and that cover Japanese or
// Korean. The first that covers every character needed wins; otherwise the
// one covering most.
var preferredFonts = []string{
	"ipagp.ttf", "ipaexg.ttf", "IPAexGothic.ttf", "ipag.ttf", "fonts-japanese-gothic.ttf",
	"TakaoGothic.ttf", "TakaoPGothic.ttf", "VL-Gothic-Regular.ttf", "VL-PGothic-Regular.ttf",
	"NanumGothic.ttf", "NanumBarunGothic.ttf", "UnDotum.ttf",
	"DroidSansFallbackFull.ttf", "DroidSansFallback.ttf", "wqy-microhei.ttf",
}

// UTF8Typeface names the loaded font in the figures' font cache; Canvas
// recognises it to set the text in the PDF's embedded font.
const UTF8Typeface = "sbench-utf8"

// pdfUTF8Family is the loaded font's family name in the PDF.
const pdfUTF8Family = "sbenchutf8"

// Font is a TrueType font embedded in the report for text the core
// fonts cannot show.
type Font struct {
	path string
	data []byte
	otf  *opentype.Font
	buf  sfnt.Buffer
}

// FontError is a font given with WithFont that cannot be used: the user's
// mistake, which the CLI reports as such.
type FontError struct {
	Path string
	Err  error
}

func (e *FontError) Error() string { return "font " + e.Path + ": " + e.Err.Error() }

func (e *FontError) Unwrap() error { return e.Err }

const fontHint = "give a TrueType .ttf file, e.g. ipagp.ttf from fonts-ipafont-gothic or NanumGothic.ttf from fonts-nanum"

func LoadFont(path string) (*Font, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &FontError{path, err}
	}
	if len(data) >= 4 && string(data[:4]) == "ttcf" {
		return nil, &FontError{path, errors.New("a TrueType collection (.ttc) cannot be embedded; " + fontHint)}
	}
	if len(data) >= 4 && string(data[:4]) == "OTTO" {
		return nil, &FontError{path, errors.New("OpenType fonts with CFF outlines (.otf) cannot be embedded; " + fontHint)}
	}
	otf, err := opentype.Parse(data)
	if err != nil {
		return nil, &FontError{path, fmt.Errorf("%w; %s", err, fontHint)}
	}
	f := &Font{path: path, data: data, otf: otf}
	if !f.Has('0') || !f.Has('a') {
		return nil, &FontError{path, errors.New("has no Unicode map for Latin letters and digits")}
	}
	return f, nil
}

// Path is the file the font was read from.
func (f *Font) Path() string { return f.path }

// Has reports whether the font has a glyph for r.
func (f *Font) Has(r rune) bool {
	i, err := f.otf.GlyphIndex(&f.buf, r)
	return err == nil && i != 0
}

// fontCache is the figures' font cache with the loaded font taking the
// place of every Liberation face, so that gonum measures text with the
// font the PDF sets it in.
func (f *Font) FontCache() *font.Cache {
	coll := font.Collection{{Font: font.Font{Typeface: UTF8Typeface}, Face: f.otf}}
	for _, face := range liberation.Collection() {
		fnt := face.Font
		fnt.Typeface = UTF8Typeface
		coll = append(coll, font.Face{Font: fnt, Face: f.otf})
	}
	return font.NewCache(coll)
}

// NeedsFont lists, sorted, the characters of text that the core fonts
// cannot show. Control characters and U+FFFD (what invalid UTF-8 in a tool's
// output decodes to) do not count: no font would show them either.
func NeedsFont(texts func(yield func(string))) []rune {
	table := cp1252Table()
	set := map[rune]bool{}
	texts(func(s string) {
		for _, r := range s {
			if r < 0x80 || r == unicode.ReplacementChar || unicode.IsControl(r) || !unicode.IsPrint(r) {
				continue
			}
			if _, ok := table[r]; ok {
				continue
			}
			if _, ok := transliterations[r]; !ok {
				set[r] = true
			}
		}
	})
	return slices.Sorted(maps.Keys(set))
}

// FindFont looks in dirs for a TrueType font covering the runes: the
// preferred fonts first, then any .ttf. It returns the path of the first
// font covering them all, else the one covering most (and how many it
// misses), or "" when no font covers any.
func FindFont(dirs []string, runes []rune) (path string, missing int) {
	if len(runes) == 0 {
		return "", 0
	}
	found := map[string]string{} // base name -> first path
	var all []string
	for _, dir := range dirs {
		if strings.HasPrefix(dir, "~/") {
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			dir = filepath.Join(home, dir[2:])
		}
		filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil // an unreadable folder is no reason to stop
			}
			if !e.IsDir() && strings.EqualFold(filepath.Ext(p), ".ttf") {
				all = append(all, p)
				if _, ok := found[e.Name()]; !ok {
					found[e.Name()] = p
				}
			}
			return nil
		})
	}
	var order []string
	seen := map[string]bool{}
	for _, name := range preferredFonts {
		if p, ok := found[name]; ok && !seen[p] {
			order, seen[p] = append(order, p), true
		}
	}
	slices.Sort(all)
	for _, p := range all {
		if !seen[p] {
			order, seen[p] = append(order, p), true
		}
	}
	best, bestMissing := "", len(runes)
	for _, p := range order {
		m, err := fontMisses(p, runes)
		if err != nil {
			continue
		}
		if m == 0 {
			return p, 0
		}
		if m < bestMissing {
			best, bestMissing = p, m
		}
	}
	return best, bestMissing
}

// fontMisses counts the runes the font file at p has no glyph for, reading
// only its tables, not the whole file.
func fontMisses(p string, runes []rune) (int, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var head [4]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return 0, err
	}
	if string(head[:]) == "ttcf" || string(head[:]) == "OTTO" {
		return 0, errors.New("not embeddable")
	}
	sf, err := sfnt.ParseReaderAt(f)
	if err != nil {
		return 0, err
	}
	var buf sfnt.Buffer
	n := 0
	for _, r := range runes {
		if i, err := sf.GlyphIndex(&buf, r); err != nil || i == 0 {
			n++
		}
	}
	return n, nil
}
