package typeset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"

	"github.com/jung-kurt/gofpdf"
	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// Canvas implements gonum/plot's vg.Canvas on a rectangle of a gofpdf page,
// so a plot is drawn into the document as vector paths and real text.
//
// gonum's own vgpdf draws one plot per document with another PDF library;
// this one shares the caller's document. Three choices follow from that:
//
//   - Transforms are kept here as an affine matrix and applied to every
//     point before it reaches gofpdf, instead of being written as "cm"
//     operators: gonum pushes and pops for every text and glyph, and
//     tracking the matrix ourselves keeps the page stream short and keeps
//     gofpdf's idea of the graphics state true.
//   - The whole figure runs inside one clip region (a q … Q pair) so
//     nothing it draws leaks outside its rectangle, and Close puts gofpdf's
//     colours, line width and font back so the document's own text after
//     the figure is unaffected.
//   - Text is set with the PDF core fonts that are metric-compatible with
//     the Liberation fonts gonum measured it with, so it stays selectable
//     and the PDF embeds no font at all.
type Canvas struct {
	pdf  *gofpdf.Fpdf
	enc  *latin
	x, y float64   // top-left corner of the region, in document units
	w, h vg.Length // size of the region
	k    float64   // points per document unit

	stack []canvasState
	out   emitted // what the page stream currently holds, to skip repeats

	saved    docState
	usedGS   bool // the figure changed alpha: Close must set it back
	usedFont bool // the figure set a font: Close must resynchronise it
	closed   bool
}

// canvasState is what Push saves and Pop restores.
type canvasState struct {
	m     affine
	width vg.Length
	dash  []vg.Length
	offs  vg.Length
	color color.Color
}

// emitted is what the page stream holds now, so that a figure's thousands of
// segments do not each repeat their colour and width. It starts from
// gofpdf's record of the page (which gofpdf keeps true: it rewrites colours
// and width on every new page); the dash pattern has no getter, so the first
// stroke always writes one.
type emitted struct {
	stroke, fill [3]int
	width        float64
	dash         string
	haveDash     bool
	alpha        float64
}

// docState is gofpdf's state before the figure, restored by Close.
type docState struct {
	draw, fill, text [3]int
	width            float64
	fontPt           float64
	alpha            float64
	blend            string
}

// affine maps (x, y) to (a*x + c*y + e, b*x + d*y + f), as PDF's cm does.
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

