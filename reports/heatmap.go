package reports

import (
	"cmp"
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/screen"
	"github.com/sbench/sbench/slurm/hostlist"
)

// matrixGroup is one all-pairs measurement (the runner's matrix kernel):
// a value per ordered pair of nodes, from the row's node to the column's.
type matrixGroup struct {
	family, metric, unit, config string
	nodes                        []string // in order of first appearance
	index                        map[string]int
	cells                        map[[2]int][]float64
	runs                         map[int64]bool

	// After finish:
	values  map[[2]int]float64 // median per pair
	summary MatrixSummary
	figs    []int
	// display is the order its heatmap shows the nodes in (node indices).
	display []int
}

func newMatrixGroup(fam, metric, unit, config string) *matrixGroup {
	return &matrixGroup{family: fam, metric: metric, unit: unit, config: config,
		index: map[string]int{}, cells: map[[2]int][]float64{}, runs: map[int64]bool{}}
}

func (g *matrixGroup) node(name string) int {
	i, ok := g.index[name]
	if !ok {
		i = len(g.nodes)
		g.index[name] = i
		g.nodes = append(g.nodes, name)
	}
	return i
}

func (g *matrixGroup) add(run int64, from, to string, v float64) {
	k := [2]int{g.node(from), g.node(to)}
	g.cells[k] = append(g.cells[k], v)
	g.runs[run] = true
}

// higherBetter says which way the metric improves, from its unit.
func (g *matrixGroup) higherBetter() bool { return results.BetterFor(g.unit) != results.BetterLower }

// PairValue is one ordered node pair's value.
type PairValue struct {
	From, To string
	Value    float64
	// Reverse is the value the other way (To to From); 0 when not measured.
	Reverse float64
}

// MatrixSummary is what a reader takes from an all-pairs matrix.
type MatrixSummary struct {
	Family, Metric, Unit, Config string
	Nodes                        int
	Pairs                        int
	Min, Median, Max             float64
	// Worst are the pairs furthest from the median on the bad side, worst
	// first, at most five.
	Worst []PairValue
	// Asymmetry is the largest difference between the two directions of a
	// pair, as a share of the larger (0.25 = 25%), and the pair it is for.
	Asymmetry     float64
	AsymmetryPair PairValue
	Runs          []int64
}

