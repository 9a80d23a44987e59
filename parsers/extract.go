package parsers

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
)

// User-defined metrics (results.Extract): figures read from any output by
// regular expressions, as JUBE's patterns and ReFrame's perf_patterns read
// them, and sanity patterns (require, reject). The campaign validates the
// definitions with Compile before anything runs; the runner applies them
// to a run's output after its parser; sbench ingest --reparse applies them
// again to an archived run's Raw output.
//
// Patterns are Go's RE2: matching is linear in the output's length
// whatever the pattern, so a pathological pattern cannot hang a run.

// SanityPrefix starts every line an extraction adds to a run's error, so
// that a new extraction can take the old one's verdict back (Reapply).
const SanityPrefix = "sanity: "

// maxMatches bounds the matches of one pattern in one output.
const maxMatches = 100000

// Match modes of a metric.
const (
	MatchLast  = "last"
	MatchFirst = "first"
	MatchEach  = "each"
	MatchAll   = "all"
)

var metricNameRE = regexp.MustCompile(`^[a-z0-9_]+$`)

// DefError is a problem with one definition of an Extract: Field names
// its key as a campaign writes it ("metric[1].regex", "require[0]"), Col
// the 1-based column in the pattern of what is wrong (0: none).
type DefError struct {
	Field string
	Col   int
	Msg   string
}

func (e *DefError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s: %s (column %d of the pattern)", e.Field, e.Msg, e.Col)
	}
	return e.Field + ": " + e.Msg
}

// DefErrors is every problem Compile found.
type DefErrors []*DefError

func (es DefErrors) Error() string { return errorLines(es) }

// Extractor is a compiled Extract.
type Extractor struct {
	def             *results.Extract
	metrics         []metricRE
	require, reject []*regexp.Regexp
}

type metricRE struct {
	def      results.MetricDef
	re       *regexp.Regexp
	value, x int // group indices; x is -1 without an x
	unit     Unit
	xUnit    Unit
}

// Compile checks and compiles e; its error is a DefErrors. A nil or empty
// e compiles to an Extractor that does nothing.
func Compile(e *results.Extract) (*Extractor, error) {
	x := &Extractor{def: e}
	if e == nil {
		return x, nil
	}
	var errs DefErrors
	bad := func(field string, col int, format string, args ...any) {
		errs = append(errs, &DefError{Field: field, Col: col, Msg: fmt.Sprintf(format, args...)})
	}
	seen := map[string]bool{}
	for i, d := range e.Metrics {
		at := fmt.Sprintf("metric[%d]", i)
		switch {
		case !metricNameRE.MatchString(d.Name):
			bad(at+".name", 0, "%q is not a metric name: use a-z, 0-9 and _", d.Name)
		case isBuiltinMetric(d.Name):
			bad(at+".name", 0, "%q is a metric of sbench's own parsers and kernels: choose another name", d.Name)
		case seen[d.Name]:
			bad(at+".name", 0, "metric %q is defined twice", d.Name)
		}
		seen[d.Name] = true
		m := metricRE{def: d, x: -1}
		re, col, err := compilePattern(d.Regex)
		if err != nil {
			bad(at+".regex", col, "%v", err)
		} else {
			m.re = re
			if m.value, err = group(re, d.Value, "1"); err != nil {
				bad(at+".value", 0, "%v", err)
			}
			if d.X != "" {
				if m.x, err = group(re, d.X, ""); err != nil {
					bad(at+".x", 0, "%v", err)
				}
			}
		}
		if m.unit, err = NormalizeUnit(d.Unit); err != nil {
			bad(at+".unit", 0, "%v", err)
		} else if msg := betterProblem(d.Better, m.unit.Unit, d.Unit); msg != "" {
			bad(at+".better", 0, "%s", msg)
		}
		if d.XUnit != "" && d.X == "" {
			bad(at+".x_unit", 0, "is for a metric with an x group")
		}
		if m.xUnit, err = NormalizeUnit(d.XUnit); err != nil {
			bad(at+".x_unit", 0, "%v", err)
		}
		switch d.Match {
		case "", MatchLast, MatchFirst, MatchEach, MatchAll:
		default:
			bad(at+".match", 0, "%q is not a match: use last (the default), first, each or all", d.Match)
		}
		if d.File != "" && !plainRelative(d.File) {
			bad(at+".file", 0, "%q must be a relative path inside the step's working directory", d.File)
		}
		x.metrics = append(x.metrics, m)
	}
	for _, s := range []struct {
		key  string
		pats []string
		out  *[]*regexp.Regexp
	}{{"require", e.Require, &x.require}, {"reject", e.Reject, &x.reject}} {
		for i, p := range s.pats {
			re, col, err := compilePattern(p)
			if err != nil {
				bad(fmt.Sprintf("%s[%d]", s.key, i), col, "%v", err)
				continue
			}
			*s.out = append(*s.out, re)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return x, nil
}

// compilePattern compiles a pattern with ^ and $ at line breaks; on an
// error, col is the column in the pattern of what is wrong, when known.
func compilePattern(p string) (*regexp.Regexp, int, error) {
	if p == "" {
		return nil, 0, errors.New("is empty")
	}
	if _, err := syntax.Parse(p, syntax.Perl); err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, errorCol(p, se), fmt.Errorf("not a regular expression: %s: `%s`", se.Code, se.Expr)
		}
		return nil, 0, fmt.Errorf("not a regular expression: %v", err)
	}
	re, err := regexp.Compile("(?m)" + p)
	if err != nil {
		return nil, 0, fmt.Errorf("not a regular expression: %v", err)
	}
	if re.MatchString("") {
		return nil, 0, errors.New("matches the empty text: it would match everywhere")
	}
	return re, 0, nil
}