// mul returns m·n: n is applied first, then m.
func (m affine) mul(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b,
		b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d,
		d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e,
		f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(p vg.Point) (float64, float64) {
	x, y := float64(p.X), float64(p.Y)
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// scale is the factor lengths (line widths, font sizes) grow by.
func (m affine) scale() float64 { return math.Sqrt(math.Abs(m.a*m.d - m.b*m.c)) }

// NewCanvas returns a canvas drawing into the w×h rectangle whose top-left
// corner is (x, y) on the current page of pdf, all in pdf's units. The
// canvas's origin is the rectangle's bottom-left corner, as vg expects. Call
// Close when the figure is drawn.
func NewCanvas(pdf *gofpdf.Fpdf, x, y, w, h float64) *Canvas {
	return newCanvas(pdf, newEncoder(nil), x, y, w, h)
}

func newCanvas(pdf *gofpdf.Fpdf, enc *latin, x, y, w, h float64) *Canvas {
	k := pdf.GetConversionRatio()
	c := &Canvas{
		pdf: pdf, enc: enc,
		x: x, y: y,
		w: vg.Length(w * k), h: vg.Length(h * k),
		k: k,
	}
	c.saved = saveDocState(pdf)
	c.out = emitted{stroke: c.saved.draw, fill: c.saved.fill, width: c.saved.width, alpha: c.saved.alpha}
	pdf.ClipRect(x, y, w, h, false)
	c.stack = []canvasState{{m: identity, width: vg.Points(1), color: color.Black}}
	return c
}

func saveDocState(pdf *gofpdf.Fpdf) docState {
	var s docState
	s.draw[0], s.draw[1], s.draw[2] = pdf.GetDrawColor()
	s.fill[0], s.fill[1], s.fill[2] = pdf.GetFillColor()
	s.text[0], s.text[1], s.text[2] = pdf.GetTextColor()
	s.width = pdf.GetLineWidth()
	s.fontPt, _ = pdf.GetFontSize()
	s.alpha, s.blend = pdf.GetAlpha()
	return s
}

// Close ends the figure: it closes the clip region, which restores the PDF
// graphics state, and brings gofpdf's own record of that state back in line
// with it. It returns the document's error, if drawing caused one.
func (c *Canvas) Close() error {
	if c.closed {
		return c.pdf.Error()
	}
	c.closed = true
	c.pdf.ClipEnd()
	s := c.saved
	c.pdf.SetDrawColor(s.draw[0], s.draw[1], s.draw[2])
	c.pdf.SetFillColor(s.fill[0], s.fill[1], s.fill[2])
	c.pdf.SetTextColor(s.text[0], s.text[1], s.text[2])
	c.pdf.SetLineWidth(s.width)
	c.pdf.SetDashPattern(nil, 0)
	if c.usedGS {
		c.pdf.SetAlpha(s.alpha, s.blend)
	}
	if c.usedFont {
		// Q restored the font the page had before the figure, but gofpdf
		// still believes the figure's last font is current and would skip a
		// SetFont to that same font. SetFontSize always writes gofpdf's
		// current font, after which gofpdf and the page agree again.
		c.pdf.SetFontSize(s.fontPt)
	}
	return c.pdf.Error()
}

func (c *Canvas) state() *canvasState { return &c.stack[len(c.stack)-1] }

// Size returns the size of the canvas's region.
func (c *Canvas) Size() (w, h vg.Length) { return c.w, c.h }

// SetLineWidth sets the width of stroked paths.
func (c *Canvas) SetLineWidth(w vg.Length) { c.state().width = w }

// SetLineDash sets the dash pattern of stroked paths.
func (c *Canvas) SetLineDash(pattern []vg.Length, offset vg.Length) {
	s := c.state()
	s.dash = append([]vg.Length(nil), pattern...)
	s.offs = offset
}

// SetColor sets the stroke, fill and text colour; nil is black.
func (c *Canvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.state().color = clr
}

// Rotate rotates the coordinate system by rad, counter-clockwise.
func (c *Canvas) Rotate(rad float64) {
	sin, cos := math.Sincos(rad)
	s := c.state()
	s.m = s.m.mul(affine{a: cos, b: sin, c: -sin, d: cos})
}

// Translate moves the origin to pt.
func (c *Canvas) Translate(pt vg.Point) {
	s := c.state()
	s.m = s.m.mul(affine{a: 1, d: 1, e: float64(pt.X), f: float64(pt.Y)})
}

// Scale scales the coordinate system.
func (c *Canvas) Scale(x, y float64) {
	s := c.state()
	s.m = s.m.mul(affine{a: x, d: y})
}

// Push saves the transform, line style and colour.
func (c *Canvas) Push() {
	s := *c.state()
	s.dash = append([]vg.Length(nil), s.dash...)
	c.stack = append(c.stack, s)
}

// Pop restores what the matching Push saved.
func (c *Canvas) Pop() {
	if len(c.stack) == 1 {
		panic("typeset: Canvas.Pop without Push")
	}
	c.stack = c.stack[:len(c.stack)-1]
}

// toDoc maps a point in canvas coordinates to document coordinates (origin
// top-left, y down, document units).
func (c *Canvas) toDoc(p vg.Point) (float64, float64) {
	x, y := c.state().m.apply(p)
	return c.x + x/c.k, c.y + (float64(c.h)-y)/c.k
}

// Stroke strokes path p with the current line style and colour.
func (c *Canvas) Stroke(p vg.Path) {
	s := c.state()
	if s.width <= 0 || len(p) == 0 {
		return
	}
	c.emitStroke()
	if c.path(p) {
		c.pdf.DrawPath("D")
	}
}

// Fill fills path p with the current colour.
func (c *Canvas) Fill(p vg.Path) {
	if len(p) == 0 {
		return
	}
	c.emitFill()
	if c.path(p) {
		c.pdf.DrawPath("F")
	}
}

// path writes p's segments; it reports whether anything was written.
func (c *Canvas) path(p vg.Path) bool {
	var (
		cur, start vg.Point
		open       bool
		any        bool
	)
	moveTo := func(pt vg.Point) {
		c.pdf.MoveTo(c.toDoc(pt))
		cur, start, open, any = pt, pt, true, true
	}
	lineTo := func(pt vg.Point) {
		c.pdf.LineTo(c.toDoc(pt))
		cur = pt
	}
	cubicTo := func(c1, c2, pt vg.Point) {
		x1, y1 := c.toDoc(c1)
		x2, y2 := c.toDoc(c2)
		x, y := c.toDoc(pt)
		c.pdf.CurveBezierCubicTo(x1, y1, x2, y2, x, y)
		cur = pt
	}
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			moveTo(comp.Pos)
		case vg.LineComp:
			if !open {
				moveTo(comp.Pos)
				continue
			}
			lineTo(comp.Pos)
		case vg.ArcComp:
			from := arcPoint(comp.Pos, comp.Radius, comp.Start)
			switch {
			case !open:
				moveTo(from)
			case !near(cur, from):
				lineTo(from)
			}
			for _, seg := range arcBeziers(comp.Pos, comp.Radius, comp.Start, comp.Angle) {
				cubicTo(seg[0], seg[1], seg[2])
			}
		case vg.CurveComp:
			if !open {
				moveTo(comp.Pos)
				continue
			}
			switch len(comp.Control) {
			case 1:
				// PDF has no quadratic Bézier: raise it to a cubic.
				q := comp.Control[0]
				c1 := cur.Add(q.Sub(cur).Scale(2.0 / 3))
				c2 := comp.Pos.Add(q.Sub(comp.Pos).Scale(2.0 / 3))
				cubicTo(c1, c2, comp.Pos)
			case 2:
				cubicTo(comp.Control[0], comp.Control[1], comp.Pos)
			default:
				lineTo(comp.Pos)
			}
		case vg.CloseComp:
			if open {
				c.pdf.ClosePath()
				cur = start
			}
		}
	}
	return any
}

