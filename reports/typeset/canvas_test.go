package typeset

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jung-kurt/gofpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// canvasDoc is an uncompressed A4 document in points with a canvas on the
// 200×100 pt rectangle whose top-left corner is (100, 100).
func canvasDoc() (*gofpdf.Fpdf, *Canvas) {
	pdf := gofpdf.New("P", "pt", "A4", "")
	pdf.SetCompression(false)
	pdf.AddPage()
	pdf.SetFont("Helvetica", "", 10)
	return pdf, NewCanvas(pdf, 100, 100, 200, 100)
}

// drawPDF draws p through a Canvas on the w×h pt rectangle at (x, y) of a
// new page of pdf, and returns the document.
func drawPDF(tb testing.TB, pdf *gofpdf.Fpdf, p *plot.Plot, x, y, w, h float64) []byte {
	tb.Helper()
	pdf.AddPage()
	c := NewCanvas(pdf, x, y, w, h)
	p.Draw(draw.New(c))
	return []byte(stream(tb, pdf, c))
}

// stream returns the document's bytes after closing c.
func stream(t testing.TB, pdf *gofpdf.Fpdf, c *Canvas) string {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// The canvas's origin is its rectangle's bottom-left corner, y up; PDF's is
// the page's bottom-left corner. A4 is 841.89 pt tall, the rectangle's
// bottom edge is 200 pt from the top, so canvas (x, y) is PDF
// (100 + x, 641.89 + y).
func TestCanvasPath(t *testing.T) {
	pdf, c := canvasDoc()
	c.SetLineWidth(vg.Points(2))
	c.SetColor(color.RGBA{R: 255, A: 255})
	var p vg.Path
	p.Move(vg.Point{X: 10, Y: 20})
	p.Line(vg.Point{X: 30, Y: 40})
	p.Line(vg.Point{X: 30, Y: 20})
	p.Close()
	c.Stroke(p)
	c.Fill(p)
	s := stream(t, pdf, c)
	for _, want := range []string{
		"q 100.00 741.89 200.00 -100.00 re W n", // the clip to the rectangle
		"1.000 0.000 0.000 RG",                  // stroke colour
		"2.00 w",
		"110.00 661.89 m\n130.00 681.89 l\n130.00 661.89 l\nh\nS",
		"1.000 0.000 0.000 rg", // fill colour
		"110.00 661.89 m\n130.00 681.89 l\n130.00 661.89 l\nh\nf",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("page stream lacks %q", want)
		}
	}
}