func (g *matrixGroup) finish() {
	g.values = map[[2]int]float64{}
	var all []float64
	for k, vs := range g.cells {
		v := median(vs)
		g.values[k] = v
		all = append(all, v)
	}
	s := MatrixSummary{Family: g.family, Metric: g.metric, Unit: g.unit, Config: g.config,
		Nodes: len(g.nodes), Pairs: len(all), Median: median(all), Runs: slices.Sorted(maps.Keys(g.runs))}
	if len(all) > 0 {
		s.Min, s.Max = slices.Min(all), slices.Max(all)
	}
	// Worst first; ties in node order, so the list is the same every time.
	hb := g.higherBetter()
	keys := slices.SortedFunc(maps.Keys(g.values), func(x, y [2]int) int {
		worse := cmp.Compare(g.values[x], g.values[y])
		if !hb {
			worse = -worse
		}
		return cmp.Or(worse, cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
	})
	for _, k := range keys {
		v := g.values[k]
		if len(s.Worst) == 5 || (hb && v >= s.Median) || (!hb && v <= s.Median) {
			break
		}
		s.Worst = append(s.Worst, g.pair(k))
	}
	for _, k := range keys {
		if k[0] > k[1] {
			continue
		}
		back, ok := g.values[[2]int{k[1], k[0]}]
		v := g.values[k]
		if !ok || max(v, back) == 0 {
			continue
		}
		if a := math.Abs(v-back) / max(v, back); a > s.Asymmetry {
			s.Asymmetry, s.AsymmetryPair = a, g.pair(k)
		}
	}
	g.summary = s
	g.cells = nil
}

func (g *matrixGroup) pair(k [2]int) PairValue {
	p := PairValue{From: g.nodes[k[0]], To: g.nodes[k[1]], Value: g.values[k]}
	p.Reverse = g.values[[2]int{k[1], k[0]}]
	return p
}

// shortfall is how much worse than the matrix's best a value is: 0 for the
// best pair, 0.5 for a pair at half the best bandwidth (or twice the best
// latency).
func (g *matrixGroup) shortfall(v float64) float64 {
	best := g.summary.Max
	if !g.higherBetter() {
		best = g.summary.Min
	}
	if best <= 0 || v <= 0 {
		return 1
	}
	if g.higherBetter() {
		return 1 - v/best
	}
	return 1 - best/v
}

// matrixFigure draws the matrix as a heatmap: rows are senders, columns
// receivers, so a pair's two directions are mirror cells; each cell is
// coloured by its shortfall from the best pair (white when on par, full
// vermillion at half of it) and carries its value when there is room.
// With the screening's verdict on the same runs (package screen), nodes
// are ordered by the mean of their links, best first, so that a bad node's
// row and column end up last, together; the links it found bad carry a
// dot, transient ones a ring, and the rows and columns of the nodes it
// blames are framed. Beyond 32 nodes every few labels are left out, never
// those of blamed nodes.
func (r *Report) matrixFigure(g *matrixGroup) Figure {
	what := "bandwidth"
	unit := g.unit
	if !g.higherBetter() {
		what = "latency"
	}
	f := Figure{
		Name: g.family + "-" + g.metric + "-" + g.config, Family: g.family, Metric: g.metric, Kind: KindMatrix, Unit: unit,
		Title:  fmt.Sprintf("%s: %s between node pairs (%s), %s", g.family, what, unitLabel(unit), g.config),
		matrix: g,
	}
	n := len(g.nodes)
	f.h = vg.Points(math.Min(contentWidth, math.Max(200, 22*float64(n)+90)))
	p, _ := r.newPlot(f.Title)
	h := &heatmap{g: g, style: r.text.style(cellSize, false)}
	h.order, h.screened = r.heatmapOrder(g, what)
	if h.screened != nil {
		h.status = func(a, b int) screen.Status {
			l, ok := h.screened.Link(g.nodes[a], g.nodes[b])
			if !ok {
				return ""
			}
			if what == "latency" {
				return l.LatencyStatus
			}
			return l.BandwidthStatus
		}
		h.rows, h.cols = r.blamedLines(g, what)
	}
	g.display = h.order
	p.Add(h)
	blamed := map[int]bool{}
	for k := range h.rows {
		blamed[k] = true
	}
	for k := range h.cols {
		blamed[k] = true
	}
	ticks := heatmapTicks(g, h.order, blamed, (f.h.Points()-90)/float64(max(n, 1)))
	labels := func(reverse bool) []plot.Tick {
		out := make([]plot.Tick, len(ticks))
		for i, t := range ticks {
			out[i] = t
			if reverse {
				out[i].Value = float64(n-1) - t.Value
			}
		}
		return out
	}
	p.X.Label.Text = "to (receiver)"
	p.Y.Label.Text = "from (sender)"
	p.X.Tick.Marker = plot.ConstantTicks(labels(false))
	p.Y.Tick.Marker = plot.ConstantTicks(labels(true))
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5
	if n > 8 {
		p.X.Tick.Label.Rotation = math.Pi / 4
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
	}
	if n > 32 {
		for _, a := range []*plot.Axis{&p.X, &p.Y} {
			a.Tick.Label.Font.Size = vg.Points(7)
			a.Tick.Length = vg.Points(3)
		}
	}
	f.Plot = p
	return f
}

// minTickGap is the least distance between two tick labels of a heatmap,
// in points: the height of a 7-point label.
const minTickGap = 8.0

// heatmapTicks labels a heatmap's rows and columns (positions in display
// order, cell points apart): every node up to 32 nodes, beyond that every
// few; the blamed nodes always, and blamed nodes too close to be labelled
// apart share one label ("n7, n100"). A plain label too close to a blamed
// one gives way.
func heatmapTicks(g *matrixGroup, order []int, blamed map[int]bool, cell float64) []plot.Tick {
	n := len(order)
	step := 1
	if n > 32 {
		step = (n + 31) / 32
	}
	type group struct {
		first, last int
		names       []string
	}
	var groups []group
	for i, k := range order {
		if !blamed[k] {
			continue
		}
		if l := len(groups) - 1; l >= 0 && float64(i-groups[l].last)*cell < minTickGap {
			groups[l].last = i
			groups[l].names = append(groups[l].names, g.nodes[k])
			continue
		}
		groups = append(groups, group{first: i, last: i, names: []string{g.nodes[k]}})
	}
	var ticks []plot.Tick
	for i, k := range order {
		if i%step != 0 || blamed[k] {
			continue
		}
		near := slices.ContainsFunc(groups, func(gr group) bool {
			return math.Abs(float64(i)-float64(gr.first+gr.last)/2)*cell < minTickGap
		})
		if !near {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: g.nodes[k]})
		}
	}
	for _, gr := range groups {
		ticks = append(ticks, plot.Tick{Value: float64(gr.first+gr.last) / 2, Label: strings.Join(gr.names, ", ")})
	}
	slices.SortFunc(ticks, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	return ticks
}