// errorCol is the 1-based column in p of a syntax error, 0 when unknown:
// the unbalanced parenthesis, the unclosed bracket (its Expr is the rest
// of p), or the first place its Expr is written.
func errorCol(p string, se *syntax.Error) int {
	switch se.Code {
	case syntax.ErrMissingParen, syntax.ErrUnexpectedParen:
		return parenCol(p)
	case syntax.ErrMissingBracket:
		if strings.HasSuffix(p, se.Expr) {
			return len(p) - len(se.Expr) + 1
		}
	}
	if i := strings.Index(p, se.Expr); i >= 0 && se.Expr != "" {
		return i + 1
	}
	return 0
}

// parenCol is the column of p's first unexpected ')' or else its last
// unclosed '(', outside escapes and character classes; 0 if none.
func parenCol(p string) int {
	var open []int
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
			if strings.HasPrefix(p[i+1:], "]") || strings.HasPrefix(p[i+1:], "^]") {
				i += strings.IndexByte(p[i+1:], ']') + 1
			}
		case c == '(':
			open = append(open, i)
		case c == ')':
			if len(open) == 0 {
				return i + 1
			}
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return open[len(open)-1] + 1
	}
	return 0
}

// group is the index of group g (a number or a name) in re; def stands
// for an empty g.
func group(re *regexp.Regexp, g results.Group, def string) (int, error) {
	name := cmp.Or(string(g), def)
	if n, err := strconv.Atoi(name); err == nil {
		if n < 1 || n > re.NumSubexp() {
			return 0, fmt.Errorf("the pattern has no group %d (it has %d): put the figure in parentheses", n, re.NumSubexp())
		}
		return n, nil
	}
	if i := re.SubexpIndex(name); i > 0 {
		return i, nil
	}
	var names []string
	for _, n := range re.SubexpNames() {
		if n != "" {
			names = append(names, n)
		}
	}
	return 0, fmt.Errorf("the pattern has no group %q (named groups: %s)", name, strings.Join(cmpOr(names, "none"), ", "))
}

func cmpOr(s []string, def string) []string {
	if len(s) == 0 {
		return []string{def}
	}
	return s
}

func isBuiltinMetric(name string) bool {
	_, ok := results.MetricOf(name)
	return ok
}

