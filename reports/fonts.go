package reports

import (
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"

	"github.com/sbench/sbench/reports/typeset"
)

// textStyles makes the figures' text styles, in the loaded font when there
// is one.
type textStyles struct {
	handler text.Handler
	font    *typeset.Font
}

func newTextStyles(f *typeset.Font) *textStyles {
	if f == nil {
		return &textStyles{handler: plot.DefaultTextHandler}
	}
	return &textStyles{handler: text.Plain{Fonts: f.FontCache()}, font: f}
}

// face is the font description of figure text.
func (t *textStyles) face(size font.Length, bold bool) font.Font {
	fnt := sans
	if t.font != nil {
		fnt.Typeface = typeset.UTF8Typeface
	}
	if bold {
		fnt.Weight = boldWeight
	}
	return font.From(fnt, size)
}

// apply sets every text style of p to the report's font and sizes.
func (t *textStyles) apply(p *plot.Plot) {
	p.TextHandler = t.handler
	p.Title.TextStyle.Handler = t.handler
	p.Title.TextStyle.Font = t.face(titleSize, true)
	p.Legend.TextStyle.Handler = t.handler
	p.Legend.TextStyle.Font = t.face(legendSize, false)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Handler = t.handler
		a.Label.TextStyle.Font = t.face(labelSize, false)
		a.Tick.Label.Handler = t.handler
		a.Tick.Label.Font = t.face(tickSize, false)
	}
}

// style is a text style of the given size in the report's font.
func (t *textStyles) style(size font.Length, bold bool) text.Style {
	return text.Style{Font: t.face(size, bold), Handler: t.handler}
}
