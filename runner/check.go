package runner

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
)

// CheckSpec is a validity check from the command line (--check):
// METRIC[@X] OP VALUE, e.g. "bandwidth@4194304>=3000" or "gflops>=100".
// With @X it holds for every sample of METRIC at x = X; without, for the
// scalar METRIC (HPL's gflops), or else every sample of METRIC that has no
// x (iperf3's bandwidth). Every kernel's bundles go through the same
// checks, native or wrapped.
type CheckSpec struct {
	Metric string
	// X is the sample position; nil for a scalar or an x-less sample.
	X *float64
	// Op is ">=", "<=", ">" or "<": value Op Threshold must hold.
	Op        string
	Threshold float64
}

// ParseCheck parses a check spec. X may be a size (package sizes: 4M and
// 4MiB are 4194304, 1KB is 1000).
func ParseCheck(s string) (CheckSpec, error) {
	bad := func(format string, args ...any) (CheckSpec, error) {
		return CheckSpec{}, fmt.Errorf("check %q: "+format, append([]any{s}, args...)...)
	}
	i := strings.IndexAny(s, "<>")
	if i < 0 {
		return bad("no comparison; want METRIC[@X] then >=, <=, > or < and a number, e.g. bandwidth@4194304>=3000")
	}
	op := s[i : i+1]
	if i+1 < len(s) && s[i+1] == '=' {
		op += "="
	}
	left, right := strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+len(op):])
	metric, at, hasX := strings.Cut(left, "@")
	metric = strings.TrimSpace(metric)
	if metric == "" {
		return bad("no metric before %s", op)
	}
	for _, c := range metric {
		if c <= ' ' || c == '=' || c == 0x7f || c == '\uFFFD' {
			return bad("metric %q: no spaces, '=' or control characters", metric)
		}
	}
	c := CheckSpec{Metric: metric, Op: op}
	if hasX {
		x, err := parseNumber(at, true)
		if err != nil {
			return bad("x after @: %v", err)
		}
		c.X = &x
	}
	v, err := parseNumber(right, false)
	if err != nil {
		return bad("threshold after %s: %v", op, err)
	}
	c.Threshold = v
	return c, nil
}

// parseNumber reads a finite decimal number; a sized one (the x after @)
// may also be a size as package sizes reads it: 4M, 4MiB, 64 KiB, 1KB.
func parseNumber(text string, sized bool) (float64, error) {
	if sized {
		if v, err := sizes.ParseFloat(text); err == nil {
			return v, nil
		}
	}
	s := strings.TrimSpace(text)
	// ParseFloat takes "inf", "nan", hex and underscores; a threshold is
	// plain decimal.
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E') {
			return 0, fmt.Errorf("%q is not a number", text)
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a number", text)
	}
	return v, nil
}

// Name is the check's name in the bundle: the metric and its x.
func (c CheckSpec) Name() string {
	if c.X == nil {
		return c.Metric
	}
	return c.Metric + "@" + formatNumber(*c.X)
}

// String is the spec in canonical form; ParseCheck reads it back.
func (c CheckSpec) String() string { return c.Name() + c.Op + formatNumber(c.Threshold) }

// formatNumber writes whole numbers in full (4194304, not 4.194304e+06):
// they are message sizes.
func formatNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func (c CheckSpec) holds(v float64) bool {
	switch c.Op {
	case ">=":
		return v >= c.Threshold
	case "<=":
		return v <= c.Threshold
	case ">":
		return v > c.Threshold
	case "<":
		return v < c.Threshold
	}
	return false
}

// values returns what the check applies to in b.
func (c CheckSpec) values(b *results.Bundle) []float64 {
	var vs []float64
	if c.X == nil {
		for _, s := range b.Scalars {
			if s.Name == c.Metric {
				vs = append(vs, s.Value)
			}
		}
		if len(vs) > 0 {
			return vs
		}
	}
	for _, s := range b.Samples {
		if s.Metric != c.Metric {
			continue
		}
		if c.X == nil && s.X == nil || c.X != nil && s.X != nil && *s.X == *c.X {
			vs = append(vs, s.Value)
		}
	}
	return vs
}

// ApplyChecks records every check in b, judged on the worst matching value
// (the lowest for >= and >, the highest for <= and <). A check that fails
// or finds nothing to judge makes an ok bundle invalid and says why in its
// error. A failed run is left alone: what it measured is partial anyway.
func ApplyChecks(b *results.Bundle, specs []CheckSpec) {
	if b.Status == results.StatusFailed {
		return
	}
	var problems []string
	for _, c := range specs {
		vs := c.values(b)
		if len(vs) == 0 {
			b.Checks = append(b.Checks, results.Check{Name: c.Name(), Threshold: c.Threshold, Op: c.Op})
			what := "sample"
			if c.X == nil {
				what = "scalar or sample"
			}
			problems = append(problems, fmt.Sprintf("check %s: no %s %s to judge", c, what, c.Name()))
			continue
		}
		worst := slices.Max(vs)
		if c.Op[0] == '>' {
			worst = slices.Min(vs)
		}
		ok := c.holds(worst)
		b.Checks = append(b.Checks, results.Check{Name: c.Name(), Value: worst, Threshold: c.Threshold, Op: c.Op, Passed: ok})
		if !ok {
			problems = append(problems, fmt.Sprintf("check %s failed: %s is %s", c, c.Name(), formatNumber(worst)))
		}
	}
	if len(problems) == 0 {
		return
	}
	b.Status = results.StatusInvalid
	if b.Error != "" {
		problems = append([]string{b.Error}, problems...)
	}
	b.Error = strings.Join(problems, "; ")
}
