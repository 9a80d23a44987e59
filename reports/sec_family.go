package reports

import (
	"fmt"
	"strconv"
	"strings"
)

// familySections gives each benchmark its own page: its figures, each with
// a caption and a table of the numbers a reader would otherwise read off
// the curve by eye.
func (r *Report) familySections(d *document) {
	if len(r.figures) == 0 {
		d.heading("Results", h1Size, 30)
		d.para("No bandwidth or latency samples of successful runs to plot.", "", bodySize, black)
		return
	}
	current := ""
	for i := range r.figures {
		f := &r.figures[i]
		if f.Family != current || i == 0 {
			current = f.Family
			d.newPage()
			d.heading("Benchmark: "+f.Family, h1Size, figureHeight.Points())
		}
		d.figure(f)
		d.caption(f)
		switch f.Kind {
		case KindBandwidth:
			r.bandwidthTable(d, f)
		case KindLatency:
			r.latencyTable(d, f)
		}
		d.y += 10
	}
}

// caption says how the points were made and what the figure leaves out.
func (d *document) caption(f *Figure) {
	var parts []string
	combined := false
	runs := 0
	for _, s := range f.Series {
		runs += len(s.Runs)
		for _, p := range s.Points {
			if p.N > 1 {
				combined = true
			}
		}
	}
	parts = append(parts, fmt.Sprintf("%d configuration%s from %d run%s", len(f.Series), plural(len(f.Series)), runs, plural(runs)))
	if combined {
		parts = append(parts, "each point is the median of the samples at that size")
	}
	if f.Hidden > 0 {
		parts = append(parts, fmt.Sprintf("%d point%s at size or value 0 not drawn on the log axis (see the table)", f.Hidden, plural(f.Hidden)))
	}
	d.para(strings.Join(parts, "; ")+".", "I", smallSize, grey)
	d.y += 2
}

func (r *Report) bandwidthTable(d *document, f *Figure) {
	t := d.table([]column{
		{title: "Configuration", width: 170},
		{title: "Peak bandwidth (" + f.Unit + ")", width: 124, right: true},
		{title: "at size (bytes)", width: 86, right: true},
		{title: "Sizes", width: 46, right: true},
		{title: "Runs", width: contentWidth - 426},
	})
	d.need(t.rowH * float64(2+len(f.Series)))
	t.header()
	for _, s := range f.Series {
		peak, at := peakOf(s.Points)
		st := r.configs.style(s.Config)
		t.row([]string{s.Config, formatValue(peak), formatSize(at), strconv.Itoa(len(s.Points)), runList(s.Runs)}, black, &st)
	}
}

func (r *Report) latencyTable(d *document, f *Figure) {
	t := d.table([]column{
		{title: "Configuration", width: 150},
		{title: "Smallest size", width: 76, right: true},
		{title: "Latency (µs)", width: 76, right: true},
		{title: "Largest size", width: 76, right: true},
		{title: "Latency (µs)", width: 76, right: true},
		{title: "Runs", width: contentWidth - 454},
	})
	d.need(t.rowH * float64(2+len(f.Series)))
	t.header()
	for _, s := range f.Series {
		first, last := s.Points[0], s.Points[len(s.Points)-1]
		st := r.configs.style(s.Config)
		t.row([]string{s.Config, formatSize(first.X), formatValue(first.Y), formatSize(last.X), formatValue(last.Y), runList(s.Runs)}, black, &st)
	}
}

// peakOf returns the highest value and the smallest size it is reached at.
func peakOf(pts []Point) (peak, at float64) {
	for i, p := range pts {
		if i == 0 || p.Y > peak {
			peak, at = p.Y, p.X
		}
	}
	return peak, at
}

// formatValue writes measured values with two decimals, as OSU prints them,
// so the report's numbers can be found in the tool's own output.
func formatValue(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func runList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ", ")
}