// betterProblem says what is wrong with better for a unit (normalised;
// written as it was given), or "".
func betterProblem(better, unit, written string) string {
	dir := results.BetterFor(unit)
	switch better {
	case "":
		if dir == results.BetterUnknown {
			return fmt.Sprintf("is required: unit %q says nothing of whether higher or lower is better", written)
		}
	case "higher", "lower":
		want := map[string]results.Better{"higher": results.BetterHigher, "lower": results.BetterLower}[better]
		if dir != results.BetterUnknown && dir != want {
			return fmt.Sprintf("%q contradicts unit %q, whose figures sbench judges the other way", better, written)
		}
	default:
		return fmt.Sprintf("%q is not a direction: use higher or lower", better)
	}
	return ""
}

func plainRelative(p string) bool {
	if strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	return !slices.Contains(strings.Split(p, "/"), "..")
}

// Files are the files other than the output that the metrics read.
func (x *Extractor) Files() []string {
	var out []string
	for _, m := range x.metrics {
		if m.def.File != "" && !slices.Contains(out, m.def.File) {
			out = append(out, m.def.File)
		}
	}
	return out
}

// Apply adds the metrics' samples to b and judges the sanity patterns:
// output is what the parser read; files[name] the content of a metric's
// file (absent: it could not be read; files nil: the metrics of files are
// skipped, as a re-reading of the output alone does). A required pattern the output
// lacks, a rejected one it shows, a metric without a match or a figure
// that is no number make an ok run invalid, each a line of its error
// (after SanityPrefix). The extraction is recorded in b.Benchmark.Extract.
func (x *Extractor) Apply(b *results.Bundle, output []byte, files map[string][]byte) {
	if x.def.Empty() {
		return
	}
	b.Benchmark.Extract = x.def
	var problems []string
	for _, m := range x.metrics {
		data, ok := output, true
		if m.def.File != "" {
			if files == nil {
				continue
			}
			data, ok = files[m.def.File]
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("metric %s: file %s could not be read", m.def.Name, m.def.File))
			continue
		}
		samples, msg := m.extract(data)
		if msg != "" {
			problems = append(problems, fmt.Sprintf("metric %s: %s", m.def.Name, msg))
		}
		b.Samples = append(b.Samples, samples...)
	}
	for _, re := range x.require {
		if !re.Match(output) {
			problems = append(problems, fmt.Sprintf("the output lacks the required pattern %q", pattern(re)))
		}
	}
	for _, re := range x.reject {
		if loc := re.FindIndex(output); loc != nil {
			problems = append(problems, fmt.Sprintf("the output shows the rejected pattern %q on line %d: %q", pattern(re), 1+strings.Count(string(output[:loc[0]]), "\n"), lineAt(output, loc[0])))
		}
	}
	if len(problems) == 0 {
		return
	}
	for i, p := range problems {
		problems[i] = SanityPrefix + p
	}
	text := strings.Join(problems, "\n")
	switch b.Status {
	case results.StatusOK:
		b.Status, b.Error = results.StatusInvalid, text
	case results.StatusInvalid:
		b.Error = strings.TrimPrefix(b.Error+"\n"+text, "\n")
	}
	// A failed run's error says why it failed; the sanity verdict adds
	// nothing to it.
}

func pattern(re *regexp.Regexp) string { return strings.TrimPrefix(re.String(), "(?m)") }

func lineAt(data []byte, off int) string {
	start := strings.LastIndexByte(string(data[:off]), '\n') + 1
	end := len(data)
	if i := strings.IndexByte(string(data[off:]), '\n'); i >= 0 {
		end = off + i
	}
	line := string(data[start:end])
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return strings.ToValidUTF8(line, "\uFFFD")
}

// matchPoint is one match: its value and x.
type matchPoint struct {
	v, x float64
	hasX bool
}

