package reports

import (
	"fmt"
	"image/color"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/sbench/sbench/reports/typeset"
	"github.com/sbench/sbench/store"
)

// A configuration is what one line of a figure stands for: a campaign
// variant, or the labels of runs ingested by hand, or the value of the
// --group-by label. Each has one colour, glyph and dash for the whole
// report, so "ib-hdr" is the same blue in every figure and every summary
// table.
//
// Configurations are named in their own words, and only with the words
// that tell them apart within a benchmark: runs labelled
// section="use erdma for osu_bw" and section="use tcp for osu_bw" are
// "erdma" and "tcp", and since the latency runs of the same file reduce to
// the same two names, they get the same two colours.
type configs struct {
	names []string       // display names, in colour order
	index map[string]int // name -> position in names
	ofRun map[int64]string
	// what names, per family, the attribute the names are values of
	// ("fabric"), for table headings; "" when they are not one attribute's.
	what map[string]string
}

// attr is one thing that identifies a configuration. Extra attributes are
// the rest of the run's configuration (store.ConfigOf) beyond those that
// name it: they tell lines apart only where they split runs the naming
// attributes would merge (two node pairs of one variant, say).
type attr struct {
	key, value string
	extra      bool
}

// contextLabels say where runs come from; they name a configuration only
// when nothing else does.
var contextLabels = map[string]bool{"article": true, "system": true}

// constantLabels are the labels every run has with the same value: the
// report's context (article=003, system=…), not what tells its lines apart.
func constantLabels(runs []store.Run) map[string]bool {
	out := map[string]bool{}
	if len(runs) < 2 {
		return out
	}
	for k, v := range runs[0].Labels {
		same := true
		for _, run := range runs[1:] {
			if w, ok := run.Labels[k]; !ok || w != v {
				same = false
				break
			}
		}
		if same {
			out[k] = true
		}
	}
	return out
}

func newConfigs(runs []store.Run, groupBy string) *configs {
	campaigns := map[string]bool{}
	for _, run := range runs {
		campaigns[run.Campaign] = true
	}
	multi := len(campaigns) > 1
	constant := constantLabels(runs)
	c := &configs{index: map[string]int{}, ofRun: map[int64]string{}, what: map[string]string{}}

	// Runs by family, each family's distinct attribute lists in run order.
	type famConfigs struct {
		keys  []string           // identity keys in order of appearance
		attrs map[string][]attr  // identity -> attributes
		runs  map[string][]int64 // identity -> runs
	}
	fams := map[string]*famConfigs{}
	var famOrder []string
	for i := range runs {
		run := &runs[i]
		fam := family(run)
		fc := fams[fam]
		if fc == nil {
			fc = &famConfigs{attrs: map[string][]attr{}, runs: map[string][]int64{}}
			fams[fam] = fc
			famOrder = append(famOrder, fam)
		}
		as := attrsOf(run, groupBy, multi, constant)
		id := fmt.Sprint(as)
		if _, ok := fc.attrs[id]; !ok {
			fc.keys = append(fc.keys, id)
			fc.attrs[id] = as
		}
		fc.runs[id] = append(fc.runs[id], run.ID)
	}
	for _, fam := range famOrder {
		fc := fams[fam]
		lists := make([][]attr, len(fc.keys))
		for i, id := range fc.keys {
			lists[i] = fc.attrs[id]
		}
		names, what := displayNames(lists)
		c.what[fam] = what
		for i, id := range fc.keys {
			for _, runID := range fc.runs[id] {
				c.ofRun[runID] = names[i]
			}
		}
	}
	// Colours in the order the names first appear among the runs.
	for _, run := range runs {
		c.add(c.ofRun[run.ID])
	}
	return c
}

// attrsOf lists what identifies a run's configuration: the attributes
// that name it (the --group-by value; else the variant; else the labels
// that vary), then, unless grouping by one attribute, every other
// attribute of its configuration (store.ConfigOf) as extra. The process
// count is not among them: figures keep runs of different counts apart
// as lines of their own ("4 ranks"), see seriesKey.
func attrsOf(run *store.Run, groupBy string, multiCampaign bool, constant map[string]bool) []attr {
	if groupBy != "" {
		v, ok := lookupField(run, groupBy)
		if !ok {
			v = "no " + groupBy
		}
		return []attr{{key: groupBy, value: v}}
	}
	var as []attr
	switch {
	case run.Variant != "":
		if multiCampaign && run.Campaign != "" {
			as = []attr{{key: "campaign", value: run.Campaign}, {key: "variant", value: run.Variant}}
		} else {
			as = []attr{{key: "variant", value: run.Variant}}
		}
	default:
		for _, k := range slices.Sorted(maps.Keys(run.Labels)) {
			if !store.MetaLabels[k] && !constant[k] {
				as = append(as, attr{key: k, value: run.Labels[k]})
			}
		}
		if len(as) == 0 {
			for _, k := range slices.Sorted(maps.Keys(run.Labels)) {
				if !store.MetaLabels[k] && !contextLabels[k] {
					as = append(as, attr{key: k, value: run.Labels[k]})
				}
			}
		}
	}
	named := map[string]bool{}
	for _, a := range as {
		named[a.key] = true
	}
	var extra []attr
	for _, a := range store.ConfigOf(run).Without(store.AttrCampaign, store.AttrVariant, store.AttrProcesses) {
		if !named[a.Key] {
			named[a.Key] = true
			extra = append(extra, attr{key: a.Key, value: a.Value, extra: true})
		}
	}
	if len(as) == 0 && len(extra) == 0 {
		return []attr{{key: "run", value: fmt.Sprintf("run %d", run.ID)}}
	}
	// The system a run came from names it before any other label: in a
	// report of a site's clusters, "alpha" says more than the fabric that
	// goes with it.
	systemFirst(as)
	systemFirst(extra)
	return append(as, extra...)
}

