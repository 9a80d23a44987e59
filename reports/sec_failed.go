package reports

import (
	"fmt"

	"github.com/sbench/sbench/results"
)

// maxErrorLines bounds one run's error text: a tool that dumped a stack
// trace per rank must not push the rest of the report off by fifty pages.
const maxErrorLines = 30

// failedSection repeats each failed or invalid run with its whole error
// text, where the runs table only had room for its first lines.
func (r *Report) failedSection(d *document) {
	first := true
	for i := range r.runs {
		run := &r.runs[i]
		if run.Status != results.StatusFailed && run.Status != results.StatusInvalid {
			continue
		}
		if first {
			d.newPage()
			d.heading("Failed and invalid runs", h1Size, 40)
			first = false
		}
		head := fmt.Sprintf("Run %d — %s — %s", run.ID, run.Status, family(run))
		if cfg := r.configs.ofRun[run.ID]; cfg != "" {
			head += ", " + cfg
		}
		if j := jobLabel(run); j != "—" {
			head += ", job " + j
			if job := r.jobOf(run); job != nil && job.State != "" {
				head += " (" + job.State + ")"
			}
		}
		if n := nodesLabel(run); n != "—" {
			head += ", nodes " + n
		}
		d.need(3 * bodySize * 1.3)
		d.paraAt(margin, contentWidth, head, "Helvetica", "B", bodySize, failedRed, 3)
		msg := r.failureText(run)
		if msg == "" {
			msg = "(no error text recorded)"
		}
		d.paraAt(margin+12, contentWidth-12, msg, "Courier", "", smallSize, black, maxErrorLines)
		d.y += 8
	}
}

// notesSection lists what the report left out, so a missing curve is
// explained in the report rather than discovered by its reader.
func (r *Report) notesSection(d *document) {
	if len(r.notes) == 0 {
		return
	}
	d.heading("Notes", h2Size, 30)
	for _, n := range r.notes {
		d.paraAt(margin, contentWidth, "• "+n, "Helvetica", "", smallSize, black, 4)
	}
}

// replacementNote goes back to the title page to say that characters were
// replaced, once every text of the report (figures included) has been set.
func (r *Report) replacementNote(d *document) {
	n := d.enc.replacedCount()
	if n == 0 {
		return
	}
	sample := ""
	for _, c := range d.enc.replacedSample(4) {
		sample += fmt.Sprintf(" U+%04X", c)
	}
	last := d.pdf.PageNo()
	d.pdf.SetPage(1)
	// Page 1's stream ends in whatever font it last used, not the one
	// gofpdf now believes current: SetFontSize writes gofpdf's current
	// font, so the two agree again before the note (see Canvas.Close).
	fontPt, _ := d.pdf.GetFontSize()
	d.pdf.SetFontSize(fontPt)
	d.y = d.noteY
	d.paraAt(margin, contentWidth, fmt.Sprintf(
		"Note: %d character%s the PDF's built-in fonts cannot show (%s) are printed as '?'. Fonts for CJK text will come with a later version.",
		n, plural(n), sample[1:]), "Helvetica", "B", smallSize, failedRed, 2)
	d.pdf.SetPage(last)
}
