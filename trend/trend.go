package trend

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/svgplot"
)

// Colours: the series in blue, what needs a look in red, steps in orange,
// the band in a light grey-blue that prints.
var (
	seriesColor  = color.RGBA{R: 0x1f, G: 0x4e, B: 0x99, A: 0xff}
	outsideColor = color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	stepColor    = color.RGBA{R: 0xe0, G: 0x7b, B: 0x00, A: 0xff}
	bandColor    = color.RGBA{R: 0xc6, G: 0xd8, B: 0xef, A: 0xff}
	bandMean     = color.RGBA{R: 0x7f, G: 0x9c, B: 0xc4, A: 0xff}
	repeatColor  = color.RGBA{R: 0x6b, G: 0x8e, B: 0xc9, A: 0xff}
	boundColor   = color.RGBA{R: 0x2e, G: 0x7d, B: 0x32, A: 0xff}
)

// Option configures a figure.
type Option func(*options)

type options struct {
	width, height vg.Length
	dpi           int
	title         string
	runLink       func(run int64) string
	bounds        []bound
}

// bound is a horizontal line at Y: an expectation's limit.
type bound struct {
	y     float64
	label string
}

// WithBound draws a horizontal line at y (in the history's unit),
// labelled: an acceptance reference's limit (sbench check).
func WithBound(y float64, label string) Option {
	return func(o *options) { o.bounds = append(o.bounds, bound{y, label}) }
}

// WithRunLink makes each point of an SVG figure drawn for a page
// (svgplot.Render) link to link(run): the site's run page.
func WithRunLink(link func(run int64) string) Option {
	return func(o *options) { o.runLink = link }
}

// Groups of the figure's parts in an SVG drawn for a page, which the
// page's buttons show and hide (svgplot.Group).
const (
	GroupRuns    = 0 // the line and points of the runs
	GroupBand    = 1 // the control bands and their means
	GroupRepeats = 2 // the range of each run's repeats
	GroupOutside = 3 // the rings of points outside their band
	GroupSteps   = 4 // the steps, their levels and labels
)

