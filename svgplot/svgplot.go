package svgplot

import (
	"bytes"
	"fmt"
	"html"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// canvas is vgsvg's canvas with what Render adds to its output: the hover
// targets, in canvas coordinates (origin bottom-left, points).
type canvas struct {
	*vgsvg.Canvas
	hot []hotspot
}

type hotspot struct {
	series    int
	x, y      vg.Length
	tip, href string
}

// Kinds of groups, told apart in the marker.
const (
	kindSeries = iota
	kindLegend
	kinds
)

// A group's marker is a rotation by a whole number of turns: markBase plus
// kind·maxSeries plus the series. No plot rotates by a million turns, and
// were the marker ever left in, it would change nothing.
const (
	markBase  = 1 << 20
	maxSeries = 1 << 18
)

func mark(kind, series int) float64 {
	return 2 * math.Pi * float64(markBase+kind*maxSeries+series)
}

// Begin starts a group of series (0 ≤ series < 262144) on c: a legend
// entry when legend is set, else the series' own drawing. It must be
// matched by End. On a canvas not made by Render it does nothing.
func Begin(c vg.Canvas, series int, legend bool) {
	sc := ours(c)
	if sc == nil || series < 0 || series >= maxSeries {
		return
	}
	kind := kindSeries
	if legend {
		kind = kindLegend
	}
	sc.Push()
	sc.Rotate(mark(kind, series))
}

// HitArea fills r with nothing visible on a canvas of Render, so that a
// click anywhere on a legend entry's row — not only on its line or its
// letters — reaches its group. Elsewhere it draws nothing.
func HitArea(c vg.Canvas, r vg.Rectangle) {
	sc := ours(c)
	if sc == nil {
		return
	}
	sc.Push()
	sc.SetColor(color.NRGBA{})
	sc.Fill(r.Path())
	sc.Pop()
}

// End ends the group Begin started.
func End(c vg.Canvas, series int) {
	if sc := ours(c); sc != nil && series >= 0 && series < maxSeries {
		sc.Pop()
	}
}

// Group returns p drawn as series: on a canvas of Render, in a group the
// page's legend can hide; elsewhere exactly as p.
func Group(series int, p plot.Plotter) plot.Plotter { return group{p, series} }

type group struct {
	plot.Plotter
	series int
}

func (g group) Plot(c draw.Canvas, p *plot.Plot) {
	Begin(c.Canvas, g.series, false)
	g.Plotter.Plot(c, p)
	End(c.Canvas, g.series)
}

// DataRange passes on the wrapped plotter's range, if it has one, so that
// wrapping a plotter never changes the axes.
func (g group) DataRange() (xmin, xmax, ymin, ymax float64) {
	if dr, ok := g.Plotter.(plot.DataRanger); ok {
		return dr.DataRange()
	}
	return math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
}

// GlyphBoxes passes on the wrapped plotter's glyph boxes, by which gonum
// pads the axes so that glyphs at the edge are not cut.
func (g group) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	if gb, ok := g.Plotter.(plot.GlyphBoxer); ok {
		return gb.GlyphBoxes(p)
	}
	return nil
}

// Point is a hover target: a data point, what it is, and where its source
// is ("" for nowhere).
type Point struct {
	X, Y float64
	Tip  string
	Href string
}

// Points returns a plotter that draws nothing and marks pts, in data
// coordinates, as hover targets of series on a canvas of Render. Points
// outside the data area (or not on a log axis) are left out.
func Points(series int, pts []Point) plot.Plotter { return points{series, pts} }

type points struct {
	series int
	pts    []Point
}

func (h points) Plot(c draw.Canvas, p *plot.Plot) {
	sc := ours(c.Canvas)
	if sc == nil {
		return
	}
	tx, ty := p.Transforms(&c)
	for _, pt := range h.pts {
		x, y := tx(pt.X), ty(pt.Y)
		if bad(float64(x)) || bad(float64(y)) || !c.Contains(vg.Point{X: x, Y: y}) {
			continue
		}
		sc.hot = append(sc.hot, hotspot{series: h.series, x: x, y: y, tip: pt.Tip, href: pt.Href})
	}
}