func near(a, b vg.Point) bool {
	return math.Abs(float64(a.X-b.X)) < 1e-6 && math.Abs(float64(a.Y-b.Y)) < 1e-6
}

func arcPoint(center vg.Point, r vg.Length, angle float64) vg.Point {
	sin, cos := math.Sincos(angle)
	return vg.Point{X: center.X + r*vg.Length(cos), Y: center.Y + r*vg.Length(sin)}
}

// arcBeziers approximates an arc by cubic Béziers of at most a quarter turn
// each (error below 0.03% of the radius). Each element holds the two control
// points and the end point. Working in canvas coordinates, before the
// transform, keeps arcs right under any rotation or scale.
func arcBeziers(center vg.Point, r vg.Length, start, sweep float64) [][3]vg.Point {
	if sweep == 0 || r == 0 {
		return nil
	}
	n := int(math.Ceil(math.Abs(sweep) / (math.Pi / 2)))
	step := sweep / float64(n)
	k := 4.0 / 3 * math.Tan(step/4)
	segs := make([][3]vg.Point, 0, n)
	a := start
	for i := 0; i < n; i++ {
		b := a + step
		sa, ca := math.Sincos(a)
		sb, cb := math.Sincos(b)
		p0 := vg.Point{X: center.X + r*vg.Length(ca), Y: center.Y + r*vg.Length(sa)}
		p3 := vg.Point{X: center.X + r*vg.Length(cb), Y: center.Y + r*vg.Length(sb)}
		c1 := vg.Point{X: p0.X - r*vg.Length(k*sa), Y: p0.Y + r*vg.Length(k*ca)}
		c2 := vg.Point{X: p3.X + r*vg.Length(k*sb), Y: p3.Y - r*vg.Length(k*cb)}
		segs = append(segs, [3]vg.Point{c1, c2, p3})
		a = b
	}
	return segs
}

// rgba255 returns the colour's non-premultiplied 8-bit components and its
// alpha as a fraction.
func rgba255(clr color.Color) (rgb [3]int, alpha float64) {
	n := color.NRGBAModel.Convert(clr).(color.NRGBA)
	return [3]int{int(n.R), int(n.G), int(n.B)}, float64(n.A) / 255
}

func (c *Canvas) emitAlpha(a float64) {
	a = math.Round(a*1000) / 1000
	if c.out.alpha == a {
		return
	}
	c.pdf.SetAlpha(a, "Normal")
	c.out.alpha = a
	c.usedGS = true
}