func newOptions(opts []Option) options {
	o := options{width: 9 * vg.Inch, height: 4.5 * vg.Inch, dpi: 144}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Plot draws a history: one point per run in time order (x is the run's
// position, labelled with its date), a vertical bar over the range of a
// run's repeats, the control band of each point as a shaded box with its
// mean, points outside their band ringed in red, and each step as a dashed
// orange line before the first run of the new level, labelled with that
// run (and job), with the medians of the levels either side.
func Plot(h *compare.History, opts ...Option) (*plot.Plot, error) {
	o := newOptions(opts)
	if len(h.Points) == 0 {
		return nil, fmt.Errorf("plot history of %s %s: no points", h.Benchmark, h.Metric)
	}
	p := plot.New()
	// Sans, as in the reports' figures.
	for _, f := range []*font.Font{&p.Title.TextStyle.Font, &p.X.Label.TextStyle.Font, &p.Y.Label.TextStyle.Font,
		&p.X.Tick.Label.Font, &p.Y.Tick.Label.Font, &p.Legend.TextStyle.Font} {
		f.Variant = "Sans"
	}
	p.Title.Text = cmp.Or(o.title, title(h))
	p.Y.Label.Text = h.Metric
	if h.Unit != "" {
		p.Y.Label.Text += " (" + h.Unit + ")"
	}
	p.X.Label.Text = "run, oldest first"
	if first, last := h.Points[0].When.UTC(), h.Points[len(h.Points)-1].When.UTC(); first.Year() == last.Year() {
		// The ticks say month and day; the year, the same for all, is said once.
		p.X.Label.Text += fmt.Sprintf(" (%d)", first.Year())
	}
	p.X.Tick.Marker = dateTicks(h)
	p.Add(plotter.NewGrid())

	if err := addBands(p, h); err != nil {
		return nil, err
	}
	if err := addSeries(p, h, &o); err != nil {
		return nil, err
	}
	lo, hi := yRange(h)
	for _, b := range o.bounds {
		span := hi - lo
		lo, hi = min(lo, b.y-0.05*span), max(hi, b.y+0.1*span)
	}
	if err := addSteps(p, h, lo, hi); err != nil {
		return nil, err
	}
	if err := addBounds(p, o.bounds, float64(len(h.Points))+0.5); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max = 0.5, float64(len(h.Points))+0.5
	p.Y.Min, p.Y.Max = lo, hi
	p.Legend.Top = true
	p.Legend.Left = true
	return p, nil
}

// addBands draws each point's control band (a box and its mean) and the
// range of its repeats.
func addBands(p *plot.Plot, h *compare.History) error {
	for i, pt := range h.Points {
		x := float64(i + 1)
		if b := pt.Band; b != nil {
			box, err := plotter.NewPolygon(plotter.XYs{{X: x - 0.5, Y: b.Lo}, {X: x + 0.5, Y: b.Lo}, {X: x + 0.5, Y: b.Hi}, {X: x - 0.5, Y: b.Hi}})
			if err != nil {
				return err
			}
			box.Color = bandColor
			box.LineStyle.Width = 0
			p.Add(svgplot.Group(GroupBand, box))
			mean, err := plotter.NewLine(plotter.XYs{{X: x - 0.5, Y: b.Mean}, {X: x + 0.5, Y: b.Mean}})
			if err != nil {
				return err
			}
			mean.Color = bandMean
			mean.Width = vg.Points(0.75)
			p.Add(svgplot.Group(GroupBand, mean))
		}
		if pt.N > 1 && pt.Max > pt.Min {
			bar, err := plotter.NewLine(plotter.XYs{{X: x, Y: pt.Min}, {X: x, Y: pt.Max}})
			if err != nil {
				return err
			}
			bar.Color = repeatColor
			bar.Width = vg.Points(2)
			p.Add(svgplot.Group(GroupRepeats, bar))
		}
	}
	return nil
}

// addSeries draws the runs' values, linked and with their hover text,
// and rings those outside their band.
func addSeries(p *plot.Plot, h *compare.History, o *options) error {
	xys := make(plotter.XYs, len(h.Points))
	var outside plotter.XYs
	for i, pt := range h.Points {
		xys[i] = plotter.XY{X: float64(i + 1), Y: pt.Value}
		if pt.Outside {
			outside = append(outside, xys[i])
		}
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	line.Color = seriesColor
	line.Width = vg.Points(1.25)
	points.Color = seriesColor
	points.Shape = draw.CircleGlyph{}
	points.Radius = vg.Points(2.5)
	hover := make([]svgplot.Point, len(h.Points))
	for i, pt := range h.Points {
		hover[i] = svgplot.Point{X: float64(i + 1), Y: pt.Value, Tip: pointTip(h, pt)}
		if o.runLink != nil {
			hover[i].Href = o.runLink(pt.Run)
		}
	}
	p.Add(svgplot.Group(GroupRuns, line), svgplot.Group(GroupRuns, points), svgplot.Points(GroupRuns, hover))
	p.Legend.Add(legendName(h), line, points)
	if len(outside) > 0 {
		ring, err := plotter.NewScatter(outside)
		if err != nil {
			return err
		}
		ring.Color = outsideColor
		ring.Shape = thickRing{}
		ring.Radius = vg.Points(6)
		p.Add(svgplot.Group(GroupOutside, ring))
		p.Legend.Add("outside control band", ring)
	}
	return nil
}

// addSteps draws each step as a dashed line between y = lo and hi, the
// levels either side, and a label naming its first run.
func addSteps(p *plot.Plot, h *compare.History, lo, hi float64) error {
	var labels plotter.XYLabels
	for _, c := range h.Changes {
		x := float64(c.Index) + 0.5 // between the last old and first new run
		v, err := plotter.NewLine(plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}})
		if err != nil {
			return err
		}
		v.LineStyle = stepStyle
		p.Add(svgplot.Group(GroupSteps, v))
		start, end := 0.5, float64(len(h.Points))+0.5
		for _, o := range h.Changes {
			if o.Index < c.Index && float64(o.Index)+0.5 > start {
				start = float64(o.Index) + 0.5
			}
			if o.Index > c.Index && float64(o.Index)+0.5 < end {
				end = float64(o.Index) + 0.5
			}
		}
		for _, lvl := range []plotter.XYs{{{X: start, Y: c.Before}, {X: x, Y: c.Before}}, {{X: x, Y: c.After}, {X: end, Y: c.After}}} {
			l, err := plotter.NewLine(lvl)
			if err != nil {
				return err
			}
			l.Color = stepColor
			l.Width = vg.Points(1)
			p.Add(svgplot.Group(GroupSteps, l))
		}
		text := fmt.Sprintf("run %d", c.Run)
		if c.Job != "" {
			text += " (job " + c.Job + ")"
		}
		text += fmt.Sprintf(" %+.1f%%", c.Delta*100)
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: hi})
		labels.Labels = append(labels.Labels, text)
	}
	if len(labels.XYs) > 0 {
		l, err := newLabels(labels, stepColor, draw.YTop)
		if err != nil {
			return err
		}
		p.Add(svgplot.Group(GroupSteps, l))
		p.Legend.Add("step (first run of the new level)", &plotter.Line{LineStyle: stepStyle})
	}
	return nil
}

// stepStyle is the dashed line of a step.
var stepStyle = draw.LineStyle{Color: stepColor, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}

// newLabels are texts at points, in Sans and c, starting at the point and
// aligned on it vertically by y.
func newLabels(xyl plotter.XYLabels, c color.Color, y draw.YAlignment) (*plotter.Labels, error) {
	l, err := plotter.NewLabels(xyl)
	if err != nil {
		return nil, err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].Font.Variant = "Sans"
		l.TextStyle[i].Color = c
		l.TextStyle[i].XAlign = draw.XLeft
		l.TextStyle[i].YAlign = y
	}
	return l, nil
}

