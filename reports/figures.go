package reports

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/store"
	"github.com/sbench/sbench/svgplot"
)

// Figure is one plot of the report, with what it was drawn from.
type Figure struct {
	// Name is the figure's file name without extension, unique in the
	// report (e.g. "osu_bw-bandwidth").
	Name   string
	Title  string
	Family string // benchmark (or, in the family view, metric family) the figure shows
	Metric string // metric as the samples name it
	// Split is, in the family view, the configuration the figure's lines
	// share ("variant=intra"); "" otherwise.
	Split string
	Kind  string // KindBandwidth, KindLatency, KindLatencyZoom, KindMatrix or KindScaling
	Unit  string // unit of the y axis and of Series' Y values
	// Series are the figure's lines, in legend order (none for a matrix).
	Series []Series
	// LinkRates are the theoretical link rates (Gb/s) drawn as dashed
	// reference lines.
	LinkRates []float64
	// Hidden counts points a log axis cannot show (size or value <= 0);
	// they still count in the summary.
	Hidden int
	// Bands counts the series drawn with a min–max band, because their
	// repeats disagree.
	Bands int
	Plot  *plot.Plot

	legend *boxLegend   // the plot's legend, kept for tests to read back
	matrix *matrixGroup // the heatmap's data, for a matrix figure
	h      vg.Length
}

// Size of a figure, in the PDF and in saved files: the width of an A4
// page's text and a little over a third of its height, so two figures and
// their tables fit one page.
var (
	figureWidth  = vg.Points(contentWidth)
	figureHeight = vg.Points(270)
	zoomHeight   = vg.Points(190)
)

func (f *Figure) width() vg.Length { return figureWidth }

func (f *Figure) height() vg.Length {
	if f.h > 0 {
		return f.h
	}
	return figureHeight
}

// LegendEntries are the figure's legend entries, in order.
func (f *Figure) LegendEntries() []string {
	if f.legend == nil {
		return nil
	}
	out := make([]string, len(f.legend.entries))
	for i, e := range f.legend.entries {
		out[i] = e.name
	}
	return out
}

// Type sizes in figures: nothing below 9 pt at A4, the smallest a printed
// figure can be read at without a magnifier.
const (
	titleSize  = 11
	labelSize  = 10
	tickSize   = 9
	legendSize = 9
	cellSize   = 9
)

var (
	sans       = font.Font{Typeface: "Liberation", Variant: "Sans"}
	boldWeight = stdfont.WeightBold
)

// zoomLimit is the largest size of the small-message latency figure: where
// eager protocols end and latency stops being flat.
const zoomLimit = 8192

func (r *Report) buildFigures() {
	used := map[string]bool{}
	add := func(f *familyResult, figs *[]int, fig Figure) {
		fig.Name = uniqueName(used, fileName(fig.Name))
		f.figures = append(f.figures, len(r.figures))
		*figs = append(*figs, len(r.figures))
		r.figures = append(r.figures, fig)
	}
	for _, f := range r.families {
		for _, g := range f.groups {
			fig := Figure{
				Name:   g.family + "-" + g.metric + splitName(g.split),
				Family: g.family, Metric: g.metric, Split: g.split, Kind: g.kind, Unit: figureUnit(g.kind),
				Series: g.series,
				Title:  fmt.Sprintf("%s: %s vs message size", g.family, g.metric) + splitTitle(g.split),
			}
			if g.ranks > 0 && g.collective {
				fig.Title += fmt.Sprintf(", %d ranks", g.ranks)
			}
			if !curves(g.series) {
				continue // a table says it better than a dot
			}
			if !r.sizePlot(&fig, false) {
				r.notef("%s: no point can be drawn on log axes (all sizes or values are zero or negative)", fig.Title)
				continue
			}
			add(f, &g.figs, fig)
			if g.kind == KindLatency && wantsZoom(g.series) {
				zoom := Figure{
					Name:   g.family + "-" + g.metric + splitName(g.split) + "-small",
					Family: g.family, Metric: g.metric, Split: g.split, Kind: KindLatencyZoom, Unit: figureUnit(g.kind),
					Series: g.series, h: zoomHeight,
					Title: fmt.Sprintf("%s: %s of small messages (up to %s)", g.family, g.metric, sizes.Format(zoomLimit)) + splitTitle(g.split),
				}
				if r.sizePlot(&zoom, true) {
					add(f, &g.figs, zoom)
				}
			}
		}
		for _, m := range f.matrices {
			add(f, &m.figs, r.matrixFigure(m))
		}
		for _, s := range f.scaling {
			if fig, ok := r.scalingFigure(s); ok {
				add(f, &s.figs, fig)
			}
		}
	}
}

