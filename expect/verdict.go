package expect

import (
	"fmt"
	"strconv"
	"strings"
)

// Status is an expectation's verdict.
type Status string

const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	// NoData: no run measured the metric at the point, or the bound's
	// reference (link rate, Rpeak, baseline) is unknown. It is said, not
	// failed: sbench check exits 0 on it, as a ReFrame test without a
	// reference for the system is not failed.
	NoData Status = "NO DATA"
)

// Verdict is an expectation judged on the runs of one configuration: the
// median of the runs' values against the bound's limit, with its evidence.
type Verdict struct {
	Ref    Ref    `json:"expectation"`
	Status Status `json:"status"`
	// Campaign is the campaign whose runs were judged ("" for any).
	Campaign string `json:"campaign,omitempty"`
	// Config is the configuration judged, when the runs had several.
	Config string `json:"config,omitempty"`
	// Value is the median of the runs' values (each run's own value is the
	// median of its samples at the point), in Unit.
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	// X is the x the value was measured at ("best": each run's best x).
	X *float64 `json:"x,omitempty"`
	// N is how many runs the median is of; Runs their archive ids.
	N    int     `json:"n"`
	Runs []int64 `json:"runs"`
	// Limit is the bound's limit in Unit; LimitFrom where it came from.
	Limit     float64 `json:"limit"`
	LimitFrom string  `json:"limit_from,omitempty"`
	// Note says what the verdict rests on when it is little (one run), or
	// why there is no data.
	Note string `json:"note,omitempty"`
}

// SingleRunNote is the note of a verdict that rests on one run.
const SingleRunNote = "n=1: one run, which may be an outlier; repeat it (campaign.repeats) for a median"

// Counts is how many verdicts have each status.
func Counts(vs []Verdict) map[Status]int {
	out := map[Status]int{}
	for _, v := range vs {
		out[v.Status]++
	}
	return out
}

// Summary is one line for a set of verdicts: "3 PASS, 1 FAIL, 0 NO DATA".
func Summary(vs []Verdict) string {
	c := Counts(vs)
	return fmt.Sprintf("%d PASS, %d FAIL, %d NO DATA", c[Pass], c[Fail], c[NoData])
}

// FormatValue writes a value with its unit, to 4 significant digits.
func FormatValue(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'g', 4, 64)
	if strings.ContainsAny(s, "e") {
		s = strconv.FormatFloat(v, 'f', -1, 64)
		if len(s) > 12 {
			s = strconv.FormatFloat(v, 'e', 3, 64)
		}
	}
	if unit != "" {
		s += " " + unit
	}
	return s
}

// Label is the expectation's title, with the configuration judged when the
// runs had several: "osu_bw bandwidth@4MiB [variant=ppn2]".
func (v Verdict) Label() string {
	if v.Config != "" {
		return v.Ref.Title() + " [" + v.Config + "]"
	}
	return v.Ref.Title()
}

// LimitValue is the bound's limit in the metric's unit, "—" when it is
// not known.
func (v Verdict) LimitValue() string {
	if v.LimitFrom == "" {
		return "—"
	}
	return FormatValue(v.Limit, v.Unit)
}

// Evidence is where the limit came from and the verdict's note, as one
// text ("" when neither is known).
func (v Verdict) Evidence() string {
	parts := []string{}
	if v.LimitFrom != "" && v.LimitFrom != "absolute" {
		parts = append(parts, "limit: "+v.LimitFrom)
	}
	if v.Note != "" {
		parts = append(parts, v.Note)
	}
	return strings.Join(parts, "; ")
}

// ValueText is the verdict's evidence as one cell: "median 2310 MB/s".
func (v Verdict) ValueText() string {
	if v.N == 0 {
		return "—"
	}
	return FormatValue(v.Value, v.Unit)
}

// LimitText is the verdict's bound and its resolved limit: ">= 24000
// MB/s (24 GB/s)".
func (v Verdict) LimitText() string {
	if v.Limit == 0 && v.Status == NoData {
		return v.Ref.Bound
	}
	b, err := ParseBound(v.Ref.Bound)
	if err != nil {
		return v.Ref.Bound
	}
	return b.Op + " " + FormatValue(v.Limit, v.Unit)
}
