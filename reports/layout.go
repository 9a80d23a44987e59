package reports

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jung-kurt/gofpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
)

// Page geometry, in points (the document's unit): A4 with 15 mm margins.
const (
	pageWidth    = 595.28
	pageHeight   = 841.89
	margin       = 42.52
	contentWidth = pageWidth - 2*margin
	contentTop   = margin
	// contentBottom leaves room for the footer line.
	contentBottom = pageHeight - margin - 12
)

// Type sizes in the document.
const (
	bodySize  = 10
	smallSize = 9
	h1Size    = 16
	h2Size    = 12.5
)

var (
	black     = [3]int{0, 0, 0}
	grey      = [3]int{90, 90, 90}
	ruleGrey  = [3]int{200, 200, 200}
	headFill  = [3]int{232, 232, 232}
	failedRed = [3]int{190, 0, 0}
)

// document is the PDF being written and the cursor on its current page.
type document struct {
	pdf *gofpdf.Fpdf
	enc *latin
	y   float64 // top of the free space on the current page
	// noteY is where the title page keeps room for a late note.
	noteY float64
	// utf8 is the embedded font all text is set in, nil for the core fonts.
	utf8 *utf8Font
}

// Font families of the document's text.
const (
	sansFamily = "Helvetica"
	monoFamily = "Courier"
)

func newDocument(d Data, o options, f *utf8Font) *document {
	pdf := gofpdf.New("P", "pt", "A4", "")
	pdf.SetCompression(o.compress)
	// Same Data, same bytes: fixed dates and sorted resource catalogues.
	pdf.SetCatalogSort(true)
	pdf.SetCreationDate(d.Generated)
	pdf.SetModificationDate(d.Generated)
	producer := "sbench"
	if d.Version != "" {
		producer += " " + d.Version
	}
	pdf.SetProducer(producer, true)
	pdf.SetCreator(producer, true)
	pdf.SetMargins(margin, margin, margin)
	// Page breaks are ours: tables repeat their header, figures never split.
	pdf.SetAutoPageBreak(false, 0)
	pdf.AliasNbPages("{nb}")
	doc := &document{pdf: pdf, enc: newEncoder(f), utf8: f}
	if f != nil {
		pdf.AddUTF8FontFromBytes(pdfUTF8Family, "", f.data)
	}
	pdf.SetFooterFunc(func() {
		doc.setFont(sansFamily, "", smallSize)
		pdf.SetTextColor(grey[0], grey[1], grey[2])
		left := doc.enc.encode(producer + " report")
		right := fmt.Sprintf("page %d of {nb}", pdf.PageNo())
		y := pageHeight - margin + 4
		pdf.Text(margin, y, left)
		pdf.Text(pageWidth-margin-pdf.GetStringWidth(right), y, right)
		pdf.SetTextColor(0, 0, 0)
	})
	return doc
}