// splitName and splitTitle add a family view's split to a figure's file
// name and title.
func splitName(split string) string {
	if split == "" {
		return ""
	}
	return "-" + split
}

func splitTitle(split string) string {
	if split == "" {
		return ""
	}
	return ", " + split
}

// curves reports whether some series has two points to draw a line through.
func curves(series []Series) bool {
	return slices.ContainsFunc(series, func(s Series) bool {
		return countFunc(s.Points, func(p *Point) bool { return p.X > 0 }) >= 2
	})
}

// wantsZoom reports whether a latency figure hides a small-message region
// worth its own linear-scale figure: a curve with at least four sizes up to
// zoomLimit spanning four doublings or more, and sizes beyond it whose
// latency dwarfs theirs.
func wantsZoom(series []Series) bool {
	small, beyond := false, false
	for _, s := range series {
		n, lo, hi := 0, math.Inf(1), 0.0
		for _, p := range s.Points {
			if p.X > 0 && p.X <= zoomLimit {
				n++
				lo, hi = min(lo, p.X), max(hi, p.X)
			}
			if p.X > zoomLimit {
				beyond = true
			}
		}
		if n >= 4 && hi >= 16*lo {
			small = true
		}
	}
	return small && beyond
}

// newPlot makes a plot with the report's fonts, sizes and grid.
func (r *Report) newPlot(title string) (*plot.Plot, *boxLegend) {
	p := plot.New()
	r.text.apply(p)
	p.Title.Text = title
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Tick.Length = vg.Points(5)
	}
	legend := &boxLegend{style: r.text.style(legendSize, false)}
	legend.style.Color = color.Black
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xDD}
	grid.Horizontal.Color = color.Gray{Y: 0xDD}
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.4), vg.Points(0.4)
	p.Add(grid)
	return p, legend
}

// sizePlot draws a metric against message size: log2 x axis labelled like
// OSU's size column, one line per configuration, each the median of its
// repeats with a band from their minimum to maximum. Bandwidth is on a
// linear axis from zero, with the link's theoretical rate dashed; latency
// on a log axis because it spans decades, or, zoomed on small messages, on
// a linear one. It reports whether anything could be drawn.
func (r *Report) sizePlot(f *Figure, zoom bool) bool {
	p, legend := r.newPlot(f.Title)
	p.X.Label.Text = "message size (bytes)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(log2Ticks)
	logY := f.Kind == KindLatency
	switch f.Kind {
	case KindLatency:
		p.Y.Label.Text = "latency (µs)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.TickerFunc(log10Ticks)
	case KindLatencyZoom:
		p.Y.Label.Text = "latency (µs)"
		p.Y.Tick.Marker = plot.TickerFunc(linearTicks)
	default:
		p.Y.Label.Text = "bandwidth (MB/s)"
		p.Y.Tick.Marker = plot.TickerFunc(linearTicks)
	}
	var b sizeBounds
	hidden, bands := 0, 0
	for si, s := range f.Series {
		xys, lo, hi, hover, banded, h := b.seriesPoints(f, s, logY, zoom)
		hidden += h
		if len(xys) == 0 {
			continue
		}
		if banded {
			bands++
		}
		r.addSizeSeries(p, legend, f, si, xys, lo, hi, hover, banded)
	}
	if b.drawn == 0 {
		return false
	}
	if f.Kind == KindBandwidth {
		for _, rate := range distinctRates(f.Series) {
			f.LinkRates = append(f.LinkRates, rate)
			ref := &refLine{y: rate * 125, label: formatRate(rate) + " link", style: r.text.style(tickSize, false)}
			p.Add(ref)
			b.ymax = max(b.ymax, rate*125)
		}
		if len(f.LinkRates) > 0 {
			legend.add("theoretical link rate", &refLine{})
		}
	}
	if bands > 0 {
		legend.note = "band: min–max of repeats"
	}
	p.Add(legend)
	p.X.Min, p.X.Max = log2Range(b.xmin, b.xmax)
	switch {
	case logY:
		p.Y.Min, p.Y.Max = log10Range(b.ymin, b.ymax)
	default:
		// From zero, so heights compare honestly; headroom for the legend.
		p.Y.Min, p.Y.Max = 0, b.ymax*1.15
		if b.ymax <= 0 {
			p.Y.Max = 1
		}
	}
	f.Plot, f.legend, f.Hidden, f.Bands = p, legend, hidden, bands
	return true
}

