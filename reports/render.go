package reports

import "fmt"

// renderPDF draws the content into the document.
func renderPDF(doc *document, c *content) {
	for _, b := range c.blocks {
		switch b := b.(type) {
		case newPageBlock:
			doc.newPage()
		case pageUnlessRoom:
			if doc.y+b.h > contentBottom {
				doc.newPage()
			} else {
				doc.y += b.gap
			}
		case spaceBlock:
			doc.y += b.h
		case needBlock:
			doc.need(b.h)
		case titleBlock:
			doc.newPage()
			doc.y = 96
			doc.font("B", 22, black)
			for _, l := range doc.wrap(b.text, contentWidth) {
				doc.pdf.Text(margin, doc.y+22, l)
				doc.y += 28
			}
			doc.y += 8
		case noteRoomBlock:
			doc.noteY = doc.y
			doc.y += 3 * smallSize * 1.3
		case headingBlock:
			doc.heading(b.text, b.size, b.keep)
		case paraBlock:
			doc.paraAt(margin, contentWidth, b.text, sansFamily, b.style, b.size, b.color, b.maxLines)
		case bulletBlock:
			doc.bullet(b.text, b.color)
		case warningBlock:
			doc.warningBox(b.head, b.items)
		case figureBlock:
			doc.plot(b.f.Plot, b.f.width().Points(), b.f.height().Points())
		case captionBlock:
			doc.para(b.text, "I", smallSize, grey)
			doc.y += 2
		case anchorBlock:
		case ruleBlock:
			doc.rule(doc.y + b.dy)
		case factBlock:
			doc.fact(b.key, b.value, b.color)
		case monoBlock:
			doc.mono(b.lines, b.head, b.tail, b.color)
		case *tableBlock:
			renderTable(doc, b)
		default:
			panic("reports: no PDF for a block of type " + typeName(b))
		}
	}
}

// renderTable draws a table: its header, repeated on every page it spans,
// and its rows, each with what it writes under itself.
func renderTable(doc *document, tb *tableBlock) {
	t := doc.table(tb.cols)
	t.maxLines = tb.maxLines
	t.header()
	for _, r := range tb.rows {
		after := 0.0
		if r.under != "" && r.keepUnder {
			after = t.failureHeight(r.under, r.underLines)
		}
		top, h := t.rowKeeping(r.cells, r.color, r.swatch, r.fontStyle, r.plain, after)
		if r.art != nil {
			x := margin
			for _, c := range tb.cols {
				if c.art {
					r.art(doc, x+cellPad, top+2, c.width-2*cellPad, h-4)
				}
				x += c.width
			}
		}
		if r.under != "" {
			t.under(r.under, r.underLines, r.underColor)
		}
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