func (d *document) output(w io.Writer) (int64, error) {
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

func (d *document) newPage() {
	d.pdf.AddPage()
	d.y = contentTop
}

// need starts a new page unless h points are left on this one.
func (d *document) need(h float64) {
	if d.pdf.PageNo() == 0 || d.y+h > contentBottom {
		d.newPage()
	}
}

func (d *document) font(style string, size float64, c [3]int) {
	d.setFont(sansFamily, style, size)
	d.pdf.SetTextColor(c[0], c[1], c[2])
}

// setFont selects a core font, or the embedded font when the report has
// one. The embedded font is registered in its regular style only (each
// style would be parsed and embedded again), so bold and italic text in it
// is told apart by size and colour alone; strike-through ("S") still works.
func (d *document) setFont(family, style string, size float64) {
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
func (d *document) ellipsis() string {
	if d.utf8 != nil {
		return "…"
	}
	return "\x85" // … in Windows-1252
}

// heading writes a section heading and reserves room for keep points of
// what follows, so a heading is never the last line of a page.
func (d *document) heading(text string, size, keep float64) {
	lead := size * 1.6
	d.need(lead + keep)
	if d.y > contentTop {
		d.y += size * 0.6
	}
	d.font("B", size, black)
	d.pdf.Text(margin, d.y+size, d.fit(d.enc.encode(text), contentWidth))
	d.y += lead
}

// para writes text wrapped to the text width, breaking pages between lines.
func (d *document) para(text, style string, size float64, c [3]int) {
	d.paraAt(margin, contentWidth, text, sansFamily, style, size, c, 0)
}

// paraAt writes wrapped text in a column; maxLines > 0 cuts it short with a
// count of what was left out.
func (d *document) paraAt(x, w float64, text, family, style string, size float64, c [3]int, maxLines int) {
	d.pdf.SetTextColor(c[0], c[1], c[2])
	lines := d.paraLines(w, text, family, style, size, maxLines)
	lead := size * 1.3
	for _, l := range lines {
		d.need(lead)
		d.pdf.Text(x, d.y+size, l)
		d.y += lead
	}
}

// paraLines is the lines paraAt writes, in the font it selects.
func (d *document) paraLines(w float64, text, family, style string, size float64, maxLines int) []string {
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
func (d *document) paraHeight(w float64, text, family, style string, size float64, maxLines int) float64 {
	return float64(len(d.paraLines(w, text, family, style, size, maxLines))) * size * 1.3
}

// wrap encodes text and splits it into lines no wider than w in the current
// font; explicit line breaks are kept.
func (d *document) wrap(text string, w float64) []string {
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
func (d *document) splitEncoded(enc string, w float64) []string {
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
func (d *document) fit(enc string, w float64) string {
	if d.pdf.GetStringWidth(enc) <= w {
		return enc
	}
	return d.cut(enc, w)
}

// cut shortens encoded text until it and a closing "…" fit width w.
func (d *document) cut(enc string, w float64) string {
	ell := d.ellipsis()
	// Cut points: every byte of Windows-1252 text, every rune start of UTF-8.
	var cuts []int
	for i := 1; i <= len(enc); i++ {
		if d.utf8 == nil || i == len(enc) || utf8.RuneStart(enc[i]) {
			cuts = append(cuts, i)
		}
	}
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

// fitMiddle cuts encoded text to width w in the current font by taking
// characters out of its middle, replaced by "…": of
// "local-20261201T110323508-56164d-1.3" the reader keeps what kind of job
// it is and which step, the parts the rows around it differ in.
func (d *document) fitMiddle(enc string, w float64) string {
	if d.pdf.GetStringWidth(enc) <= w {
		return enc
	}
	// Cut points: every byte of Windows-1252 text, every rune start of UTF-8.
	var cuts []int
	for i := 0; i <= len(enc); i++ {
		if d.utf8 == nil || i == len(enc) || utf8.RuneStart(enc[i]) {
			cuts = append(cuts, i)
		}
	}
	ell := d.ellipsis()
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

// column is one column of a table.
type column struct {
	title string
	width float64
	right bool // align right: numbers
	// middle keeps the cell on one line, cut in the middle with "…": an
	// identifier whose start and end both matter.
	middle bool
	// art marks the column a row's art draws into.
	art bool
}

// table draws rows with a header that is repeated on every page it spans.
type table struct {
	d    *document
	cols []column
	size float64
	rowH float64
	// maxLines bounds a cell's lines; 0 means maxCellLines.
	maxLines int
}

const cellPad = 3

// rowHeight is the height of a table row of one line.
const rowHeight = smallSize * 1.55

func (d *document) table(cols []column) *table {
	return &table{d: d, cols: cols, size: smallSize, rowH: rowHeight}
}

func (t *table) header() {
	d := t.d
	d.need(2 * t.rowH)
	d.pdf.SetFillColor(headFill[0], headFill[1], headFill[2])
	d.pdf.Rect(margin, d.y, contentWidth, t.rowH, "F")
	d.font("B", t.size, black)
	lines := t.layout(t.titles(), nil, 1)
	t.draw(lines, nil)
	d.y += t.rowH
}

func (t *table) titles() []string {
	s := make([]string, len(t.cols))
	for i, c := range t.cols {
		s[i] = c.title
	}
	return s
}

// maxCellLines bounds a cell's height: a long variant name or host list
// wraps rather than being cut, but a pasted paragraph does not take a page.
const maxCellLines = 3

// row draws one row; swatch, if set, is drawn before the first cell's text.
// It returns where the row went on its page: its top and height, for a
// caller that draws into a cell.
func (t *table) row(cells []string, c [3]int, swatch *style) (top, h float64) {
	return t.rowStyled(cells, c, swatch, "", -1)
}

// rowStyled draws one row in a font style ("S" strikes the text through)
// except for column plain, which stays in the regular style.
func (t *table) rowStyled(cells []string, c [3]int, swatch *style, fontStyle string, plain int) (top, h float64) {
	return t.rowKeeping(cells, c, swatch, fontStyle, plain, 0)
}

// rowKeeping is rowStyled keeping after points below the row on its page,
// for what the caller writes under it (a failed run's error): a page
// break between them would leave the text under another page's header.
func (t *table) rowKeeping(cells []string, c [3]int, swatch *style, fontStyle string, plain int, after float64) (top, h float64) {
	d := t.d
	d.font("", t.size, c)
	ml := t.maxLines
	if ml == 0 {
		ml = maxCellLines
	}
	lines := t.layout(cells, swatch, ml)
	n := 1
	for _, l := range lines {
		n = max(n, len(l))
	}
	h = t.rowH + float64(n-1)*t.lineH()
	if d.y+h+after > contentBottom {
		d.newPage()
		t.header()
		d.font("", t.size, c)
	}
	top = d.y
	t.drawStyled(lines, swatch, fontStyle, plain, c)
	d.y += h
	d.rule(d.y)
	return top, h
}

func (t *table) lineH() float64 { return t.size * 1.2 }

// failure writes why the row above failed, in red italics indented to the
// second column, at most maxLines lines, and rules it off.
func (t *table) failure(text string, maxLines int) { t.under(text, maxLines, failedRed) }

// under writes text under the row above, in italics of colour c indented
// to the second column, at most maxLines lines, and rules it off: a
// failed run's error, an ok run's note.
func (t *table) under(text string, maxLines int, c [3]int) {
	d, indent := t.d, t.cols[0].width+cellPad
	d.y += 1
	d.paraAt(margin+indent, contentWidth-indent, text, sansFamily, "I", smallSize, c, maxLines)
	d.y += 2
	d.rule(d.y)
}

// failureHeight is the height failure(text, maxLines) takes, for
// rowKeeping to keep it on the row's page.
func (t *table) failureHeight(text string, maxLines int) float64 {
	indent := t.cols[0].width + cellPad
	return 3 + t.d.paraHeight(contentWidth-indent, text, sansFamily, "I", smallSize, maxLines)
}

// Numbers in right-aligned columns keep this far from a left-aligned
// neighbour's text.
const numberGap = 6

// textBox is where a cell's text goes: its left edge and width.
func (t *table) textBox(i int, x float64, swatch *style) (float64, float64) {
	tx, w := x+cellPad, t.cols[i].width-2*cellPad
	if i == 0 && swatch != nil {
		tx, w = tx+22, w-22
	}
	if t.cols[i].right {
		w -= numberGap
	}
	return tx, w
}

// layout encodes and wraps each cell to its column in the current font.
func (t *table) layout(cells []string, swatch *style, maxLines int) [][]string {
	d := t.d
	out := make([][]string, len(t.cols))
	x := margin
	for i := range t.cols {
		if i < len(cells) {
			_, w := t.textBox(i, x, swatch)
			if t.cols[i].middle {
				out[i] = []string{d.fitMiddle(d.enc.encode(cells[i]), w)}
			} else {
				out[i] = d.wrapCell(cells[i], w, maxLines)
			}
		}
		x += t.cols[i].width
	}
	return out
}

func (t *table) draw(lines [][]string, swatch *style) {
	t.drawStyled(lines, swatch, "", -1, black)
}

func (t *table) drawStyled(lines [][]string, swatch *style, fontStyle string, plain int, c [3]int) {
	d := t.d
	x := margin
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
			if col.right {
				lx += w - d.pdf.GetStringWidth(l)
			}
			d.pdf.Text(lx, base+float64(k)*t.lineH(), l)
		}
		x += col.width
	}
}

// wrapCell encodes s and wraps it to width w, in at most maxLines lines, the
// last cut with "…" when more was left.
func (d *document) wrapCell(s string, w float64, maxLines int) []string {
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
func (d *document) swatch(x, y float64, s style) {
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

// rule draws a thin line across the text width.
func (d *document) rule(y float64) {
	d.pdf.SetDrawColor(ruleGrey[0], ruleGrey[1], ruleGrey[2])
	d.pdf.SetLineWidth(0.4)
	d.pdf.Line(margin, y, margin+contentWidth, y)
	d.pdf.SetDrawColor(0, 0, 0)
}

// bullet writes one bulleted paragraph.
func (d *document) bullet(text string, c [3]int) {
	d.need(bodySize * 1.3)
	d.font("", bodySize, c)
	d.pdf.Text(margin+2, d.y+bodySize, d.enc.encode("•"))
	d.paraAt(margin+14, contentWidth-14, text, sansFamily, "", bodySize, c, 0)
	d.y += 3
}

// warningBox draws a red-framed box with a bold first line and the items
// below it.
func (d *document) warningBox(head string, items []string) {
	const pad = 6
	w := contentWidth - 2*pad
	d.setFont(sansFamily, "B", bodySize)
	headLines := d.wrap(head, w)
	d.setFont(sansFamily, "", smallSize)
	var itemLines [][]string
	n := 0
	for _, it := range items {
		ls := d.wrap("• "+it, w-8)
		itemLines = append(itemLines, ls)
		n += len(ls)
	}
	h := 2*pad + float64(len(headLines))*bodySize*1.3 + float64(n)*smallSize*1.3 + 2
	d.need(h + 4)
	d.pdf.SetDrawColor(failedRed[0], failedRed[1], failedRed[2])
	d.pdf.SetFillColor(253, 240, 238)
	d.pdf.SetLineWidth(1)
	d.pdf.Rect(margin, d.y, contentWidth, h, "FD")
	d.pdf.SetLineWidth(0.5)
	d.pdf.SetDrawColor(0, 0, 0)
	y := d.y + pad
	d.font("B", bodySize, failedRed)
	for _, l := range headLines {
		d.pdf.Text(margin+pad, y+bodySize, l)
		y += bodySize * 1.3
	}
	y += 2
	d.font("", smallSize, failedRed)
	for _, ls := range itemLines {
		for k, l := range ls {
			x := margin + pad
			if k > 0 {
				x += 8
			}
			d.pdf.Text(x, y+smallSize, l)
			y += smallSize * 1.3
		}
	}
	d.y += h + 8
}

// fact writes one "Key: value" line, the value wrapped under itself.
func (d *document) fact(k, v string, c [3]int) {
	const keyW = 64
	d.need(smallSize * 1.35)
	d.font("B", smallSize, grey)
	d.pdf.Text(margin, d.y+smallSize, d.enc.encode(k))
	if v == "" {
		d.y += smallSize * 1.35
		return
	}
	d.paraAt(margin+keyW, contentWidth-keyW, v, sansFamily, "", smallSize, c, 6)
}

// mono quotes lines of a tool's output in a monospaced font: the first head
// lines and, when tail > 0, the last tail, with a count of what is left
// out between them. Long lines are cut to the width with "…". A line the
// core fonts cannot show is set in the embedded font, when there is one.
func (d *document) mono(lines []string, head, tail int, c [3]int) {
	lines = cutLines(lines, head, tail)
	const indent = 8
	lead := monoSize * 1.22
	for _, l := range lines {
		d.need(lead)
		l = expandTabs(l)
		var enc string
		if d.utf8 != nil && !d.enc.fits(l) {
			d.pdf.SetFont(pdfUTF8Family, "", monoSize)
			enc = d.enc.encode(l)
		} else {
			d.pdf.SetFont(monoFamily, "", monoSize)
			enc = d.enc.encodeCP1252(l)
		}
		d.pdf.SetTextColor(c[0], c[1], c[2])
		d.pdf.Text(margin+indent, d.y+monoSize, d.fit(enc, contentWidth-indent))
		d.y += lead
	}
	d.y += 3
}

// plot draws p at the cursor, w×h points. A drawing error stays in the
// document and is returned when it is written.
func (d *document) plot(p *plot.Plot, w, h float64) {
	d.need(h)
	c := newCanvas(d.pdf, d.enc, margin, d.y, w, h)
	p.Draw(draw.New(c))
	c.Close()
	d.y += h + 4
}

// lateNote writes text in the room the first page keeps for a note known
// only once everything is drawn (noteY), in bold red, at most 3 lines.
func (d *document) lateNote(text string) {
	last := d.pdf.PageNo()
	d.pdf.SetPage(1)
	// Page 1's stream ends in whatever font it last used, not the one
	// gofpdf now believes current: SetFontSize writes gofpdf's current
	// font, so the two agree again before the note (see Canvas.Close).
	fontPt, _ := d.pdf.GetFontSize()
	d.pdf.SetFontSize(fontPt)
	d.y = d.noteY
	d.paraAt(margin, contentWidth, text, sansFamily, "B", smallSize, failedRed, 3)
	d.pdf.SetPage(last)
}
