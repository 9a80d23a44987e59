package svgplot

import (
	"bytes"
	"encoding/xml"
	"image/color"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// twoLines is a plot of two series; grouped wraps each in Group and adds
// hover targets.
func twoLines(t *testing.T, grouped bool) *plot.Plot {
	t.Helper()
	p := plot.New()
	p.Title.Text = "bandwidth & latency <test>"
	for i, ys := range [][]float64{{1, 4, 9}, {2, 3, 5}} {
		xys := plotter.XYs{{X: 1, Y: ys[0]}, {X: 2, Y: ys[1]}, {X: 3, Y: ys[2]}}
		l, s, err := plotter.NewLinePoints(xys)
		if err != nil {
			t.Fatal(err)
		}
		l.Color = color.RGBA{R: uint8(200 * i), B: 200, A: 255}
		if !grouped {
			p.Add(l, s)
			continue
		}
		p.Add(Group(i, l), Group(i, s))
		var hs []Point
		for _, xy := range xys {
			hs = append(hs, Point{X: xy.X, Y: xy.Y, Tip: "size " + strconv.Itoa(int(xy.X)) + " \"q\"", Href: "#run-" + strconv.Itoa(i+1)})
		}
		// One point outside the axes: no target for it.
		hs = append(hs, Point{X: 100, Y: 100, Tip: "outside"})
		p.Add(Points(i, hs))
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 4, 0, 10
	return p
}

func TestRenderGroupsAndTargets(t *testing.T) {
	svg, err := Render(twoLines(t, true), 4*vg.Inch, 3*vg.Inch, "a <figure>")
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	if !strings.HasPrefix(s, `<svg class="sb-fig" viewBox="0 0 288 216" role="img" aria-label="a &lt;figure&gt;"`) {
		t.Errorf("svg starts %.120q", s)
	}
	if strings.Contains(s, "<?xml") || strings.Contains(s, "rotate(") {
		t.Errorf("prologue or group markers left in the output")
	}
	for _, want := range []string{`<g class="sb-s" data-s="0">`, `<g class="sb-s" data-s="1">`, `data-href="#run-2"`,
		`data-tip="size 2 &#34;q&#34;"`, "font-family:'Liberation Serif','Times New Roman',Times,serif"} {
		if !strings.Contains(s, want) {
			t.Errorf("svg lacks %s", want)
		}
	}
	if n := strings.Count(s, "<circle "); n != 6 {
		t.Errorf("%d hover targets, want 6 (3 points × 2 series, none for the point off the axes)", n)
	}
	if strings.Count(s, `<g class="sb-s" data-s="0">`) != 2 {
		t.Errorf("series 0 should be two groups (line and points)")
	}
	// The targets lie where the points are drawn: inside the viewBox, a
	// higher value higher up (smaller y).
	cy := regexp.MustCompile(`<circle cx="([0-9.]+)" cy="([0-9.]+)" r="6" data-s="0"`).FindAllStringSubmatch(s, -1)
	if len(cy) != 3 {
		t.Fatalf("series 0 targets: %v", cy)
	}
	var ys []float64
	for _, m := range cy {
		y, _ := strconv.ParseFloat(m[2], 64)
		x, _ := strconv.ParseFloat(m[1], 64)
		if x <= 0 || x >= 288 || y <= 0 || y >= 216 {
			t.Errorf("target at (%g, %g) outside the figure", x, y)
		}
		ys = append(ys, y)
	}
	if !(ys[0] > ys[1] && ys[1] > ys[2]) {
		t.Errorf("targets' y %v: want rising values drawn higher", ys)
	}
	// Well-formed XML, so a browser's HTML parser takes it as one element.
	dec := xml.NewDecoder(bytes.NewReader(svg))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("svg is not well-formed: %v", err)
		}
	}
}

// Groups and targets change nothing on any other canvas: the plot built
// for the HTML report draws the same PNG (and PDF) as before.
func TestGroupsAreInvisibleElsewhere(t *testing.T) {
	png := func(p *plot.Plot) []byte {
		img := vgimg.New(3*vg.Inch, 2*vg.Inch)
		p.Draw(draw.New(img))
		var buf bytes.Buffer
		if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if !bytes.Equal(png(twoLines(t, false)), png(twoLines(t, true))) {
		t.Error("grouped plot draws differently on vgimg")
	}
}

// A legend entry drawn between Begin and End is its own group.
func TestLegendGroup(t *testing.T) {
	p := plot.New()
	p.Add(legendStub{})
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	svg, err := Render(p, 2*vg.Inch, 2*vg.Inch, "legend")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), `<g class="sb-leg" data-s="7">`) {
		t.Errorf("no legend group in %s", svg)
	}
}

type legendStub struct{}

func (legendStub) Plot(c draw.Canvas, _ *plot.Plot) {
	Begin(c.Canvas, 7, true)
	c.StrokeLine2(draw.LineStyle{Color: color.Black, Width: 1}, c.Min.X, c.Min.Y, c.Max.X, c.Max.Y)
	End(c.Canvas, 7)
}