func TestCanvasArc(t *testing.T) {
	pdf, c := canvasDoc()
	var p vg.Path
	p.Move(vg.Point{X: 60, Y: 50})
	p.Arc(vg.Point{X: 50, Y: 50}, 10, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
	s := stream(t, pdf, c)
	// A full circle is four quarter-turn cubics, with no zero-length line
	// from the move to the arc's start.
	curves := regexp.MustCompile(`(?m)^([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+) ([-\d.]+) c$`).FindAllStringSubmatch(s, -1)
	if len(curves) != 4 {
		t.Fatalf("circle drawn with %d curves, want 4:\n%s", len(curves), s)
	}
	if strings.Contains(s, "160.00 691.89 m\n160.00 691.89 l") {
		t.Errorf("arc starts with a zero-length line")
	}
	// Ends of the quarters: top, left, bottom, back to the right.
	want := [][2]float64{{150, 701.89}, {140, 691.89}, {150, 681.89}, {160, 691.89}}
	for i, m := range curves {
		x, _ := strconv.ParseFloat(m[5], 64)
		y, _ := strconv.ParseFloat(m[6], 64)
		if math.Abs(x-want[i][0]) > 0.011 || math.Abs(y-want[i][1]) > 0.011 {
			t.Errorf("quarter %d ends at (%v, %v), want %v", i, x, y, want[i])
		}
		// Control points of a quarter circle sit 0.5523 r from its ends.
		c1x, _ := strconv.ParseFloat(m[1], 64)
		c1y, _ := strconv.ParseFloat(m[2], 64)
		if i == 0 && (math.Abs(c1x-160) > 0.011 || math.Abs(c1y-(691.89+5.52)) > 0.011) {
			t.Errorf("first control point is (%v, %v), want (160, 697.41)", c1x, c1y)
		}
	}
}

func TestArcBeziersAccuracy(t *testing.T) {
	const r = 100
	for _, sweep := range []float64{math.Pi / 3, -math.Pi, 1.5 * math.Pi, 2 * math.Pi} {
		start := 0.3
		p0 := arcPoint(vg.Point{}, r, start)
		for _, seg := range arcBeziers(vg.Point{}, r, start, sweep) {
			// Every point of the cubic stays within 0.03% of the radius.
			for k := 0; k <= 10; k++ {
				u := float64(k) / 10
				b := func(a, b, c, d vg.Length) float64 {
					return float64((1-u)*(1-u)*(1-u))*float64(a) + 3*(1-u)*(1-u)*u*float64(b) + 3*(1-u)*u*u*float64(c) + u*u*u*float64(d)
				}
				x := b(p0.X, seg[0].X, seg[1].X, seg[2].X)
				y := b(p0.Y, seg[0].Y, seg[1].Y, seg[2].Y)
				if d := math.Abs(math.Hypot(x, y) - r); d > 0.03 {
					t.Errorf("sweep %.2f: point off the circle by %.4f", sweep, d)
				}
			}
			p0 = seg[2]
		}
		if end := arcPoint(vg.Point{}, r, start+sweep); !near(p0, end) && math.Hypot(float64(p0.X-end.X), float64(p0.Y-end.Y)) > 1e-9 {
			t.Errorf("sweep %.2f ends at %v, want %v", sweep, p0, end)
		}
	}
}

func TestCanvasQuadraticCurve(t *testing.T) {
	pdf, c := canvasDoc()
	var p vg.Path
	p.Move(vg.Point{X: 0, Y: 0})
	p.QuadTo(vg.Point{X: 30, Y: 60}, vg.Point{X: 60, Y: 0})
	c.Stroke(p)
	s := stream(t, pdf, c)
	// The quadratic's cubic twin: controls at 2/3 of the way to (30, 60).
	if want := "120.00000 681.89000 140.00000 681.89000 160.00000 641.89000 c"; !strings.Contains(s, want) {
		t.Errorf("page stream lacks %q", want)
	}
}

func TestCanvasPushPopAndDash(t *testing.T) {
	pdf, c := canvasDoc()
	line := func() vg.Path {
		var p vg.Path
		p.Move(vg.Point{X: 0, Y: 0})
		p.Line(vg.Point{X: 10, Y: 0})
		return p
	}
	c.SetColor(color.RGBA{R: 255, A: 255})
	c.SetLineDash([]vg.Length{2, 3}, 1)
	c.Push()
	c.SetColor(color.RGBA{B: 255, A: 255})
	c.SetLineDash(nil, 0)
	c.Translate(vg.Point{X: 50, Y: 0})
	c.Stroke(line())
	c.Pop()
	c.Stroke(line())
	c.Stroke(line()) // same state: no repeated operators
	s := stream(t, pdf, c)
	blue := strings.Index(s, "0.000 0.000 1.000 RG")
	red := strings.LastIndex(s, "1.000 0.000 0.000 RG")
	if blue < 0 || red < blue {
		t.Fatalf("want blue, then red again after Pop:\n%s", s)
	}
	after := s[red:]
	if !strings.Contains(after, "[2.00 3.00] 1.00 d") {
		t.Errorf("dash pattern not restored by Pop")
	}
	if !strings.Contains(s[blue:red], "150.00 641.89 m") {
		t.Errorf("translated line not at x=150")
	}
	if n := strings.Count(after, "RG"); n != 1 {
		t.Errorf("red written %d times after Pop, want once", n)
	}
}

func TestCanvasAlphaIsReset(t *testing.T) {
	pdf, c := canvasDoc()
	c.SetColor(color.NRGBA{G: 255, A: 128})
	var p vg.Path
	p.Move(vg.Point{})
	p.Line(vg.Point{X: 10, Y: 10})
	p.Line(vg.Point{X: 10, Y: 0})
	c.Fill(p)
	s := stream(t, pdf, c)
	if !strings.Contains(s, "/ca 0.502") {
		t.Errorf("no graphics state with alpha 0.502")
	}
	if !strings.Contains(s, "0.000 1.000 0.000 rg") {
		t.Errorf("translucent colour not un-premultiplied to pure green")
	}
	if !strings.Contains(s, "/ca 1.000") {
		t.Errorf("alpha not reset to 1 for the rest of the document")
	}
}

// Text is real text, in the core font matching the Liberation face gonum
// measured; rotated text is rotated about its own origin.
func TestCanvasText(t *testing.T) {
	pdf, c := canvasDoc()
	face := font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Sans"}, 12)
	c.FillString(face, vg.Point{X: 10, Y: 10}, "flat µs")
	c.Push()
	c.Rotate(math.Pi / 2)
	c.FillString(face, vg.Point{X: 10, Y: -20}, "up")
	c.Pop()
	bold := font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Serif", Weight: 700}, 9)
	c.FillString(bold, vg.Point{X: 0, Y: 0}, "serif")
	s := stream(t, pdf, c)
	for _, want := range []string{
		"BT 110.00 651.89 Td (flat \xb5s) Tj ET",
		"0.00000 1.00000 -1.00000 0.00000", // a quarter turn
		"/BaseFont /Helvetica", "/BaseFont /Times-Bold",
		"12.00 Tf", "9.00 Tf",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("document lacks %q", want)
		}
	}
}

