package reports

import (
	"fmt"

	"github.com/sbench/sbench/reports/typeset"
	"github.com/sbench/sbench/results"
)

// notesSection lists what the report left out, so a missing curve is
// explained in the report rather than discovered by its reader.
func (r *Report) notesSection(d *content) {
	if len(r.notes) == 0 {
		return
	}
	d.heading("Notes", h2Size, 30)
	for _, n := range r.notes {
		d.paraLines("• "+n, "", smallSize, black, 4)
	}
}

// replacementNote goes back to the title page to say that characters were
// replaced, once every text of the report (figures included) has been set:
// the font chosen up front says why when it could not show them; this
// catches any other.
func (r *Report) replacementNote(d *typeset.Document) {
	n := d.ReplacedCount()
	msg := r.fontNote
	if msg == "" && n == 0 {
		return
	}
	if msg == "" {
		sample := ""
		for _, c := range d.ReplacedSample(4) {
			sample += fmt.Sprintf(" U+%04X", c)
		}
		msg = fmt.Sprintf("%d character%s the report's fonts cannot show (%s) are printed as '?'", n, results.Plural(n), sample[1:])
	}
	d.LateNote("Note: " + msg + ".")
}
