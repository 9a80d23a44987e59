package reports

import (
	"fmt"
	"strings"
)

// Comparison is the "Compared with baseline" section (sbench report
// --baseline): the report's runs against a named reference, as tables the
// caller computed (package compare). Reports lays them out; it does not
// judge them.
type Comparison struct {
	// Title heads the section, e.g. "Compared with baseline pre-upgrade".
	Title string
	// Summary sentences go first in the section, and Summary[0] also into
	// the verdict on the title page.
	Summary []string
	Tables  []ComparisonTable
	// Notes explain marks in the tables (a change judged without a test).
	Notes []string
}

// ComparisonTable is one benchmark, metric and configuration: a header and
// rows of cells, the first cell the size or other x.
type ComparisonTable struct {
	Heading string
	Header  []string
	Rows    [][]string
	// Worse marks rows that regressed (drawn in red), Better rows that
	// improved; either may be shorter than Rows.
	Worse, Better []bool
	// Note goes under the table: the summary line of a table of node
	// pairs.
	Note string
}

// WithComparison adds a comparison section after the benchmark sections.
func WithComparison(c *Comparison) Option {
	return func(o *options) error {
		if c == nil || c.Title == "" {
			return fmt.Errorf("comparison: no title")
		}
		for i, t := range c.Tables {
			if len(t.Header) == 0 {
				return fmt.Errorf("comparison table %d (%s): no header", i+1, t.Heading)
			}
			for j, row := range t.Rows {
				if len(row) != len(t.Header) {
					return fmt.Errorf("comparison table %d (%s), row %d: %d cells for %d columns", i+1, t.Heading, j+1, len(row), len(t.Header))
				}
			}
		}
		o.comparison = c
		return nil
	}
}

// betterGreen marks improvements; failedRed marks regressions.
var betterGreen = [3]int{0, 120, 40}

// comparisonSection draws the tables, regressions in red.
func (r *Report) comparisonSection(d *content) {
	c := r.opts.comparison
	if c == nil {
		return
	}
	d.heading(c.Title, h1Size, 60)
	for _, s := range c.Summary {
		col := redIf(strings.HasPrefix(s, "Warning:"))
		d.bullet(s, col)
	}
	if len(c.Tables) == 0 {
		d.para("Nothing was measured on both sides.", "I", smallSize, grey)
	}
	for _, t := range c.Tables {
		d.heading(t.Heading, h2Size, 50)
		// The x column narrow, the verdict column narrow, the rest shared.
		cols := make([]column, len(t.Header))
		for i, h := range t.Header {
			cols[i] = column{title: h, right: true}
		}
		cols[0] = column{title: t.Header[0], width: 70}
		if n := len(cols) - 1; n > 0 {
			cols[n] = column{title: t.Header[n], width: 80}
		}
		tb := d.table(cols)
		for i, row := range t.Rows {
			col := black
			if i < len(t.Worse) && t.Worse[i] {
				col = failedRed
			} else if i < len(t.Better) && t.Better[i] {
				col = betterGreen
			}
			tb.row(row, col, nil)
		}
		if t.Note != "" {
			d.space(2)
			d.paraLines(t.Note, "I", smallSize, grey, 4)
		}
		d.space(6)
	}
	for _, n := range c.Notes {
		d.paraLines(n, "I", smallSize, grey, 4)
	}
}