// extract finds m's samples in data; msg says why there is none.
func (m *metricRE) extract(data []byte) ([]results.Sample, string) {
	matches := m.re.FindAllSubmatchIndex(data, maxMatches+1)
	if len(matches) == 0 {
		return nil, fmt.Sprintf("no match of %q", pattern(m.re))
	}
	if len(matches) > maxMatches {
		return nil, fmt.Sprintf("more than %d matches of %q", maxMatches, pattern(m.re))
	}
	var pts []matchPoint
	for _, loc := range matches {
		p, msg := m.point(data, loc)
		if msg != "" {
			return nil, fmt.Sprintf("%s on line %d", msg, 1+strings.Count(string(data[:loc[0]]), "\n"))
		}
		pts = append(pts, p)
	}
	// Group by x, in order of first appearance (one group without x).
	var order []float64
	byX := map[float64][]matchPoint{}
	for _, p := range pts {
		if _, ok := byX[p.x]; !ok {
			order = append(order, p.x)
		}
		byX[p.x] = append(byX[p.x], p)
	}
	var out []results.Sample
	for _, xv := range order {
		for _, p := range choose(byX[xv], m.def.Match) {
			s := results.Sample{Metric: m.def.Name, Unit: m.unit.Unit, Value: p.v}
			if p.hasX {
				s.X, s.XUnit = results.F(p.x), m.xUnit.Unit
			}
			if m.def.Match == MatchAll {
				lo, hi := p.v, p.v
				for _, q := range byX[xv] {
					lo, hi = min(lo, q.v), max(hi, q.v)
				}
				s.Min, s.Max = results.F(lo), results.F(hi)
			}
			out = append(out, s)
		}
	}
	return out, ""
}

// point reads one match's value and x.
func (m *metricRE) point(data []byte, loc []int) (matchPoint, string) {
	text := func(g int) (string, bool) {
		if loc[2*g] < 0 {
			return "", false
		}
		return string(data[loc[2*g]:loc[2*g+1]]), true
	}
	num := func(g int, u Unit, what string) (float64, string) {
		t, ok := text(g)
		if !ok {
			return 0, fmt.Sprintf("the %s group did not take part in the match", what)
		}
		v, err := parseFigure(t)
		if err != nil {
			return 0, fmt.Sprintf("the %s %.40q is not a number", what, t)
		}
		return u.Scale * v, ""
	}
	var p matchPoint
	var msg string
	if p.v, msg = num(m.value, m.unit, "value"); msg != "" {
		return p, msg
	}
	if m.x >= 0 {
		p.hasX = true
		if p.x, msg = num(m.x, m.xUnit, "x"); msg != "" {
			return p, msg
		}
	}
	return p, ""
}

// parseFigure reads a number as tools print it: 1.5, 1.5e3, Fortran's
// 1.5D+03.
func parseFigure(t string) (float64, error) {
	t = strings.TrimSpace(t)
	t = strings.NewReplacer("D", "e", "d", "e").Replace(t)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("not a finite number")
	}
	return v, nil
}

// choose is the points a match mode keeps; "all" keeps one, the mean
// (its minimum and maximum are added by the caller).
func choose(pts []matchPoint, match string) []matchPoint {
	switch match {
	case MatchFirst:
		return pts[:1]
	case MatchEach:
		return pts
	case MatchAll:
		sum := 0.0
		for _, p := range pts {
			sum += p.v
		}
		mean := pts[0]
		mean.v = sum / float64(len(pts))
		return []matchPoint{mean}
	}
	return pts[len(pts)-1:]
}

// Reapply replaces what an earlier extraction (b.Benchmark.Extract) added
// to b by what x finds in output: the old metrics' samples and sanity
// verdict go, x's come. A run the old verdict alone made invalid is ok
// again before x judges it; a failed run stays failed. With files nil,
// the samples of the metrics of files stay as they were.
func (x *Extractor) Reapply(b *results.Bundle, output []byte, files map[string][]byte) {
	if old := b.Benchmark.Extract; old != nil {
		names := map[string]bool{}
		for _, m := range old.Metrics {
			names[m.Name] = m.File == "" || files != nil
		}
		b.Samples = slices.DeleteFunc(slices.Clone(b.Samples), func(s results.Sample) bool { return names[s.Metric] })
		if len(b.Samples) == 0 {
			b.Samples = nil
		}
	}
	b.Benchmark.Extract = nil
	var kept []string
	for _, l := range strings.Split(b.Error, "\n") {
		if l != "" && !strings.HasPrefix(l, SanityPrefix) {
			kept = append(kept, l)
		}
	}
	if b.Status == results.StatusInvalid {
		b.Error = strings.Join(kept, "\n")
		if b.Error == "" && !slices.ContainsFunc(b.Checks, func(c results.Check) bool { return !c.Passed }) {
			b.Status = results.StatusOK
		}
	}
	x.Apply(b, output, files)
}
