package results

import (
	"fmt"
	"strconv"
	"strings"
)

// Extract is what a campaign asks of a tool's output beyond its parser:
// user-defined metrics read by regular expressions, and sanity patterns.
// A bundle records the Extract its run was parsed with
// (Benchmark.Extract), so that `sbench ingest --reparse` can derive the
// same samples again from its Raw output. Package parsers applies it.
type Extract struct {
	Metrics []MetricDef `json:"metrics,omitempty" toml:"metric"`
	// Require are patterns the output must show; Reject patterns it must
	// not. A run that breaks one is invalid, with the pattern in its error.
	Require []string `json:"require,omitempty" toml:"require"`
	Reject  []string `json:"reject,omitempty" toml:"reject"`
}

// Empty reports whether e asks for nothing.
func (e *Extract) Empty() bool {
	return e == nil || len(e.Metrics) == 0 && len(e.Require) == 0 && len(e.Reject) == 0
}

// MetricDef is one user-defined metric: a named figure read from the
// output by a regular expression (Go's RE2 syntax, each line matched on
// its own: ^ and $ are a line's start and end).
type MetricDef struct {
	// Name is the sample's metric, [a-z0-9_]+.
	Name string `json:"name" toml:"name"`
	// Regex finds the figure; Value is its group (a name or a number;
	// default 1).
	Regex string `json:"regex" toml:"regex"`
	Value Group  `json:"value,omitempty" toml:"value"`
	// Unit is the figure's unit as the output prints it; sbench stores it
	// normalised (GB/s as MB/s, ms as s …).
	Unit string `json:"unit,omitempty" toml:"unit"`
	// Better is "higher" or "lower"; default the unit's direction.
	Better string `json:"better,omitempty" toml:"better"`
	// X is the group of the sample's x, for tables: one sample per
	// matching line; XUnit its unit.
	X     Group  `json:"x,omitempty" toml:"x"`
	XUnit string `json:"x_unit,omitempty" toml:"x_unit"`
	// Match says which matches count (for each x): "last" (default),
	// "first", "each" (a sample per match) or "all" (one sample: the mean,
	// with the minimum and maximum).
	Match string `json:"match,omitempty" toml:"match"`
	// File is a file the tool writes, relative to the step's working
	// directory, read instead of the output the parser reads.
	File string `json:"file,omitempty" toml:"file"`
}

// Group names a regular expression's group: by name, or by number
// ("1"). A campaign may write it as an integer or a string.
type Group string

// UnmarshalTOML reads value = 2 or value = "steps".
func (g *Group) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("group %d is negative", x)
		}
		*g = Group(strconv.FormatInt(x, 10))
	case string:
		*g = Group(x)
	default:
		return fmt.Errorf("%v is not a group: want its number (value = 2) or its name (value = \"steps\")", v)
	}
	return nil
}

// rateTimes are the denominators of a rate unit ("timesteps/s",
// "tau/day", "ns/day").
var rateTimes = map[string]bool{"s": true, "sec": true, "min": true, "h": true, "hour": true, "day": true}

// IsRate reports whether unit is something per unit of time, "X/s" or
// "X/day" (an application's timesteps/s, LAMMPS's tau/day, GROMACS's
// ns/day): a throughput, higher is better.
func IsRate(unit string) bool {
	num, den, ok := strings.Cut(strings.ToLower(unit), "/")
	return ok && num != "" && !strings.Contains(den, "/") && rateTimes[den]
}