// byNameUpTo is the largest heatmap whose nodes stay in name order.
const byNameUpTo = 8

// heatmapOrder is the order of a matrix's rows and columns: the
// screening's (NodeOrder of what the matrix measures) when the verdict is
// of the matrix's own runs and it has more than byNameUpTo nodes, else
// the nodes by name. It returns the screening's matrix check when it
// applies.
func (r *Report) heatmapOrder(g *matrixGroup, what string) ([]int, *screen.MatrixCheck) {
	order := make([]int, len(g.nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return hostlist.Compare(g.nodes[a], g.nodes[b]) })
	m := r.screenMatrix(g)
	if m == nil || len(g.nodes) <= byNameUpTo {
		// A small matrix reads best by name; its bad cells show anyway.
		return order, m
	}
	var out []int
	placed := map[int]bool{}
	for _, name := range r.screen.NodeOrder(what) {
		if k, ok := g.index[name]; ok && !placed[k] {
			out = append(out, k)
			placed[k] = true
		}
	}
	for _, k := range order {
		if !placed[k] {
			out = append(out, k)
		}
	}
	return out, m
}

// heatmap draws a matrixGroup's cells as vector rectangles with their
// values as text, so the PDF stays small and the numbers searchable.
type heatmap struct {
	g     *matrixGroup
	style text.Style
	// order maps a display position to a node index.
	order []int
	// screened, status, rows and cols are the screening's verdict: each
	// cell's, and the rows (senders) and columns (receivers) of the nodes
	// it blames.
	screened   *screen.MatrixCheck
	status     func(from, to int) screen.Status
	rows, cols map[int]bool
}

var (
	goodColor  = color.RGBA{0xF4, 0xF7, 0xFA, 0xFF}
	badColor   = color.RGBA{0xD5, 0x5E, 0x00, 0xFF} // the palette's vermillion
	selfColor  = color.RGBA{0xD8, 0xD8, 0xD8, 0xFF}
	markColor  = color.RGBA{0x1A, 0x1A, 0x1A, 0xFF}
	frameColor = color.RGBA{0x00, 0x2B, 0x5C, 0xFF}
)

// cellColor shades from goodColor (on par with the best pair) to badColor
// (at half of it or worse).
func cellColor(shortfall float64) color.RGBA {
	t := math.Max(0, math.Min(1, shortfall/0.5))
	mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + t*(float64(b)-float64(a)))) }
	return color.RGBA{mix(goodColor.R, badColor.R), mix(goodColor.G, badColor.G), mix(goodColor.B, badColor.B), 0xFF}
}