// systemFirst moves the system label to the front of as.
func systemFirst(as []attr) {
	for i, a := range as {
		if a.key == "system" {
			copy(as[1:i+1], as[:i])
			as[0] = a
			return
		}
	}
}

// lookupField is the value of a label, parameter or field of a run.
func lookupField(run *store.Run, key string) (string, bool) {
	if v, ok := run.Labels[key]; ok {
		return v, true
	}
	if v, ok := run.Params[key]; ok {
		return v, true
	}
	switch key {
	case "variant":
		return run.Variant, run.Variant != ""
	case "campaign":
		return run.Campaign, run.Campaign != ""
	case "benchmark":
		return family(run), true
	case "ranks", "tasks", "processes":
		if n := store.ProcessCount(run); n > 0 {
			return strconv.Itoa(n) + " ranks", true
		}
	}
	return "", false
}

// displayNames names each configuration of one benchmark by the attributes
// that differ between them (the naming ones when there is only one), and
// says which attribute the names are values of when it is a single one.
// An extra attribute that varies is shown only where it splits what the
// attributes before it would merge: a sweep parameter that follows the
// variant adds nothing to its name.
func displayNames(lists [][]attr) (names []string, what string) {
	var keys []string
	seen := map[string]bool{}
	isExtra := map[string]bool{}
	for _, as := range lists {
		for _, a := range as {
			if !seen[a.key] {
				seen[a.key] = true
				keys = append(keys, a.key)
				isExtra[a.key] = a.extra
			}
		}
	}
	// Naming attributes first, in order of appearance; then extras.
	sort.SliceStable(keys, func(i, j int) bool { return !isExtra[keys[i]] && isExtra[keys[j]] })
	value := func(as []attr, k string) string {
		for _, a := range as {
			if a.key == k {
				return a.value
			}
		}
		return ""
	}
	var shown []string
	for _, k := range keys {
		if !isExtra[k] {
			shown = append(shown, k)
		}
	}
	if len(lists) > 1 {
		var varying []string
		groups := func(ks []string) int {
			distinct := map[string]bool{}
			for _, as := range lists {
				var b strings.Builder
				for _, k := range ks {
					b.WriteString(value(as, k) + "\x00")
				}
				distinct[b.String()] = true
			}
			return len(distinct)
		}
		for _, k := range keys {
			v0 := value(lists[0], k)
			varies := slices.ContainsFunc(lists[1:], func(as []attr) bool { return value(as, k) != v0 })
			if varies && (!isExtra[k] || groups(append(varying[:len(varying):len(varying)], k)) > groups(varying)) {
				varying = append(varying, k)
			}
		}
		if len(varying) > 0 {
			shown = varying
		}
	}
	names = make([]string, len(lists))
	for i, as := range lists {
		switch {
		case len(shown) == 1:
			names[i] = value(as, shown[0])
			if names[i] == "" {
				names[i] = "no " + shown[0]
			}
		case len(shown) == 2 && shown[0] == "campaign" && shown[1] == "variant":
			names[i] = value(as, "campaign") + "/" + value(as, "variant")
		default:
			var parts []string
			for _, k := range shown {
				if v := value(as, k); v != "" {
					parts = append(parts, k+"="+v)
				}
			}
			names[i] = strings.Join(parts, ", ")
		}
	}
	if len(shown) == 1 {
		switch shown[0] {
		case "variant", "run":
		default:
			what = shown[0]
		}
		if len(lists) > 1 {
			names = dropCommonWords(names)
		}
	}
	return names, what
}

// dropCommonWords removes the words every name shares ("use", "for",
// "osu_bw" of "use tcp for osu_bw"), when what is left still tells every
// name apart.
func dropCommonWords(names []string) []string {
	count := map[string]int{}
	for _, n := range names {
		seen := map[string]bool{}
		for _, w := range strings.Fields(n) {
			if !seen[w] {
				seen[w] = true
				count[w]++
			}
		}
	}
	out := make([]string, len(names))
	distinct := map[string]bool{}
	for i, n := range names {
		var keep []string
		for _, w := range strings.Fields(n) {
			if count[w] < len(names) {
				keep = append(keep, w)
			}
		}
		out[i] = strings.Join(keep, " ")
		if out[i] == "" || distinct[out[i]] {
			return names
		}
		distinct[out[i]] = true
	}
	return out
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
	typeset.Swatch // colour and dash
	Glyph          draw.GlyphDrawer
}

func styleOf(i int) style {
	return style{
		Swatch: typeset.Swatch{Color: palette[i%len(palette)], Dash: dashes[(i/len(palette))%len(dashes)]},
		Glyph:  glyphs[i%len(glyphs)],
	}
}

func (c *configs) style(name string) style { return styleOf(c.index[name]) }

// add gives name the next colour, unless it has one.
func (c *configs) add(name string) {
	if _, ok := c.index[name]; !ok {
		c.index[name] = len(c.names)
		c.names = append(c.names, name)
	}
}
