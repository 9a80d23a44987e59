package reports

import (
	"unicode"
	"unicode/utf8"

	"github.com/sbench/sbench/reports/typeset"
)

// content is what the sections write: a list of blocks (headings,
// paragraphs, tables, figures, quotes) that the PDF writer (renderPDF) and
// the HTML writer (htmlWriter.render) each render. A section knows nothing of
// either; layout hints (need, space, page breaks) are blocks the HTML
// writer passes over.
type content struct {
	blocks []any
}

// The blocks.
type (
	// newPageBlock starts a new PDF page.
	newPageBlock struct{}
	// pageUnlessRoom starts a new page unless h points are left on this
	// one, else leaves gap points.
	pageUnlessRoom struct{ h, gap float64 }
	// spaceBlock leaves h points.
	spaceBlock struct{ h float64 }
	// needBlock starts a new page unless h points are left on this one.
	needBlock struct{ h float64 }
	// titleBlock is the report's title, on a new page.
	titleBlock struct{ text string }
	// noteRoomBlock keeps room on the title page for the note about
	// replaced characters, known only once everything is drawn.
	noteRoomBlock struct{}
	headingBlock  struct {
		text       string
		size, keep float64
	}
	// paraBlock is text wrapped to the text width, at most maxLines lines
	// (0: no limit).
	paraBlock struct {
		text, style string
		size        float64
		color       [3]int
		maxLines    int
	}
	bulletBlock struct {
		text  string
		color [3]int
	}
	warningBlock struct {
		head  string
		items []string
	}
	figureBlock  struct{ f *Figure }
	captionBlock struct{ text string }
	// anchorBlock marks where a run's part of the appendix starts.
	anchorBlock struct{ id string }
	// ruleBlock draws a line across the text width dy below the cursor.
	ruleBlock struct{ dy float64 }
	factBlock struct {
		key, value string
		color      [3]int
	}
	// monoBlock quotes lines of a tool's output: the first head and, when
	// tail > 0, the last tail.
	monoBlock struct {
		lines      []string
		head, tail int
		color      [3]int
	}
)

// tableBlock is a table: its header, then its rows.
type tableBlock struct {
	cols []column
	// maxLines bounds a cell's lines; 0 means 3.
	maxLines int
	rows     []*typeset.Row
}

// column is a table's column, declared once for the PDF and the HTML
// page: its title, its width rule (points, or 0: an equal share of what
// the columns of a fixed width leave), its alignment, and how its cells
// read.
type column struct {
	title string
	width float64
	right bool // numbers
	// middle keeps a cell on one line in the PDF, cut in the middle.
	middle bool
	// art marks the column a row's art draws into (in the PDF).
	art bool
	// runLink makes a cell that is a run's number a link to the run in
	// the HTML page's appendix.
	runLink bool
}

// runColumn is the column of the runs' numbers.
var runColumn = column{title: "Run", width: 30, right: true, runLink: true}

func (d *content) add(b any) { d.blocks = append(d.blocks, b) }

func (d *content) newPage()                  { d.add(newPageBlock{}) }
func (d *content) space(h float64)           { d.add(spaceBlock{h}) }
func (d *content) need(h float64)            { d.add(needBlock{h}) }
func (d *content) title(text string)         { d.add(titleBlock{text}) }
func (d *content) anchor(id string)          { d.add(anchorBlock{id}) }
func (d *content) rule(dy float64)           { d.add(ruleBlock{dy}) }
func (d *content) figure(f *Figure)          { d.add(figureBlock{f}) }
func (d *content) bullet(t string, c [3]int) { d.add(bulletBlock{t, c}) }

func (d *content) pageUnlessRoom(h, gap float64) { d.add(pageUnlessRoom{h, gap}) }

// heading writes a section heading and keeps keep points of what follows
// with it, so a heading is never the last line of a page.
func (d *content) heading(text string, size, keep float64) { d.add(headingBlock{text, size, keep}) }

// para writes text wrapped to the text width.
func (d *content) para(text, style string, size float64, c [3]int) {
	d.add(paraBlock{text: text, style: style, size: size, color: c})
}

// paraLines writes text wrapped to the text width in at most maxLines
// lines, the last saying how many were left out.
func (d *content) paraLines(text, style string, size float64, c [3]int, maxLines int) {
	d.add(paraBlock{text, style, size, c, maxLines})
}

// warningBox is a red-framed box with a bold first line and the items
// below it.
func (d *content) warningBox(head string, items []string) { d.add(warningBlock{head, items}) }

// fact writes one "Key: value" line, the value wrapped under itself.
func (d *content) fact(k, v string, c [3]int) { d.add(factBlock{k, v, c}) }

// mono quotes lines in a monospaced font: the first head lines and, when
// tail > 0, the last tail, with a count of what is left out between them.
func (d *content) mono(lines []string, head, tail int, c [3]int) {
	d.add(monoBlock{lines, head, tail, c})
}

// table starts a table of the columns; its rows follow with row.
func (d *content) table(cols []column) *tableBlock {
	t := &tableBlock{cols: cols}
	d.add(t)
	return t
}

// row adds a row; swatch, if set, is drawn before the first cell's text.
func (t *tableBlock) row(cells []string, c [3]int, swatch *style) *typeset.Row {
	return t.rowStyled(cells, c, swatch, "", -1)
}

// rowStyled adds a row in a font style ("S" strikes the text through)
// except for column plain, which stays in the regular style.
func (t *tableBlock) rowStyled(cells []string, c [3]int, swatch *style, fontStyle string, plain int) *typeset.Row {
	r := &typeset.Row{Cells: cells, Color: c, FontStyle: fontStyle, Plain: plain}
	if swatch != nil {
		r.Swatch = &swatch.Swatch
	}
	t.rows = append(t.rows, r)
	return r
}

// explain writes text under row r, in italics of colour c indented to the
// second column, at most lines lines: a failed run's error, an ok run's
// note. keep keeps it on the row's page.
func explain(r *typeset.Row, text string, lines int, c [3]int, keep bool) {
	r.Under, r.UnderLines, r.UnderColor, r.KeepUnder = text, lines, c, keep
}

// caption writes a figure's caption, as a sentence.
func (d *content) caption(text string) {
	if r, n := utf8.DecodeRuneInString(text); n > 0 {
		text = string(unicode.ToUpper(r)) + text[n:]
	}
	d.add(captionBlock{text})
}