func (h *heatmap) Plot(c draw.Canvas, p *plot.Plot) {
	g := h.g
	n := len(g.nodes)
	tx, ty := p.Transforms(&c)
	cellW := tx(1) - tx(0)
	cellH := ty(1) - ty(0)
	sty := h.style
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	// White lines between cells, thinner as cells shrink: at 256 nodes a
	// cell is 2 points, and a 1-point line would eat half of it.
	gap := vg.Length(math.Min(1, float64(cellW)/8))
	radius := vg.Length(math.Max(0.5, math.Min(2.2, float64(cellW)*0.22)))
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a, b := h.order[i], h.order[j]
			cx, cy := tx(float64(j)), ty(float64(n-1-i))
			rect := vg.Rectangle{
				Min: vg.Point{X: cx - cellW/2, Y: cy - cellH/2},
				Max: vg.Point{X: cx + cellW/2, Y: cy + cellH/2},
			}
			v, ok := g.values[[2]int{a, b}]
			fill := selfColor
			label := ""
			switch {
			case a == b:
				label = "—"
			case ok:
				sf := g.shortfall(v)
				fill = cellColor(sf)
				label = formatCell(v)
				if sf > 0.3 {
					sty.Color = color.White
				} else {
					sty.Color = color.Black
				}
			default:
				label = "n/a"
			}
			c.SetColor(fill)
			c.Fill(rect.Path())
			if gap >= 0.25 {
				c.SetLineStyle(draw.LineStyle{Color: color.White, Width: gap})
				c.Stroke(rect.Path())
			}
			fits := label != "" && sty.Width(label) < cellW-4 && sty.Height(label) < cellH-2
			if h.status != nil && a != b {
				st := h.status(a, b)
				switch {
				case st != screen.Bad && st != screen.Transient:
				case fits:
					// Room for the value: keep it, and frame the cell
					// (dashed when transient).
					ls := draw.LineStyle{Color: markColor, Width: vg.Points(1.2)}
					if st == screen.Transient {
						ls.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
					}
					in := vg.Points(2.5)
					c.SetLineStyle(ls)
					c.Stroke(vg.Rectangle{Min: vg.Point{X: rect.Min.X + in, Y: rect.Min.Y + in}, Max: vg.Point{X: rect.Max.X - in, Y: rect.Max.Y - in}}.Path())
				case st == screen.Bad:
					// A dot: outside tolerance, and on every re-test.
					c.SetColor(markColor)
					c.Fill(circle(vg.Point{X: cx, Y: cy}, radius))
					continue
				default:
					c.SetLineStyle(draw.LineStyle{Color: markColor, Width: vg.Length(math.Max(0.3, float64(radius)/3))})
					c.Stroke(circle(vg.Point{X: cx, Y: cy}, radius))
					continue
				}
			}
			if fits {
				if a == b || !ok {
					sty.Color = color.Gray{Y: 0x60}
				}
				c.FillText(sty, vg.Point{X: cx, Y: cy}, label)
			}
		}
	}
	// The blamed nodes' rows and columns, framed.
	frame := draw.LineStyle{Color: frameColor, Width: vg.Length(math.Max(0.6, math.Min(1.2, float64(cellW)/4)))}
	for i, k := range h.order {
		if h.rows[k] {
			y := ty(float64(n - 1 - i))
			c.SetLineStyle(frame)
			c.Stroke(vg.Rectangle{Min: vg.Point{X: tx(-0.5), Y: y - cellH/2}, Max: vg.Point{X: tx(float64(n) - 0.5), Y: y + cellH/2}}.Path())
		}
		if h.cols[k] {
			x := tx(float64(i))
			c.SetLineStyle(frame)
			c.Stroke(vg.Rectangle{Min: vg.Point{X: x - cellW/2, Y: ty(-0.5)}, Max: vg.Point{X: x + cellW/2, Y: ty(float64(n) - 0.5)}}.Path())
		}
	}
}

// circle is a closed path around center.
func circle(center vg.Point, r vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: center.X + r, Y: center.Y})
	p.Arc(center, r, 0, 2*math.Pi)
	p.Close()
	return p
}

// formatCell writes a cell's value with four significant digits at most:
// enough to compare, short enough to fit.
func formatCell(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}
