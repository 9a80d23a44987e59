package reports

import (
	"fmt"

	"github.com/sbench/sbench/reports/typeset"
)

// The page, type sizes and colours the sections lay out with.
const (
	contentWidth  = typeset.ContentWidth
	contentTop    = typeset.ContentTop
	contentBottom = typeset.ContentBottom
	bodySize      = typeset.BodySize
	smallSize     = typeset.SmallSize
	monoSize      = typeset.MonoSize
	h1Size        = typeset.H1Size
	h2Size        = typeset.H2Size
	rowHeight     = typeset.RowHeight
)

var (
	black     = typeset.Black
	grey      = typeset.Grey
	failedRed = typeset.Red
)

// renderPDF draws the content into the document.
func renderPDF(doc *typeset.Document, c *content) {
	for _, b := range c.blocks {
		switch b := b.(type) {
		case newPageBlock:
			doc.NewPage()
		case pageUnlessRoom:
			doc.PageUnlessRoom(b.h, b.gap)
		case spaceBlock:
			doc.Space(b.h)
		case needBlock:
			doc.Need(b.h)
		case titleBlock:
			doc.Title(b.text)
		case noteRoomBlock:
			doc.KeepNoteRoom()
		case headingBlock:
			doc.Heading(b.text, b.size, b.keep)
		case paraBlock:
			doc.Para(b.text, b.style, b.size, b.color, b.maxLines)
		case bulletBlock:
			doc.Bullet(b.text, b.color)
		case warningBlock:
			doc.WarningBox(b.head, b.items)
		case figureBlock:
			doc.Plot(b.f.Plot, b.f.width().Points(), b.f.height().Points())
		case captionBlock:
			doc.Para(b.text, "I", smallSize, grey, 0)
			doc.Space(2)
		case anchorBlock:
		case ruleBlock:
			doc.Rule(b.dy)
		case factBlock:
			doc.Fact(b.key, b.value, b.color)
		case monoBlock:
			doc.Mono(b.lines, b.head, b.tail, b.color)
		case *tableBlock:
			cols := make([]typeset.Column, len(b.cols))
			for i, c := range b.cols {
				cols[i] = typeset.Column{Title: c.title, Width: c.width, Right: c.right, Middle: c.middle, Art: c.art}
			}
			doc.Table(cols, b.maxLines, b.rows)
		default:
			panic(fmt.Sprintf("reports: no PDF for a block of type %T", b))
		}
	}
}

// redIf is the colour of text that says something failed when bad, else
// black.
func redIf(bad bool) [3]int {
	if bad {
		return failedRed
	}
	return black
}
