// Package expect reads acceptance references: the bound of an [[expect]]
// table (">= 24 GB/s", ">= 0.9 * link_rate", ">= baseline:NAME - 5%"), the
// point it is judged at, the units it may be written in, and the verdict a
// median of runs gets against it. It knows nothing of the archive: package
// expect/judge resolves bounds against the runs and judges them.
package expect

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/sbench/sbench/sizes"
)

// Kind is what a bound's value is relative to.
type Kind string

const (
	// Absolute is a value with its unit: ">= 24 GB/s".
	Absolute Kind = "absolute"
	// LinkRate is a factor of the link rate the runs crossed (their
	// link_rate label, else their provenance): ">= 0.9 * link_rate".
	LinkRate Kind = "link_rate"
	// Rpeak is a factor of the theoretical peak of the runs' nodes (their
	// rpeak label, else their provenance, as the HPL report computes it):
	// ">= 0.75 * rpeak".
	Rpeak Kind = "rpeak"
	// Baseline is the median of a baseline's runs, with a margin:
	// ">= baseline:pre-upgrade - 5%".
	Baseline Kind = "baseline"
)

// Bound is a parsed bound: value Op limit must hold, the limit being
// Value (in Unit) when Kind is Absolute, else Value × what Kind names,
// times 1 + Margin.
type Bound struct {
	Op   string // ">=", "<=", ">" or "<"
	Kind Kind
	// Value is the absolute value, or the factor of link_rate and rpeak
	// (1 when none is written).
	Value float64
	// Unit is the unit of an absolute value as written ("" for a bare
	// number: the metric's own unit).
	Unit string
	// Baseline is the baseline's name of a Baseline bound.
	Baseline string
	// Margin is the relative margin ("- 5%" is -0.05).
	Margin float64
}

// Ops are the operators a bound may start with.
var Ops = []string{">=", "<=", ">", "<"}

