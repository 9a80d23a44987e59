package reports

import (
	"fmt"

	"github.com/sbench/sbench/results"
)

// notesSection lists what the report left out, so a missing curve is
// explained in the report rather than discovered by its reader.
func (r *Report) notesSection(d *document) {
	if len(r.notes) == 0 {
		return
	}
	d.heading("Notes", h2Size, 30)
	for _, n := range r.notes {
		d.paraAt(margin, contentWidth, "• "+n, sansFamily, "", smallSize, black, 4)
	}
}

// replacementNote goes back to the title page to say that characters were
// replaced, once every text of the report (figures included) has been set:
// the font chosen up front says why when it could not show them; this
// catches any other.
func (r *Report) replacementNote(d *document) {
	n := d.enc.replacedCount()
	msg := r.fontNote
	if msg == "" && n == 0 {
		return
	}
	if msg == "" {
		sample := ""
		for _, c := range d.enc.replacedSample(4) {
			sample += fmt.Sprintf(" U+%04X", c)
		}
		msg = fmt.Sprintf("%d character%s the report's fonts cannot show (%s) are printed as '?'", n, results.Plural(n), sample[1:])
	}
	last := d.pdf.PageNo()
	d.pdf.SetPage(1)
	// Page 1's stream ends in whatever font it last used, not the one
	// gofpdf now believes current: SetFontSize writes gofpdf's current
	// font, so the two agree again before the note (see Canvas.Close).
	fontPt, _ := d.pdf.GetFontSize()
	d.pdf.SetFontSize(fontPt)
	d.y = d.noteY
	d.paraAt(margin, contentWidth, "Note: "+msg+".", sansFamily, "B", smallSize, failedRed, 3)
	d.pdf.SetPage(last)
}
