package reports

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sbench/sbench/results"
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
		s.Min, s.Max = all[0], all[0]
		for _, v := range all {
			s.Min, s.Max = min(s.Min, v), max(s.Max, v)
		}
	}
	keys := make([][2]int, 0, len(g.values))
	for k := range g.values {
		keys = append(keys, k)
	}
	// Worst first; ties in node order, so the list is the same every time.
	hb := g.higherBetter()
	sort.Slice(keys, func(i, j int) bool {
		a, b := g.values[keys[i]], g.values[keys[j]]
		if a != b {
			return (a < b) == hb
		}
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
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
	p.Add(&heatmap{g: g, style: r.text.style(cellSize, false)})
	labels := func(reverse bool) []plot.Tick {
		ticks := make([]plot.Tick, n)
		for i, name := range g.nodes {
			v := float64(i)
			if reverse {
				v = float64(n - 1 - i)
			}
			ticks[i] = plot.Tick{Value: v, Label: name}
		}
		return ticks
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
	f.Plot = p
	return f
}

// heatmap draws a matrixGroup's cells as vector rectangles with their
// values as text, so the PDF stays small and the numbers searchable.
type heatmap struct {
	g     *matrixGroup
	style text.Style
}

var (
	goodColor = color.RGBA{0xF4, 0xF7, 0xFA, 0xFF}
	badColor  = color.RGBA{0xD5, 0x5E, 0x00, 0xFF} // the palette's vermillion
	selfColor = color.RGBA{0xD8, 0xD8, 0xD8, 0xFF}
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
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			cx, cy := tx(float64(j)), ty(float64(n-1-i))
			rect := vg.Rectangle{
				Min: vg.Point{X: cx - cellW/2, Y: cy - cellH/2},
				Max: vg.Point{X: cx + cellW/2, Y: cy + cellH/2},
			}
			v, ok := g.values[[2]int{i, j}]
			fill := selfColor
			label := ""
			switch {
			case i == j:
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
			c.SetLineStyle(draw.LineStyle{Color: color.White, Width: vg.Points(1)})
			c.Stroke(rect.Path())
			if label != "" && sty.Width(label) < cellW-4 && sty.Height(label) < cellH-2 {
				if i == j || !ok {
					sty.Color = color.Gray{Y: 0x60}
				}
				c.FillText(sty, vg.Point{X: cx, Y: cy}, label)
			}
		}
	}
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