// After Close the document's own text must come out in its own font even
// when that is the font the figure used last.
func TestCanvasCloseRestoresFont(t *testing.T) {
	pdf, c := canvasDoc()
	face := font.DefaultCache.Lookup(font.Font{Typeface: "Liberation", Variant: "Sans"}, 12)
	c.FillString(face, vg.Point{X: 10, Y: 10}, "in figure")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	pdf.SetFont("Helvetica", "", 12) // same as the figure's last font
	pdf.Text(300, 300, "after figure")
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	end := strings.LastIndex(s, "\nQ\n")
	text := strings.Index(s, "(after figure)")
	if end < 0 || text < end || !regexp.MustCompile(`/F\w+ 12\.00 Tf`).MatchString(s[end:text]) {
		t.Errorf("no font set between the figure's Q and the Document's text:\n%s", s[max(0, end-200):text+20])
	}
}

func TestCanvasDrawImage(t *testing.T) {
	pdf, c := canvasDoc()
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range img.Pix {
		img.Pix[i] = 0x80
		if i%4 == 3 {
			img.Pix[i] = 0xFF // opaque: no soft mask, one image object
		}
	}
	c.DrawImage(vg.Rectangle{Min: vg.Point{X: 10, Y: 10}, Max: vg.Point{X: 50, Y: 30}}, img)
	c.DrawImage(vg.Rectangle{Min: vg.Point{X: 60, Y: 10}, Max: vg.Point{X: 100, Y: 30}}, img)
	s := stream(t, pdf, c)
	if n := strings.Count(s, "/Subtype /Image"); n != 1 {
		t.Errorf("the same image is stored %d times, want once", n)
	}
	if !strings.Contains(s, "q 40.00000 0 0 20.00000 110.00000 651.89000 cm") {
		t.Errorf("image not placed at (110, 651.89) size 40×20")
	}
}

// A whole plot through the canvas: pdftotext finds its title, axis labels,
// tick labels and legend entries.
func TestCanvasPlotText(t *testing.T) {
	p := plot.New()
	p.Title.Text = "canvas check"
	p.X.Label.Text = "x label"
	p.Y.Label.Text = "y label"
	for i, name := range []string{"alpha-line", "beta-line"} {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(i)}, {X: 10, Y: float64(i + 5)}})
		if err != nil {
			t.Fatal(err)
		}
		l.Color = []color.RGBA{{R: 0xE6, G: 0x9F, A: 0xFF}, {R: 0x56, G: 0xB4, B: 0xE9, A: 0xFF}}[i]
		p.Add(l)
		p.Legend.Add(name, l)
	}
	text := pdfText(t, drawPDF(t, gofpdf.New("P", "pt", "A4", ""), p, 50, 50, 400, 300))
	for _, want := range []string{"canvas check", "x label", "y label", "alpha-line", "beta-line", "10"} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext output lacks %q:\n%s", want, text)
		}
	}
}

func TestCoreFont(t *testing.T) {
	for _, tc := range []struct {
		f            font.Font
		family, styl string
	}{
		{font.Font{Variant: "Sans"}, "Helvetica", ""},
		{font.Font{Variant: "Serif", Weight: 700}, "Times", "B"},
		{font.Font{Variant: "Mono", Style: 1}, "Courier", "I"},
		{font.Font{Variant: "Sans", Weight: 700, Style: 1}, "Helvetica", "BI"},
	} {
		family, style := coreFont(tc.f)
		if family != tc.family || style != tc.styl {
			t.Errorf("coreFont(%+v) = %s %q, want %s %q", tc.f, family, style, tc.family, tc.styl)
		}
	}
}