// addBounds draws each bound as a dash-dotted line across the figure,
// labelled at its left end.
func addBounds(p *plot.Plot, bounds []bound, end float64) error {
	for _, b := range bounds {
		l, err := plotter.NewLine(plotter.XYs{{X: 0.5, Y: b.y}, {X: end, Y: b.y}})
		if err != nil {
			return err
		}
		l.Color = boundColor
		l.Width = vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}
		p.Add(l)
		labels, err := newLabels(plotter.XYLabels{XYs: plotter.XYs{{X: 0.6, Y: b.y}}, Labels: []string{b.label}}, boundColor, draw.YBottom)
		if err != nil {
			return err
		}
		p.Add(labels)
		p.Legend.Add("expectation: "+b.label, l)
	}
	return nil
}

// pointTip is what a run's point says on hover: when, which run and job,
// its value and repeats, its control band.
func pointTip(h *compare.History, pt compare.Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s · run %d", pt.When.UTC().Format("2006-01-02 15:04"), pt.Run)
	if pt.Job != "" {
		fmt.Fprintf(&b, " (job %s)", pt.Job)
	}
	fmt.Fprintf(&b, "\n%s %s", formatValue(pt.Value), h.Unit)
	if pt.N > 1 {
		fmt.Fprintf(&b, " (median of %d, %s–%s)", pt.N, formatValue(pt.Min), formatValue(pt.Max))
	}
	if pt.Band != nil {
		fmt.Fprintf(&b, "\ncontrol band %s–%s", formatValue(pt.Band.Lo), formatValue(pt.Band.Hi))
	}
	if pt.Outside {
		b.WriteString("\nOUTSIDE the control band")
	}
	return b.String()
}

func formatValue(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// yRange spans every point, repeat range and band, with a margin on top
// for the step labels.
func yRange(h *compare.History) (lo, hi float64) {
	lo, hi = h.Points[0].Min, h.Points[0].Max
	for _, p := range h.Points {
		lo, hi = min(lo, p.Min, p.Value), max(hi, p.Max, p.Value)
		if p.Band != nil {
			lo, hi = min(lo, p.Band.Lo), max(hi, p.Band.Hi)
		}
	}
	span := hi - lo
	if span == 0 {
		span = max(1, hi*0.1)
	}
	// Room on top for the legend and the steps' labels.
	return lo - 0.05*span, hi + 0.3*span
}

func title(h *compare.History) string {
	s := h.Benchmark + ": " + h.Metric
	if h.X != nil {
		if h.XUnit == results.UnitBytes {
			s += " at " + sizes.Label(*h.X)
		} else {
			s += fmt.Sprintf(" at %g %s", *h.X, h.XUnit)
		}
	}
	if h.Variant != "" {
		s += " (" + h.Variant + ")"
	}
	return s
}

func legendName(h *compare.History) string {
	s := "run (median of repeats)"
	if h.Better != "" {
		s += ", " + h.Better + " is better"
	}
	return s
}

// dateTicks labels up to ten runs, evenly spread, with their date: month
// and day, and the year too when the runs span more than one, or a
// history of two Decembers would read as one.
func dateTicks(h *compare.History) plot.Ticker {
	n := len(h.Points)
	step := max(1, (n+9)/10)
	layout := "01-02"
	if h.Points[0].When.UTC().Year() != h.Points[n-1].When.UTC().Year() {
		layout = time.DateOnly
	}
	var ticks plot.ConstantTicks
	for i := 0; i < n; i++ {
		t := plot.Tick{Value: float64(i + 1)}
		if i%step == 0 {
			t.Label = h.Points[i].When.UTC().Format(layout) + "\n#" + fmt.Sprint(h.Points[i].Run)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// thickRing is a ring glyph drawn with a heavier line, so that a point
// outside its band stands out in print.
type thickRing struct{}

func (thickRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.75)})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// Write draws the history's figure to w as png, pdf or svg.
func Write(w io.Writer, h *compare.History, format string, opts ...Option) error {
	o := newOptions(opts)
	p, err := Plot(h, opts...)
	if err != nil {
		return err
	}
	var c draw.Canvas
	var wt io.WriterTo
	switch strings.ToLower(format) {
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(o.width, o.height), vgimg.UseDPI(o.dpi), vgimg.UseBackgroundColor(color.White))
		c, wt = draw.New(img), vgimg.PngCanvas{Canvas: img}
	case "pdf", "svg":
		fc, err := draw.NewFormattedCanvas(o.width, o.height, strings.ToLower(format))
		if err != nil {
			return err
		}
		c, wt = draw.New(fc), fc
	default:
		return fmt.Errorf("history figure: format %q: want png, pdf or svg", format)
	}
	p.Draw(c)
	_, err = wt.WriteTo(w)
	return err
}

// Render returns the figure as the format named by path's extension.
func Render(path string, h *compare.History, opts ...Option) ([]byte, error) {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	var buf bytes.Buffer
	if err := Write(&buf, h, format, opts...); err != nil {
		return nil, fmt.Errorf("history figure %s: %w", path, err)
	}
	return buf.Bytes(), nil
}
