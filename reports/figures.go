package reports

import (
	"fmt"
	"image/color"
	"strings"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one plot of the report, with what it was drawn from.
type Figure struct {
	// Name is the figure's file name without extension, unique in the
	// report (e.g. "osu_bw-bandwidth").
	Name   string
	Title  string
	Family string // benchmark the figure shows
	Metric string // metric as the samples name it
	Kind   string // KindBandwidth or KindLatency
	Unit   string // unit of the y axis and of Series' Y values
	// Series are the figure's lines, in legend order.
	Series []Series
	// Hidden counts points a log axis cannot show (size or value <= 0);
	// they still count in the summary.
	Hidden int
	Plot   *plot.Plot

	legend *boxLegend // the plot's legend, kept for tests to read back
}

// Size of a figure, in the PDF and in saved files: the width of an A4
// page's text and a little over a third of its height, so two figures and
// their tables fit one page.
var (
	figureWidth  = vg.Points(contentWidth)
	figureHeight = vg.Points(270)
)

// Type sizes in figures: nothing below 9 pt at A4, the smallest a printed
// figure can be read at without a magnifier.
const (
	titleSize  = 11
	labelSize  = 10
	tickSize   = 9
	legendSize = 9
)

var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func (r *Report) buildFigures() []Figure {
	var figs []Figure
	used := map[string]bool{}
	for _, g := range r.collectSizeSamples() {
		f := Figure{
			Family: g.family,
			Metric: g.metric,
			Kind:   g.kind,
			Unit:   figureUnit(g.kind),
			Series: r.series(g),
			Title:  fmt.Sprintf("%s: %s vs message size", g.family, g.metric),
			Name:   uniqueName(used, fileName(g.family+"-"+g.metric)),
		}
		p, legend, hidden, drawn := r.sizePlot(&f)
		if drawn == 0 {
			r.notef("%s: no point can be drawn on log axes (all sizes or values are zero or negative)", f.Title)
			continue
		}
		f.Plot, f.legend, f.Hidden = p, legend, hidden
		figs = append(figs, f)
	}
	return figs
}

// sizePlot draws a metric against message size: log2 x axis labelled like
// OSU's size column, one line per configuration; bandwidth on a linear axis
// from zero, latency on a log axis because it spans decades.
func (r *Report) sizePlot(f *Figure) (p *plot.Plot, legend *boxLegend, hidden, drawn int) {
	p = plot.New()
	p.Title.Text = f.Title
	p.Title.TextStyle.Font = font.From(font.Font{Typeface: sans.Typeface, Variant: sans.Variant, Weight: stdfont.WeightBold}, titleSize)
	p.Title.Padding = vg.Points(6)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Tick.Label.Font = font.From(sans, tickSize)
		a.Tick.Length = vg.Points(5)
	}
	legend = &boxLegend{style: p.Legend.TextStyle}
	legend.style.Font = font.From(sans, legendSize)

	p.X.Label.Text = "message size (bytes)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(log2Ticks)
	logY := f.Kind == KindLatency
	if logY {
		p.Y.Label.Text = "latency (µs)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.TickerFunc(log10Ticks)
	} else {
		p.Y.Label.Text = "bandwidth (MB/s)"
	}

	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xDD}
	grid.Horizontal.Color = color.Gray{Y: 0xDD}
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.4), vg.Points(0.4)
	p.Add(grid)

	xmin, xmax, ymin, ymax := 0.0, 0.0, 0.0, 0.0
	for _, s := range f.Series {
		var xys plotter.XYs
		for _, pt := range s.Points {
			if pt.X <= 0 || (logY && pt.Y <= 0) {
				hidden++
				continue
			}
			if drawn == 0 {
				xmin, xmax, ymin, ymax = pt.X, pt.X, pt.Y, pt.Y
			}
			xmin, xmax = min(xmin, pt.X), max(xmax, pt.X)
			ymin, ymax = min(ymin, pt.Y), max(ymax, pt.Y)
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			drawn++
		}
		if len(xys) == 0 {
			continue
		}
		st := r.configs.style(s.Config)
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			// Values are finite by the bundle's contract; a NaN that got
			// past it must not take the whole report down.
			r.notef("%s: %s not drawn: %v", f.Title, s.Config, err)
			continue
		}
		line.Color, line.Width, line.Dashes = st.Color, vg.Points(1.5), st.Dash
		points.Shape, points.Color, points.Radius = st.Glyph, st.Color, vg.Points(2.5)
		p.Add(line, points)
		legend.add(s.Config, line, points)
	}
	if drawn == 0 {
		return nil, nil, hidden, 0
	}
	p.Add(legend)
	p.X.Min, p.X.Max = log2Range(xmin, xmax)
	if logY {
		p.Y.Min, p.Y.Max = log10Range(ymin, ymax)
	} else {
		// From zero, so heights compare honestly; headroom for the legend.
		p.Y.Min, p.Y.Max = 0, ymax*1.1
		if ymax <= 0 {
			p.Y.Max = 1
		}
	}
	return p, legend, hidden, drawn
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
}

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

func (l *boxLegend) add(name string, thumbs ...plot.Thumbnailer) {
	l.entries = append(l.entries, legendEntry{name: name, thumbs: thumbs})
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
	box := vg.Rectangle{
		Min: vg.Point{X: c.Min.X + inset, Y: c.Max.Y - inset - 2*pad - n*rowH - (n-1)*gap},
		Max: vg.Point{X: c.Min.X + inset + 2*pad + thumbW + em + textW, Y: c.Max.Y - inset},
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
		for _, t := range e.thumbs {
			t.Thumbnail(&icon)
		}
		c.FillText(sty, vg.Point{X: x + thumbW + em, Y: top - rowH/2}, e.name)
		top -= rowH + gap
	}
}