func (c *Canvas) emitStroke() {
	s := c.state()
	rgb, a := rgba255(s.color)
	sc := s.m.scale()
	width := float64(s.width) * sc / c.k
	dash := make([]float64, len(s.dash))
	for i, d := range s.dash {
		dash[i] = float64(d) * sc / c.k
	}
	offs := float64(s.offs) * sc / c.k
	dashKey := fmt.Sprint(dash, offs)
	if c.out.stroke != rgb {
		c.pdf.SetDrawColor(rgb[0], rgb[1], rgb[2])
		c.out.stroke = rgb
	}
	if c.out.width != width {
		c.pdf.SetLineWidth(width)
		c.out.width = width
	}
	if !c.out.haveDash || c.out.dash != dashKey {
		c.pdf.SetDashPattern(dash, offs)
		c.out.dash, c.out.haveDash = dashKey, true
	}
	c.emitAlpha(a)
}

func (c *Canvas) emitFill() {
	rgb, a := rgba255(c.state().color)
	if c.out.fill != rgb {
		c.pdf.SetFillColor(rgb[0], rgb[1], rgb[2])
		c.out.fill = rgb
	}
	// gofpdf wraps text in its own colour operators unless the text and fill
	// colours agree; keeping them equal lets text use the fill just written.
	c.pdf.SetTextColor(rgb[0], rgb[1], rgb[2])
	c.emitAlpha(a)
}

// coreFont maps a gonum font to the PDF core font with the same metrics.
func coreFont(f font.Font) (family, style string) {
	switch f.Variant {
	case "Serif":
		family = "Times"
	case "Mono":
		family = "Courier"
	default:
		family = "Helvetica"
	}
	if f.Weight >= stdfont.WeightBold {
		style += "B"
	}
	if f.Style == stdfont.StyleItalic || f.Style == stdfont.StyleOblique {
		style += "I"
	}
	return family, style
}

// FillString draws text with its baseline's left end at pt.
func (c *Canvas) FillString(f font.Face, pt vg.Point, text string) {
	if f.Font.Size == 0 || text == "" {
		return
	}
	s := c.state()
	size := f.Font.Size.Points() * s.m.scale()
	var str string
	if c.enc.utf8 != nil && f.Font.Typeface == UTF8Typeface {
		// gonum measured the text with the embedded font: set it in that.
		c.pdf.SetFont(pdfUTF8Family, "", size)
		str = c.enc.encode(text)
	} else {
		family, style := coreFont(f.Font)
		c.pdf.SetFont(family, style, size)
		str = c.enc.encodeCP1252(text)
	}
	c.usedFont = true
	c.emitFill()
	x, y := c.toDoc(pt)
	angle := math.Atan2(s.m.b, s.m.a) * 180 / math.Pi
	if math.Abs(angle) < 1e-9 {
		c.pdf.Text(x, y, str)
		return
	}
	c.pdf.TransformBegin()
	c.pdf.TransformRotate(angle, x, y)
	c.pdf.Text(x, y, str)
	c.pdf.TransformEnd()
}

// DrawImage draws img scaled into rect. The image is stored once per
// document whatever the number of uses: its name is its content's hash.
func (c *Canvas) DrawImage(rect vg.Rectangle, img image.Image) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		c.pdf.SetError(fmt.Errorf("encode figure image: %w", err))
		return
	}
	sum := sha256.Sum256(buf.Bytes())
	name := "sbench-img-" + hex.EncodeToString(sum[:12])
	opts := gofpdf.ImageOptions{ImageType: "png"}
	c.pdf.RegisterImageOptionsReader(name, opts, &buf)
	// The rectangle's corners after the transform; a rotated image is drawn
	// into their bounding box, which is all a plot needs (heat maps).
	corners := []vg.Point{rect.Min, {X: rect.Max.X, Y: rect.Min.Y}, rect.Max, {X: rect.Min.X, Y: rect.Max.Y}}
	minX, minY := math.Inf(1), math.Inf(1)
	maxX, maxY := math.Inf(-1), math.Inf(-1)
	for _, p := range corners {
		x, y := c.toDoc(p)
		minX, maxX = math.Min(minX, x), math.Max(maxX, x)
		minY, maxY = math.Min(minY, y), math.Max(maxY, y)
	}
	c.pdf.ImageOptions(name, minX, minY, maxX-minX, maxY-minY, false, opts, 0, "")
}

var _ vg.CanvasSizer = (*Canvas)(nil)
