// Package typeset sets a document on A4 pages with gofpdf: headings,
// wrapped paragraphs, bullets, tables whose header repeats on every page
// they span, boxed warnings, key-value facts, quoted text, and gonum/plot
// figures drawn as vector graphics (Canvas). Text is set in the PDF core
// fonts, or in an embedded TrueType font (Font) when it needs more than
// Windows-1252. It knows nothing of benchmarks: package reports says what
// goes on the pages.
package typeset

import (
	"fmt"
	"image/color"
	"io"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jung-kurt/gofpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Page geometry, in points (the document's unit): A4 with 15 mm margins.
const (
	PageWidth    = 595.28
	PageHeight   = 841.89
	Margin       = 42.52
	ContentWidth = PageWidth - 2*Margin
	ContentTop   = Margin
	// ContentBottom leaves room for the footer line.
	ContentBottom = PageHeight - Margin - 12
)

// Type sizes in the document.
const (
	BodySize  = 10
	SmallSize = 9
	H1Size    = 16
	H2Size    = 12.5
)

// MonoSize is the type size of quoted text (Mono).
const MonoSize = 8

// Colours of text, as RGB.
var (
	Black    = [3]int{0, 0, 0}
	Grey     = [3]int{90, 90, 90}
	Red      = [3]int{190, 0, 0}
	ruleGrey = [3]int{200, 200, 200}
	headFill = [3]int{232, 232, 232}
)

// Document is the PDF being written and the cursor on its current page.
type Document struct {
	pdf *gofpdf.Fpdf
	enc *latin
	y   float64 // top of the free space on the current page
	// noteY is where the title page keeps room for a late note.
	noteY float64
	// utf8 is the embedded font all text is set in, nil for the core fonts.
	utf8 *Font
}

// Font families of the document's text.
const (
	sansFamily = "Helvetica"
	monoFamily = "Courier"
)

// New starts a document by producer (its footer reads "producer report"),
// dated date, compressed or not, its text set in f (nil: the core fonts).
// The same content and date give the same bytes.
func New(producer string, date time.Time, compress bool, f *Font) *Document {
	pdf := gofpdf.New("P", "pt", "A4", "")
	pdf.SetCompression(compress)
	// Same content, same bytes: fixed dates and sorted resource catalogues.
	pdf.SetCatalogSort(true)
	pdf.SetCreationDate(date)
	pdf.SetModificationDate(date)
	pdf.SetProducer(producer, true)
	pdf.SetCreator(producer, true)
	pdf.SetMargins(Margin, Margin, Margin)
	// Page breaks are ours: tables repeat their header, figures never split.
	pdf.SetAutoPageBreak(false, 0)
	pdf.AliasNbPages("{nb}")
	doc := &Document{pdf: pdf, enc: newEncoder(f), utf8: f}
	if f != nil {
		pdf.AddUTF8FontFromBytes(pdfUTF8Family, "", f.data)
	}
	pdf.SetFooterFunc(func() {
		doc.setFont(sansFamily, "", SmallSize)
		pdf.SetTextColor(Grey[0], Grey[1], Grey[2])
		left := doc.enc.encode(producer + " report")
		right := fmt.Sprintf("page %d of {nb}", pdf.PageNo())
		y := PageHeight - Margin + 4
		pdf.Text(Margin, y, left)
		pdf.Text(PageWidth-Margin-pdf.GetStringWidth(right), y, right)
		pdf.SetTextColor(0, 0, 0)
	})
	return doc
}

func (d *Document) Output(w io.Writer) (int64, error) {
	if err := d.pdf.Error(); err != nil {
		return 0, fmt.Errorf("write report: %w", err)
	}
	cw := &countingWriter{w: w}
	if err := d.pdf.Output(cw); err != nil {
		return cw.n, fmt.Errorf("write report: %w", err)
	}
	return cw.n, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (d *Document) NewPage() {
	d.pdf.AddPage()
	d.y = ContentTop
}

// need starts a new page unless h points are left on this one.
func (d *Document) Need(h float64) {
	if d.pdf.PageNo() == 0 || d.y+h > ContentBottom {
		d.NewPage()
	}
}

func (d *Document) font(style string, size float64, c [3]int) {
	d.setFont(sansFamily, style, size)
	d.pdf.SetTextColor(c[0], c[1], c[2])
}

// setFont selects a core font, or the embedded font when the report has
// one. The embedded font is registered in its regular style only (each
// style would be parsed and embedded again), so bold and italic text in it
// is told apart by size and colour alone; strike-through ("S") still works.
func (d *Document) setFont(family, style string, size float64) {
	if d.utf8 != nil {
		strike := ""
		if strings.Contains(style, "S") {
			strike = "S"
		}
		d.pdf.SetFont(pdfUTF8Family, strike, size)
		return
	}
	d.pdf.SetFont(family, style, size)
}

// ellipsis is "…" in the current text encoding.
func (d *Document) ellipsis() string {
	if d.utf8 != nil {
		return "…"
	}
	return "\x85" // … in Windows-1252
}

// heading writes a section heading and reserves room for keep points of
// what follows, so a heading is never the last line of a page.
func (d *Document) Heading(text string, size, keep float64) {
	lead := size * 1.6
	d.Need(lead + keep)
	if d.y > ContentTop {
		d.y += size * 0.6
	}
	d.font("B", size, Black)
	d.pdf.Text(Margin, d.y+size, d.fit(d.enc.encode(text), ContentWidth))
	d.y += lead
}

// Para writes text wrapped to the text width, breaking pages between
// lines; maxLines > 0 cuts it short with a count of what was left out.
func (d *Document) Para(text, style string, size float64, c [3]int, maxLines int) {
	d.paraAt(Margin, ContentWidth, text, sansFamily, style, size, c, maxLines)
}

// PDF is the document's gofpdf, for a caller's own drawing on the page
// (in the document's units, points).
func (d *Document) PDF() *gofpdf.Fpdf { return d.pdf }

// Space leaves h points below the cursor.
func (d *Document) Space(h float64) { d.y += h }

// PageUnlessRoom starts a new page unless h points are left on this one,
// and leaves gap points if they are.
func (d *Document) PageUnlessRoom(h, gap float64) {
	if d.y+h > ContentBottom {
		d.NewPage()
	} else {
		d.y += gap
	}
}

// Title starts a new page with a title in large bold type, a third down.
func (d *Document) Title(text string) {
	d.NewPage()
	d.y = 96
	d.font("B", 22, Black)
	for _, l := range d.wrap(text, ContentWidth) {
		d.pdf.Text(Margin, d.y+22, l)
		d.y += 28
	}
	d.y += 8
}

// KeepNoteRoom keeps room for the three lines of LateNote here.
func (d *Document) KeepNoteRoom() {
	d.noteY = d.y
	d.y += 3 * SmallSize * 1.3
}

// ReplacedCount is how many characters the fonts could not show so far
// (printed as '?'), and ReplacedSample up to max of them, in order.
func (d *Document) ReplacedCount() int { return d.enc.replacedCount() }

func (d *Document) ReplacedSample(max int) []rune { return d.enc.replacedSample(max) }

// paraAt writes wrapped text in a column; maxLines > 0 cuts it short with a
// count of what was left out.
func (d *Document) paraAt(x, w float64, text, family, style string, size float64, c [3]int, maxLines int) {
	d.pdf.SetTextColor(c[0], c[1], c[2])
	lines := d.paraLines(w, text, family, style, size, maxLines)
	lead := size * 1.3
	for _, l := range lines {
		d.Need(lead)
		d.pdf.Text(x, d.y+size, l)
		d.y += lead
	}
}

// paraLines is the lines paraAt writes, in the font it selects.
func (d *Document) paraLines(w float64, text, family, style string, size float64, maxLines int) []string {
	d.setFont(family, style, size)
	lines := d.wrap(text, w)
	if maxLines > 0 && len(lines) > maxLines {
		more := len(lines) - maxLines + 1
		lines = append(lines[:maxLines-1], fmt.Sprintf("… (%d more lines)", more))
		lines[len(lines)-1] = d.enc.encode(lines[len(lines)-1])
	}
	return lines
}

// paraHeight is the height paraAt takes.
func (d *Document) paraHeight(w float64, text, family, style string, size float64, maxLines int) float64 {
	return float64(len(d.paraLines(w, text, family, style, size, maxLines))) * size * 1.3
}

// wrap encodes text and splits it into lines no wider than w in the current
// font; explicit line breaks are kept.
func (d *Document) wrap(text string, w float64) []string {
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		enc := d.enc.encode(para)
		if strings.TrimSpace(enc) == "" {
			out = append(out, "")
			continue
		}
		out = append(out, d.splitEncoded(enc, w)...)
	}
	return out
}

// splitEncoded breaks one encoded paragraph into lines no wider than w.
func (d *Document) splitEncoded(enc string, w float64) []string {
	if d.utf8 == nil {
		// SplitLines counts the cell margin on both sides; give it back.
		raw := d.pdf.SplitLines([]byte(enc), w+2*d.pdf.GetCellMargin())
		out := make([]string, len(raw))
		for i, l := range raw {
			out[i] = string(l)
		}
		return out
	}
	return wrapRunes(enc, w, d.pdf.GetStringWidth)
}

// wrapRunes breaks UTF-8 text into lines no wider than w, at spaces and
// between CJK characters (Japanese and Korean text often has no spaces to
// break at), and inside a word only when the word alone is wider than a line.
// gofpdf's SplitText would do this but drops the character it breaks
// before in CJK text.
func wrapRunes(s string, w float64, width func(string) float64) []string {
	var lines []string
	var line []rune
	lineW := 0.0
	flush := func() {
		lines = append(lines, strings.TrimRight(string(line), " "))
		line, lineW = line[:0], 0
	}
	for _, tok := range breakTokens(s) {
		tw := width(tok)
		if len(line) > 0 && lineW+tw > w {
			flush()
			tok = strings.TrimLeft(tok, " ")
			tw = width(tok)
		}
		if tw > w { // a word wider than the line: break it anywhere
			for _, r := range tok {
				rw := width(string(r))
				if len(line) > 0 && lineW+rw > w {
					flush()
				}
				line = append(line, r)
				lineW += rw
			}
			continue
		}
		line = append(line, []rune(tok)...)
		lineW += tw
	}
	if len(line) > 0 || len(lines) == 0 {
		flush()
	}
	return lines
}

// breakTokens splits s before each space-led word and around each CJK
// character, so that a line may end between any two tokens.
func breakTokens(s string) []string {
	var toks []string
	start := 0
	prevSpace := false
	for i, r := range s {
		switch {
		case isCJK(r):
			if i > start {
				toks = append(toks, s[start:i])
			}
			toks = append(toks, string(r))
			start = i + len(string(r))
		case r == ' ' && !prevSpace && i > start:
			toks = append(toks, s[start:i])
			start = i
		}
		prevSpace = r == ' '
	}
	if start < len(s) {
		toks = append(toks, s[start:])
	}
	return toks
}

// isCJK reports whether a line may break before or after r: the ideographs,
// kana and hangul of Chinese, Japanese and Korean, and their punctuation.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF)
}

// fit cuts encoded text to width w in the current font, ending it with "…".
func (d *Document) fit(enc string, w float64) string {
	if d.pdf.GetStringWidth(enc) <= w {
		return enc
	}
	return d.cut(enc, w)
}

// cut shortens encoded text until it and a closing "…" fit width w.
func (d *Document) cut(enc string, w float64) string {
	ell, cuts := d.ellipsis(), d.cutPoints(enc)[1:]
	// The width of a prefix grows with its length: binary search for the
	// longest that fits.
	fits := func(k int) bool {
		return d.pdf.GetStringWidth(strings.TrimRight(enc[:cuts[k]], " ")+ell) <= w
	}
	k := sort.Search(len(cuts), func(k int) bool { return !fits(k) })
	if k == 0 {
		return ell
	}
	return strings.TrimRight(enc[:cuts[k-1]], " ") + ell
}

// cutPoints are where encoded text may be cut, from 0 to its length:
// every byte of Windows-1252 text, every rune start of UTF-8.
func (d *Document) cutPoints(enc string) []int {
	var cuts []int
	for i := 0; i <= len(enc); i++ {
		if d.utf8 == nil || i == len(enc) || utf8.RuneStart(enc[i]) {
			cuts = append(cuts, i)
		}
	}
	return cuts
}

// fitMiddle cuts encoded text to width w in the current font by taking
// characters out of its middle, replaced by "…": of
// "local-20261201T110323508-56164d-1.3" the reader keeps what kind of job
// it is and which step, the parts the rows around it differ in.
func (d *Document) fitMiddle(enc string, w float64) string {
	if d.pdf.GetStringWidth(enc) <= w {
		return enc
	}
	ell, cuts := d.ellipsis(), d.cutPoints(enc)
	n := len(cuts) - 1 // characters
	// Keeping k characters, half from each end (the end's half rounded
	// up); the width grows with k, so binary search for the largest that
	// fits.
	text := func(k int) string {
		head := k / 2
		return enc[:cuts[head]] + ell + enc[cuts[n-(k-head)]:]
	}
	k := sort.Search(n, func(k int) bool { return d.pdf.GetStringWidth(text(k+1)) > w })
	if k == 0 {
		return ell
	}
	return text(k)
}

// Column is one column of a table: its title, its width rule and how its
// cells are set.
type Column struct {
	Title string
	// Width is the column's width in points; 0 shares what the columns
	// of a fixed width leave of the text width equally with the other
	// columns of width 0.
	Width float64
	Right bool // align right: numbers
	// Middle keeps the cell on one line, cut in the middle with "…": an
	// identifier whose start and end both matter.
	Middle bool
	// Art marks the column a row's Art draws into.
	Art bool
}

// Swatch is a line style drawn before a row's first cell: the tables' key
// to the figures' colours.
type Swatch struct {
	Color color.RGBA
	Dash  []vg.Length
}

// Row is one row of a table.
type Row struct {
	Cells []string
	Color [3]int
	// Swatch, if set, is drawn before the first cell's text.
	Swatch *Swatch
	// FontStyle is the row's font style ("S" strikes it through), but
	// for column Plain, which stays regular (-1: none).
	FontStyle string
	Plain     int
	// Under is text written under the row in italics indented to the
	// second column, at most UnderLines lines, and ruled off: a failed
	// run's error. KeepUnder keeps it on the row's page.
	Under      string
	UnderLines int
	UnderColor [3]int
	KeepUnder  bool
	// Art draws into the cell of the column marked Art: the box is the
	// cell less its padding.
	Art func(d *Document, x, y, w, h float64)
}

// widths are the columns' widths in points, those of width 0 sharing
// what the others leave of the text width.
func widths(cols []Column) []float64 {
	fixed, shares := 0.0, 0
	for _, c := range cols {
		if c.Width > 0 {
			fixed += c.Width
		} else {
			shares++
		}
	}
	out := make([]float64, len(cols))
	for i, c := range cols {
		out[i] = c.Width
		if c.Width == 0 {
			out[i] = (ContentWidth - fixed) / float64(shares)
		}
	}
	return out
}

// Table draws a table: its header, repeated on every page it spans, and
// its rows, each with what it writes under itself. maxLines bounds a
// cell's lines; 0 means 3.
func (d *Document) Table(cols []Column, maxLines int, rows []*Row) {
	t := &table{d: d, cols: cols, widths: widths(cols), size: SmallSize, rowH: RowHeight, maxLines: maxLines}
	t.header()
	for _, r := range rows {
		after := 0.0
		if r.Under != "" && r.KeepUnder {
			after = t.underHeight(r.Under, r.UnderLines)
		}
		top, h := t.row(r, after)
		if r.Art != nil {
			x := Margin
			for i, c := range cols {
				if c.Art {
					r.Art(d, x+cellPad, top+2, t.widths[i]-2*cellPad, h-4)
				}
				x += t.widths[i]
			}
		}
		if r.Under != "" {
			t.under(r.Under, r.UnderLines, r.UnderColor)
		}
	}
}

// table draws rows with a header that is repeated on every page it spans.
type table struct {
	d      *Document
	cols   []Column
	widths []float64
	size   float64
	rowH   float64
	// maxLines bounds a cell's lines; 0 means maxCellLines.
	maxLines int
}

const cellPad = 3

// RowHeight is the height of a table row of one line.
const RowHeight = SmallSize * 1.55

func (t *table) header() {
	d := t.d
	d.Need(2 * t.rowH)
	d.pdf.SetFillColor(headFill[0], headFill[1], headFill[2])
	d.pdf.Rect(Margin, d.y, ContentWidth, t.rowH, "F")
	d.font("B", t.size, Black)
	titles := make([]string, len(t.cols))
	for i, c := range t.cols {
		titles[i] = c.Title
	}
	t.draw(t.layout(titles, nil, 1), nil, "", -1, Black)
	d.y += t.rowH
}

// maxCellLines bounds a cell's height: a long variant name or host list
// wraps rather than being cut, but a pasted paragraph does not take a page.
const maxCellLines = 3

// row draws one row keeping after points below it on its page, for what
// is written under it: a page break between them would leave the text
// under another page's header. It returns where the row went on its page:
// its top and height.
func (t *table) row(r *Row, after float64) (top, h float64) {
	d := t.d
	d.font("", t.size, r.Color)
	ml := t.maxLines
	if ml == 0 {
		ml = maxCellLines
	}
	lines := t.layout(r.Cells, r.Swatch, ml)
	n := 1
	for _, l := range lines {
		n = max(n, len(l))
	}
	h = t.rowH + float64(n-1)*t.lineH()
	if d.y+h+after > ContentBottom {
		d.NewPage()
		t.header()
		d.font("", t.size, r.Color)
	}
	top = d.y
	t.draw(lines, r.Swatch, r.FontStyle, r.Plain, r.Color)
	d.y += h
	d.rule(d.y)
	return top, h
}

func (t *table) lineH() float64 { return t.size * 1.2 }

// under writes text under the row above, in italics of colour c indented
// to the second column, at most maxLines lines, and rules it off.
func (t *table) under(text string, maxLines int, c [3]int) {
	d, indent := t.d, t.widths[0]+cellPad
	d.y += 1
	d.paraAt(Margin+indent, ContentWidth-indent, text, sansFamily, "I", SmallSize, c, maxLines)
	d.y += 2
	d.rule(d.y)
}

// underHeight is the height under(text, maxLines) takes.
func (t *table) underHeight(text string, maxLines int) float64 {
	indent := t.widths[0] + cellPad
	return 3 + t.d.paraHeight(ContentWidth-indent, text, sansFamily, "I", SmallSize, maxLines)
}

// Numbers in right-aligned columns keep this far from a left-aligned
// neighbour's text.
const numberGap = 6

// textBox is where a cell's text goes: its left edge and width.
func (t *table) textBox(i int, x float64, swatch *Swatch) (float64, float64) {
	tx, w := x+cellPad, t.widths[i]-2*cellPad
	if i == 0 && swatch != nil {
		tx, w = tx+22, w-22
	}
	if t.cols[i].Right {
		w -= numberGap
	}
	return tx, w
}

// layout encodes and wraps each cell to its column in the current font.
func (t *table) layout(cells []string, swatch *Swatch, maxLines int) [][]string {
	d := t.d
	out := make([][]string, len(t.cols))
	x := Margin
	for i := range t.cols {
		if i < len(cells) {
			_, w := t.textBox(i, x, swatch)
			if t.cols[i].Middle {
				out[i] = []string{d.fitMiddle(d.enc.encode(cells[i]), w)}
			} else {
				out[i] = d.wrapCell(cells[i], w, maxLines)
			}
		}
		x += t.widths[i]
	}
	return out
}

func (t *table) draw(lines [][]string, swatch *Swatch, fontStyle string, plain int, c [3]int) {
	d := t.d
	x := Margin
	base := d.y + t.rowH/2 + t.size*0.35
	for i, col := range t.cols {
		if fontStyle != "" {
			if i == plain {
				d.font("", t.size, c)
			} else {
				d.font(fontStyle, t.size, c)
			}
		}
		tx, w := t.textBox(i, x, swatch)
		if i == 0 && swatch != nil {
			d.swatch(tx-22, d.y+t.rowH/2, *swatch)
		}
		for k, l := range lines[i] {
			lx := tx
			if col.Right {
				lx += w - d.pdf.GetStringWidth(l)
			}
			d.pdf.Text(lx, base+float64(k)*t.lineH(), l)
		}
		x += t.widths[i]
	}
}

// wrapCell encodes s and wraps it to width w, in at most maxLines lines, the
// last cut with "…" when more was left.
func (d *Document) wrapCell(s string, w float64, maxLines int) []string {
	enc := d.enc.encode(s)
	if d.pdf.GetStringWidth(enc) <= w || maxLines <= 1 {
		return []string{d.fit(enc, w)}
	}
	raw := d.splitEncoded(enc, w)
	lines := make([]string, 0, len(raw))
	for _, l := range raw {
		lines = append(lines, strings.TrimSpace(l))
	}
	if len(lines) > maxLines {
		lines = lines[:maxLines]
		lines[maxLines-1] = d.cut(lines[maxLines-1], w)
	}
	return lines
}

// swatch draws a configuration's line style, 18 pt long, centred on y: the
// tables' key to the figures' colours.
func (d *Document) swatch(x, y float64, s Swatch) {
	d.pdf.SetDrawColor(int(s.Color.R), int(s.Color.G), int(s.Color.B))
	d.pdf.SetLineWidth(1.5)
	dash := make([]float64, len(s.Dash))
	for i, l := range s.Dash {
		dash[i] = l.Points()
	}
	d.pdf.SetDashPattern(dash, 0)
	d.pdf.Line(x, y, x+18, y)
	d.pdf.SetDashPattern(nil, 0)
	d.pdf.SetLineWidth(0.5)
	d.pdf.SetDrawColor(0, 0, 0)
}

// Rule draws a thin line across the text width dy below the cursor.
func (d *Document) Rule(dy float64) { d.rule(d.y + dy) }

// rule draws a thin line across the text width at y.
func (d *Document) rule(y float64) {
	d.pdf.SetDrawColor(ruleGrey[0], ruleGrey[1], ruleGrey[2])
	d.pdf.SetLineWidth(0.4)
	d.pdf.Line(Margin, y, Margin+ContentWidth, y)
	d.pdf.SetDrawColor(0, 0, 0)
}

// bullet writes one bulleted paragraph.
func (d *Document) Bullet(text string, c [3]int) {
	d.Need(BodySize * 1.3)
	d.font("", BodySize, c)
	d.pdf.Text(Margin+2, d.y+BodySize, d.enc.encode("•"))
	d.paraAt(Margin+14, ContentWidth-14, text, sansFamily, "", BodySize, c, 0)
	d.y += 3
}

// warningBox draws a red-framed box with a bold first line and the items
// below it.
func (d *Document) WarningBox(head string, items []string) {
	const pad = 6
	w := ContentWidth - 2*pad
	d.setFont(sansFamily, "B", BodySize)
	headLines := d.wrap(head, w)
	d.setFont(sansFamily, "", SmallSize)
	var itemLines [][]string
	n := 0
	for _, it := range items {
		ls := d.wrap("• "+it, w-8)
		itemLines = append(itemLines, ls)
		n += len(ls)
	}
	h := 2*pad + float64(len(headLines))*BodySize*1.3 + float64(n)*SmallSize*1.3 + 2
	d.Need(h + 4)
	d.pdf.SetDrawColor(Red[0], Red[1], Red[2])
	d.pdf.SetFillColor(253, 240, 238)
	d.pdf.SetLineWidth(1)
	d.pdf.Rect(Margin, d.y, ContentWidth, h, "FD")
	d.pdf.SetLineWidth(0.5)
	d.pdf.SetDrawColor(0, 0, 0)
	y := d.y + pad
	d.font("B", BodySize, Red)
	for _, l := range headLines {
		d.pdf.Text(Margin+pad, y+BodySize, l)
		y += BodySize * 1.3
	}
	y += 2
	d.font("", SmallSize, Red)
	for _, ls := range itemLines {
		for k, l := range ls {
			x := Margin + pad
			if k > 0 {
				x += 8
			}
			d.pdf.Text(x, y+SmallSize, l)
			y += SmallSize * 1.3
		}
	}
	d.y += h + 8
}

// fact writes one "Key: value" line, the value wrapped under itself.
func (d *Document) Fact(k, v string, c [3]int) {
	const keyW = 64
	d.Need(SmallSize * 1.35)
	d.font("B", SmallSize, Grey)
	d.pdf.Text(Margin, d.y+SmallSize, d.enc.encode(k))
	if v == "" {
		d.y += SmallSize * 1.35
		return
	}
	d.paraAt(Margin+keyW, ContentWidth-keyW, v, sansFamily, "", SmallSize, c, 6)
}

// mono quotes lines of a tool's output in a monospaced font: the first head
// lines and, when tail > 0, the last tail, with a count of what is left
// out between them. Long lines are cut to the width with "…". A line the
// core fonts cannot show is set in the embedded font, when there is one.
func (d *Document) Mono(lines []string, head, tail int, c [3]int) {
	lines = CutLines(lines, head, tail)
	const indent = 8
	lead := MonoSize * 1.22
	for _, l := range lines {
		d.Need(lead)
		l = expandTabs(l)
		var enc string
		if d.utf8 != nil && !d.enc.fits(l) {
			d.pdf.SetFont(pdfUTF8Family, "", MonoSize)
			enc = d.enc.encode(l)
		} else {
			d.pdf.SetFont(monoFamily, "", MonoSize)
			enc = d.enc.encodeCP1252(l)
		}
		d.pdf.SetTextColor(c[0], c[1], c[2])
		d.pdf.Text(Margin+indent, d.y+MonoSize, d.fit(enc, ContentWidth-indent))
		d.y += lead
	}
	d.y += 3
}

// plot draws p at the cursor, w×h points. A drawing error stays in the
// Document and is returned when it is written.
func (d *Document) Plot(p *plot.Plot, w, h float64) {
	d.Need(h)
	c := newCanvas(d.pdf, d.enc, Margin, d.y, w, h)
	p.Draw(draw.New(c))
	c.Close()
	d.y += h + 4
}

// lateNote writes text in the room the first page keeps for a note known
// only once everything is drawn (noteY), in bold red, at most 3 lines.
func (d *Document) LateNote(text string) {
	last := d.pdf.PageNo()
	d.pdf.SetPage(1)
	// Page 1's stream ends in whatever font it last used, not the one
	// gofpdf now believes current: SetFontSize writes gofpdf's current
	// font, so the two agree again before the note (see Canvas.Close).
	fontPt, _ := d.pdf.GetFontSize()
	d.pdf.SetFontSize(fontPt)
	d.y = d.noteY
	d.paraAt(Margin, ContentWidth, text, sansFamily, "B", SmallSize, Red, 3)
	d.pdf.SetPage(last)
}

// CutLines keeps the first head lines and, when tail > 0, the last tail
// of lines (less blank ones at either end), with a line counting what is
// left out between them.
func CutLines(lines []string, head, tail int) []string {
	lines = TrimBlank(lines)
	if len(lines) > head+tail+1 {
		omitted := len(lines) - head - tail
		s := "s"
		if omitted == 1 {
			s = ""
		}
		cut := append(append([]string(nil), lines[:head]...), fmt.Sprintf("… (%d line%s left out) …", omitted, s))
		lines = append(cut, lines[len(lines)-tail:]...)
	}
	return lines
}

func TrimBlank(lines []string) []string {
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(l, " \t\r")
	}
	return out
}

// expandTabs replaces tabs by spaces to the next multiple of 8 columns, as
// a terminal shows them, so tool tables stay aligned.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}