// sizeBounds are the bounds of the points a size plot draws, and how many
// it draws.
type sizeBounds struct {
	xmin, xmax, ymin, ymax float64
	drawn                  int
}

// seriesPoints are the points of s a size plot draws — medians, their
// minimum and maximum, what they say on hover — whether any has a band,
// and how many were left out (size or value 0 on a log axis; beyond the
// zoom, those are not counted).
func (b *sizeBounds) seriesPoints(f *Figure, s Series, logY, zoom bool) (xys, lo, hi plotter.XYs, hover []svgplot.Point, banded bool, hidden int) {
	for _, pt := range s.Points {
		if pt.X <= 0 || (logY && pt.Y <= 0) || (zoom && pt.X > zoomLimit) {
			if !zoom || pt.X <= zoomLimit {
				hidden++
			}
			continue
		}
		pmin, pmax := pt.Min, pt.Max
		if logY && pmin <= 0 {
			pmin = pt.Y
		}
		if b.drawn == 0 {
			b.xmin, b.xmax, b.ymin, b.ymax = pt.X, pt.X, pmin, pmax
		}
		b.xmin, b.xmax = min(b.xmin, pt.X), max(b.xmax, pt.X)
		b.ymin, b.ymax = min(b.ymin, pmin, pt.Y), max(b.ymax, pmax, pt.Y)
		xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
		hover = append(hover, hoverPoint(s, pt, proseSize(pt.X), f.Unit))
		lo = append(lo, plotter.XY{X: pt.X, Y: pmin})
		hi = append(hi, plotter.XY{X: pt.X, Y: pmax})
		if pt.N > 1 && pmax > pmin {
			banded = true
		}
		b.drawn++
	}
	return xys, lo, hi, hover, banded, hidden
}

// addSizeSeries adds series si of f to p: its band, its line (broken at
// gaps in size), its points and its legend entry.
func (r *Report) addSizeSeries(p *plot.Plot, legend *boxLegend, f *Figure, si int, xys, lo, hi plotter.XYs, hover []svgplot.Point, banded bool) {
	s := f.Series[si]
	st := r.configs.style(s.Config)
	dash := st.Dash
	if s.Ranks > 0 && dash == nil {
		dash = rankDash(f.Series, s)
	}
	if banded {
		for _, seg := range segments(xys) {
			if band := bandPolygon(lo[seg[0]:seg[1]], hi[seg[0]:seg[1]], st.Color); band != nil {
				p.Add(svgplot.Group(si, band))
			}
		}
	}
	points, err := plotter.NewScatter(xys)
	if err != nil {
		// Values are finite by the bundle's contract; a NaN that got
		// past it must not take the whole report down.
		r.notef("%s: %s not drawn: %v", f.Title, s.Label(), err)
		return
	}
	points.Shape, points.Color, points.Radius = st.Glyph, st.Color, vg.Points(2.5)
	var first *plotter.Line
	for _, seg := range segments(xys) {
		line, err := plotter.NewLine(xys[seg[0]:seg[1]])
		if err != nil {
			continue
		}
		line.Color, line.Width, line.Dashes = st.Color, vg.Points(1.5), dash
		p.Add(svgplot.Group(si, line))
		if first == nil {
			first = line
		}
	}
	p.Add(svgplot.Group(si, points), svgplot.Points(si, hover))
	legend.addSeries(si, s.Label(), first, points)
}

// hoverPoint is what a point of s says on hover in the HTML report: the
// line, where (a size, a process count), the value and how it was made,
// and the runs behind it, the first of which a click opens.
func hoverPoint(s Series, pt Point, at, unit string) svgplot.Point {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s: %s %s", s.Label(), at, formatValue(pt.Y), unitLabel(unit))
	if pt.N > 1 {
		fmt.Fprintf(&b, "\nmedian of %d samples, %s–%s", pt.N, formatValue(pt.Min), formatValue(pt.Max))
	}
	runs := pt.Runs
	if len(runs) == 0 {
		runs = s.Runs
	}
	href := ""
	if len(runs) > 0 {
		fmt.Fprintf(&b, "\nrun%s %s", results.Plural(len(runs)), store.FormatRunIDs(runs))
		href = fmt.Sprintf("#run-%d", runs[0])
	}
	return svgplot.Point{X: pt.X, Y: pt.Y, Tip: b.String(), Href: href}
}

// maxGap is the largest step between two sizes a line is drawn across: a
// log left out of the middle of a table (as the articles cut NetPIPE's) is
// a gap, not a straight line from 3 B to 1.5 MiB.
const maxGap = 16