// ours finds the canvas of Render under c: gonum hands plotters a
// draw.Canvas holding the padded data area's draw.Canvas, holding ours.
func ours(c vg.Canvas) *canvas {
	for {
		switch v := c.(type) {
		case *canvas:
			return v
		case draw.Canvas:
			c = v.Canvas
		case *draw.Canvas:
			c = v.Canvas
		default:
			return nil
		}
	}
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) }

// Render draws p at w×h as an SVG element for inlining in HTML. label is
// its accessible name (the figure's title).
func Render(p *plot.Plot, w, h vg.Length, label string) ([]byte, error) {
	c := &canvas{Canvas: vgsvg.New(w, h)}
	p.Draw(draw.New(c))
	var raw bytes.Buffer
	if _, err := c.WriteTo(&raw); err != nil {
		return nil, fmt.Errorf("svg figure %q: %w", label, err)
	}
	body := raw.Bytes()
	i := bytes.Index(body, []byte("<svg"))
	j := bytes.IndexByte(body[max(i, 0):], '>')
	if i < 0 || j < 0 {
		return nil, fmt.Errorf("svg figure %q: vgsvg wrote no <svg> element", label)
	}
	body = body[i+j+1:]
	end := bytes.LastIndex(body, []byte("</svg>"))
	if end < 0 {
		return nil, fmt.Errorf("svg figure %q: vgsvg wrote no </svg>", label)
	}
	body = body[:end]

	var out bytes.Buffer
	out.Grow(len(body) + 64*len(c.hot) + 256)
	fmt.Fprintf(&out, `<svg class="sb-fig" viewBox="0 0 %s %s" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg">`,
		num(w.Points()), num(h.Points()), html.EscapeString(label))
	out.Write(fonts.ReplaceAllFunc(markers.ReplaceAllFunc(body, unmark), fallback))
	if len(c.hot) > 0 {
		out.WriteString(`<g class="sb-hot">`)
		for _, hs := range c.hot {
			fmt.Fprintf(&out, `<circle cx="%s" cy="%s" r="6" data-s="%d" data-tip="%s"`,
				num(hs.x.Points()), num(h.Points()-hs.y.Points()), hs.series, html.EscapeString(hs.tip))
			if hs.href != "" {
				fmt.Fprintf(&out, ` data-href="%s"`, html.EscapeString(hs.href))
			}
			out.WriteString("/>")
		}
		out.WriteString("</g>")
	}
	out.WriteString("</svg>")
	return out.Bytes(), nil
}

var markers = regexp.MustCompile(`<g transform="rotate\(([-+0-9.eE]+)\)">`)

// unmark turns a group's marker into the group's attributes; any other
// rotation is left as it is.
func unmark(m []byte) []byte {
	sub := markers.FindSubmatch(m)
	deg, err := strconv.ParseFloat(string(sub[1]), 64)
	if err != nil {
		return m
	}
	turns := math.Round(deg / 360)
	if turns < markBase || turns >= markBase+kinds*maxSeries {
		return m
	}
	rel := int(turns) - markBase
	class := "sb-s"
	if rel/maxSeries == kindLegend {
		class = "sb-leg"
	}
	return fmt.Appendf(nil, `<g class="%s" data-s="%d">`, class, rel%maxSeries)
}

var fonts = regexp.MustCompile(`font-family:[^;"]+`)

// fallback names, after the font gonum measured the text with, fonts of the
// same metrics the reader likely has, then the generic family: the page
// loads no font.
func fallback(m []byte) []byte {
	name := strings.TrimSpace(strings.TrimPrefix(string(m), "font-family:"))
	generic := "sans-serif"
	switch {
	case strings.Contains(name, "Mono"):
		generic = "'DejaVu Sans Mono',Courier,monospace"
	case strings.Contains(name, "Serif"):
		generic = "'Times New Roman',Times,serif"
	case strings.HasPrefix(name, "Liberation"):
		generic = "Arial,Helvetica,sans-serif"
	}
	return fmt.Appendf(nil, "font-family:'%s',%s", strings.ReplaceAll(name, "'", ""), generic)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 32) }
