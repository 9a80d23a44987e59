package expect

import (
	"fmt"
	"strings"
)

// Ref is one expectation as sbench check judges it: a campaign's or a site
// profile's [[expect]] table (campaign.Expect) and where it came from.
type Ref struct {
	// Name is how it is shown; Title gives the default.
	Name      string `json:"name,omitempty"`
	Benchmark string `json:"benchmark"`
	Metric    string `json:"metric"`
	At        string `json:"at,omitempty"`
	Bound     string `json:"bound"`
	Where     string `json:"where,omitempty"`
	System    string `json:"system,omitempty"`
	// Source says where the expectation was written: "campaign
	// quickstart.toml:31", "site profile hpc1 (site.toml:12)", or the
	// campaign it was recorded in the archive with.
	Source string `json:"source,omitempty"`
}

// Title is the expectation's name, or "BENCHMARK METRIC@AT".
func (r Ref) Title() string {
	if r.Name != "" {
		return r.Name
	}
	s := r.Benchmark + " " + r.Metric
	if r.At != "" {
		s += "@" + r.At
	}
	return s
}

// Check says what is wrong with r before any run is looked at: a missing
// benchmark or metric, a bound or an at that does not parse.
func (r Ref) Check() error {
	var errs []string
	if strings.TrimSpace(r.Benchmark) == "" {
		errs = append(errs, "benchmark is missing")
	}
	if strings.TrimSpace(r.Metric) == "" {
		errs = append(errs, "metric is missing")
	}
	if _, err := ParseBound(r.Bound); err != nil {
		errs = append(errs, err.Error())
	}
	if _, err := ParseAt(r.At); err != nil {
		errs = append(errs, err.Error())
	}
	if _, err := ParseWhere(r.Where); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) > 0 {
		return fmt.Errorf("expectation %s: %s", r.Title(), strings.Join(errs, "; "))
	}
	return nil
}