var (
	numberRE   = regexp.MustCompile(`^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)
	unitRE     = regexp.MustCompile(`^[A-Za-zµ%][A-Za-z0-9µ%/_.-]*$`)
	factorRE   = regexp.MustCompile(`^(?:(.+?)\s*\*\s*)?(link_rate|rpeak)(.*)$`)
	marginRE   = regexp.MustCompile(`^([+-])\s*(.+)%$`)
	boundForms = `">= 24 GB/s", "<= 3 us", ">= 0.9 * link_rate", ">= 0.75 * rpeak" or ">= baseline:NAME - 5%"`
)

// ParseBound reads a bound. Errors say what was expected.
func ParseBound(s string) (Bound, error) {
	b, err := parseBound(strings.TrimSpace(s))
	if err != nil {
		return Bound{}, fmt.Errorf("bound %q: %w", s, err)
	}
	return b, nil
}

func parseBound(s string) (Bound, error) {
	var b Bound
	for _, op := range Ops {
		if strings.HasPrefix(s, op) {
			b.Op, s = op, strings.TrimSpace(s[len(op):])
			break
		}
	}
	switch {
	case b.Op == "":
		return b, errors.New("want an operator first (>=, <=, >, <), e.g. " + boundForms)
	case s == "":
		return b, errors.New("nothing after the operator: want " + boundForms)
	}
	if name, ok := strings.CutPrefix(s, "baseline:"); ok {
		b.Kind = Baseline
		name, rest, _ := strings.Cut(name, " ")
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r == ',' || !unicode.IsPrint(r) }) {
			return b, fmt.Errorf("baseline name %q: want a name as sbench baseline set gives it", name)
		}
		b.Baseline, b.Value = name, 1
		m, err := parseMargin(rest)
		b.Margin = m
		return b, err
	}
	if m := factorRE.FindStringSubmatch(s); m != nil {
		b.Kind, b.Value = Kind(m[2]), 1
		if m[1] != "" {
			f, err := parseFactor(m[1])
			if err != nil {
				return b, err
			}
			b.Value = f
		}
		margin, err := parseMargin(m[3])
		b.Margin = margin
		return b, err
	}
	num := numberRE.FindString(s)
	if num == "" {
		return b, errors.New("want a number with its unit, link_rate, rpeak or baseline:NAME after the operator: " + boundForms)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return b, fmt.Errorf("%q is not a number", num)
	}
	b.Kind, b.Value = Absolute, v
	b.Unit = strings.TrimSpace(s[len(num):])
	if b.Unit != "" && !unitRE.MatchString(b.Unit) {
		return b, fmt.Errorf("%q is not a unit (GB/s, MB/s, Gb/s, us, ms, s, Gflops, timesteps/s …)", b.Unit)
	}
	if b.Unit != "" && strings.HasSuffix(b.Unit, "%") && b.Unit != "%" {
		return b, fmt.Errorf("%q is not a unit", b.Unit)
	}
	return b, nil
}

// parseFactor reads the factor of link_rate or rpeak: 0.9, or 90%.
func parseFactor(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	t := strings.TrimSpace(strings.TrimSuffix(s, "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || numberRE.FindString(t) != t || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("factor %q: want a positive number such as 0.9 (or 90%%)", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}

// parseMargin reads what may follow a reference: "", "- 5%", "+2.5%".
func parseMargin(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	m := marginRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q: want a margin such as - 5%% or + 2%% after the reference", s)
	}
	t := strings.TrimSpace(m[2])
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || numberRE.FindString(t) != t || v < 0 || v >= 100 || strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("margin %q: want a percentage from 0 to 100", s)
	}
	if m[1] == "-" {
		v = -v
	}
	return v / 100, nil
}

// String writes the bound back in the form ParseBound reads.
func (b Bound) String() string {
	var s string
	switch b.Kind {
	case Absolute:
		s = strconv.FormatFloat(b.Value, 'g', -1, 64)
		if b.Unit != "" {
			s += " " + b.Unit
		}
	case Baseline:
		s = "baseline:" + b.Baseline
	default:
		s = string(b.Kind)
		if b.Value != 1 {
			s = strconv.FormatFloat(b.Value, 'g', -1, 64) + " * " + s
		}
	}
	if b.Kind != Absolute && b.Margin != 0 {
		sign := "+"
		if b.Margin < 0 {
			sign = "-"
		}
		s += fmt.Sprintf(" %s %s%%", sign, strconv.FormatFloat(math.Abs(b.Margin)*100, 'g', -1, 64))
	}
	return b.Op + " " + s
}

// Holds reports whether value keeps the bound whose limit is limit.
func (b Bound) Holds(value, limit float64) bool {
	switch b.Op {
	case ">=":
		return value >= limit
	case "<=":
		return value <= limit
	case ">":
		return value > limit
	case "<":
		return value < limit
	}
	return false
}

// Higher reports whether the bound asks for a value above its limit:
// "best" is then the highest value over x, else the lowest.
func (b Bound) Higher() bool { return b.Op == ">=" || b.Op == ">" }

// Point is where a metric is judged: at one x, the best over every x, or
// (neither) a metric that has no x.
type Point struct {
	X    *float64
	Best bool
}

// ParseAt reads an expectation's at: "" (no x), "best", or an x such as a
// message size (4MiB, 4194304, 64K) or a plain number (a rank count).
func ParseAt(s string) (Point, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return Point{}, nil
	case "best":
		return Point{Best: true}, nil
	}
	v, err := sizes.ParseFloat(s)
	if err != nil || math.IsNaN(v) {
		return Point{}, fmt.Errorf("at %q: want an x such as 4MiB, 4194304 or 8, or \"best\" for the best over every x", s)
	}
	return Point{X: &v}, nil
}

// CheckUnit says why the bound cannot be judged against a metric written
// in unit (its unit as the metric table or the runs give it), or nil: an
// absolute value in a unit that does not convert to it, a link rate
// against a metric that is no data rate, Rpeak against one that is no
// flop rate. An unknown metric unit ("") is not checked.
func (b Bound) CheckUnit(unit string) error {
	if unit == "" {
		return nil
	}
	switch b.Kind {
	case Absolute:
		return Compatible(b.Unit, unit)
	case LinkRate:
		if err := Compatible("Gb/s", unit); err != nil {
			return fmt.Errorf("link_rate is a data rate; the metric's unit %s is not", unit)
		}
	case Rpeak:
		if err := Compatible("Gflops", unit); err != nil {
			return fmt.Errorf("rpeak is a flop rate; the metric's unit %s is not", unit)
		}
	}
	return nil
}

// ParseWhere reads an expectation's where: KEY=VALUE[,KEY=VALUE…], the
// labels or swept values (ntasks_per_node=1, variant=tcp) of the runs it
// judges, as sbench compare's label selector reads them.
func ParseWhere(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("where %q: %q is not KEY=VALUE", s, kv)
		}
		if old, dup := out[k]; dup && old != v {
			return nil, fmt.Errorf("where %q: %q given twice", s, k)
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, nil
}
