package reports

import (
	"fmt"
	"image/color"
	"sort"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sbench/sbench/store"
)

// A configuration is what one line of a figure stands for: a campaign
// variant, or the labels of runs ingested by hand, or a single run. Each has
// one colour, glyph and dash for the whole report, so "ib-hdr" is the same
// blue in every figure and every summary table.
type configs struct {
	names []string       // in order of first appearance by run id
	index map[string]int // name -> position in names
	ofRun map[int64]string
}

func newConfigs(runs []store.Run) *configs {
	multi := map[string]bool{}
	for _, run := range runs {
		multi[run.Campaign] = true
	}
	c := &configs{index: map[string]int{}, ofRun: map[int64]string{}}
	for i := range runs {
		name := configName(&runs[i], len(multi) > 1)
		c.ofRun[runs[i].ID] = name
		if _, ok := c.index[name]; !ok {
			c.index[name] = len(c.names)
			c.names = append(c.names, name)
		}
	}
	return c
}

// configName names a run's configuration in the words the legend uses. With
// several campaigns in one report a bare variant name could mean two
// different things, so it is qualified by its campaign.
func configName(run *store.Run, multiCampaign bool) string {
	if run.Variant != "" {
		if multiCampaign && run.Campaign != "" {
			return run.Campaign + "/" + run.Variant
		}
		return run.Variant
	}
	if len(run.Labels) > 0 {
		keys := make([]string, 0, len(run.Labels))
		for k := range run.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + "=" + run.Labels[k]
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("run %d", run.ID)
}

// palette is Okabe and Ito's colour-blind-safe set without its yellow,
// which is unreadable on white paper.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x00, 0x00, 0x00, 0xFF}, // black
}

// dashes take over when the colours run out, so the eighth configuration is
// still told apart from the first.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
}

// glyphs differ per configuration too, for readers who print in grey.
var glyphs = []draw.GlyphDrawer{
	draw.CircleGlyph{},
	draw.SquareGlyph{},
	draw.TriangleGlyph{},
	draw.CrossGlyph{},
	draw.PyramidGlyph{},
	draw.PlusGlyph{},
	draw.RingGlyph{},
	draw.BoxGlyph{},
}

// style is how configuration i is drawn.
type style struct {
	Color color.RGBA
	Dash  []vg.Length
	Glyph draw.GlyphDrawer
}

func styleOf(i int) style {
	return style{
		Color: palette[i%len(palette)],
		Dash:  dashes[(i/len(palette))%len(dashes)],
		Glyph: glyphs[i%len(glyphs)],
	}
}

func (c *configs) style(name string) style { return styleOf(c.index[name]) }