// segments splits points sorted by x into runs without such a gap, as
// [start, end) index pairs.
func segments(xys plotter.XYs) [][2]int {
	var out [][2]int
	start := 0
	for i := 1; i < len(xys); i++ {
		if xys[i].X > maxGap*xys[i-1].X {
			out = append(out, [2]int{start, i})
			start = i
		}
	}
	return append(out, [2]int{start, len(xys)})
}

// rankDash tells apart the process counts of one configuration.
func rankDash(all []Series, s Series) []vg.Length {
	i := 0
	for _, o := range all {
		if o.Config == s.Config {
			if o.Ranks == s.Ranks {
				break
			}
			i++
		}
	}
	return dashes[i%len(dashes)]
}

// distinctRates are the link rates of a figure's series, ascending.
func distinctRates(series []Series) []float64 {
	set := map[float64]bool{}
	for _, s := range series {
		if s.LinkRate > 0 {
			set[s.LinkRate] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// bandPolygon is the area between lo and hi, in a light tint of c.
func bandPolygon(lo, hi plotter.XYs, c color.RGBA) *plotter.Polygon {
	ring := append(plotter.XYs(nil), lo...)
	for i := len(hi) - 1; i >= 0; i-- {
		ring = append(ring, hi[i])
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil
	}
	poly.Color = color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0x40}
	poly.LineStyle.Width = 0
	return poly
}

// refLine is a dashed horizontal line across the data area at y, labelled
// at its right end: the theoretical rate a bandwidth curve is measured
// against. With no label it only draws its legend thumbnail.
type refLine struct {
	y     float64
	label string
	style text.Style
}

var refStyle = draw.LineStyle{Color: color.Gray{Y: 0x55}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}

func (l *refLine) Plot(c draw.Canvas, p *plot.Plot) {
	_, ty := p.Transforms(&c)
	y := ty(l.y)
	c.StrokeLine2(refStyle, c.Min.X, y, c.Max.X, y)
	if l.label != "" {
		// Right of the middle: the legend holds the top-left corner, and
		// curves reach the rate at the right end, where they flatten.
		sty := l.style
		sty.Color = color.Gray{Y: 0x40}
		sty.XAlign, sty.YAlign = draw.XCenter, draw.YBottom
		c.FillText(sty, vg.Point{X: c.Min.X + 0.6*(c.Max.X-c.Min.X), Y: y + 2}, l.label)
	}
}

func (l *refLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(refStyle, c.Min.X, y, c.Max.X, y)
}

// scalingFigure draws a key figure against the process count.
func (r *Report) scalingFigure(s *scalingGroup) (Figure, bool) {
	f := Figure{
		Name: s.family + "-scaling-" + s.what, Family: s.family, Metric: s.what, Kind: KindScaling, Unit: s.unit,
		Series: s.series, Title: fmt.Sprintf("%s: %s vs process count", s.family, s.what),
	}
	p, legend := r.newPlot(f.Title)
	p.X.Label.Text = "processes (ranks)"
	p.Y.Label.Text = s.what
	if s.unit != "" {
		p.Y.Label.Text += " (" + unitLabel(s.unit) + ")"
	}
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	drawn := 0
	for si, sr := range s.series {
		var xys plotter.XYs
		var hover []svgplot.Point
		for _, pt := range sr.Points {
			if pt.X <= 0 {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			hover = append(hover, hoverPoint(sr, pt, strconv.FormatFloat(pt.X, 'f', -1, 64)+" ranks", s.unit))
			xmin, xmax, ymax = min(xmin, pt.X), max(xmax, pt.X), max(ymax, pt.Max, pt.Y)
			drawn++
		}
		if len(xys) == 0 {
			continue
		}
		st := r.configs.style(sr.Config)
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			continue
		}
		line.Color, line.Width, line.Dashes = st.Color, vg.Points(1.5), st.Dash
		points.Shape, points.Color, points.Radius = st.Glyph, st.Color, vg.Points(3)
		p.Add(svgplot.Group(si, line), svgplot.Group(si, points), svgplot.Points(si, hover))
		legend.addSeries(si, sr.Label(), line, points)
	}
	if drawn == 0 {
		return f, false
	}
	p.Add(legend)
	if xmax/xmin >= 4 {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.TickerFunc(func(lo, hi float64) []plot.Tick {
			ticks := log2Ticks(lo, hi)
			for i := range ticks {
				if ticks[i].Label != "" {
					ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'f', -1, 64)
				}
			}
			return ticks
		})
		p.X.Min, p.X.Max = log2Range(xmin, xmax)
	} else {
		p.X.Min, p.X.Max = xmin-0.5, xmax+0.5
		p.X.Tick.Marker = plot.TickerFunc(integerTicks)
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.15
	if ymax <= 0 {
		p.Y.Max = 1
	}
	p.Y.Tick.Marker = plot.TickerFunc(linearTicks)
	f.Plot, f.legend = p, legend
	return f, true
}

// integerTicks marks whole numbers only: rank counts have no fractions.
func integerTicks(lo, hi float64) []plot.Tick {
	step := math.Max(1, math.Ceil((hi-lo)/10))
	var ticks []plot.Tick
	for v := math.Ceil(lo); v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ticks
}

// unitLabel writes a unit for an axis label.
func unitLabel(u string) string {
	if u == "us" {
		return "µs"
	}
	return u
}

// fileName makes s safe as a file name on every system sbench runs on.
func fileName(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	for strings.Contains(out, "--") {
		out = strings.ReplaceAll(out, "--", "-")
	}
	if out == "" {
		out = "figure"
	}
	return out
}

func uniqueName(used map[string]bool, name string) string {
	n := name
	for i := 2; used[n]; i++ {
		n = fmt.Sprintf("%s-%d", name, i)
	}
	used[n] = true
	return n
}

// boxLegend is the figures' legend: a translucent white box in the data
// area's top-left corner, so it stays readable when a curve runs under it,
// as with ten configurations one will. gonum/plot's own legend has no
// background and is laid out on a canvas a plotter never sees, so a box
// drawn under it cannot be placed reliably; this one draws box and entries
// together. Added as the last plotter, it covers the curves.
type boxLegend struct {
	style   text.Style
	entries []legendEntry
	// note is a last line in italics, without a thumbnail.
	note string
}

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
	// series is the index of the figure's series the entry stands for, -1
	// for none: in the HTML report a click on it hides that series.
	series int
}

func (l *boxLegend) add(name string, thumbs ...plot.Thumbnailer) {
	l.addSeries(-1, name, thumbs...)
}

func (l *boxLegend) addSeries(series int, name string, thumbs ...plot.Thumbnailer) {
	l.entries = append(l.entries, legendEntry{name: name, thumbs: thumbs, series: series})
}

func (l *boxLegend) Plot(c draw.Canvas, _ *plot.Plot) {
	if len(l.entries) == 0 {
		return
	}
	const (
		inset  = vg.Length(6)  // from the axes
		pad    = vg.Length(4)  // inside the box
		gap    = vg.Length(2)  // between entries
		thumbW = vg.Length(24) // line sample
	)
	sty := l.style
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	var rowH, textW vg.Length
	for _, e := range l.entries {
		r := sty.Rectangle(e.name)
		rowH, textW = max(rowH, r.Size().Y), max(textW, r.Size().X)
	}
	em := sty.Rectangle(" ").Size().X
	n := vg.Length(len(l.entries))
	w := thumbW + em + textW
	if l.note != "" {
		w = max(w, sty.Rectangle(l.note).Size().X)
		n++
	}
	box := vg.Rectangle{
		Min: vg.Point{X: c.Min.X + inset, Y: c.Max.Y - inset - 2*pad - n*rowH - (n-1)*gap},
		Max: vg.Point{X: c.Min.X + inset + 2*pad + w, Y: c.Max.Y - inset},
	}
	c.SetColor(color.NRGBA{R: 255, G: 255, B: 255, A: 217})
	c.Fill(box.Path())
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0xB0}, Width: vg.Points(0.4)})
	c.Stroke(box.Path())
	x := box.Min.X + pad
	top := box.Max.Y - pad
	for _, e := range l.entries {
		icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: top - rowH},
			Max: vg.Point{X: x + thumbW, Y: top},
		}}
		svgplot.Begin(c.Canvas, e.series, true)
		if e.series >= 0 {
			svgplot.HitArea(c.Canvas, vg.Rectangle{Min: vg.Point{X: x, Y: top - rowH}, Max: vg.Point{X: box.Max.X - pad, Y: top}})
		}
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(sty, vg.Point{X: x + thumbW + em, Y: top - rowH/2}, e.name)
		svgplot.End(c.Canvas, e.series)
		top -= rowH + gap
	}
	if l.note != "" {
		nsty := sty
		nsty.Color = color.Gray{Y: 0x50}
		c.FillText(nsty, vg.Point{X: x, Y: top - rowH/2}, l.note)
	}
}
