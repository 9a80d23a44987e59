package compare

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// DefaultWindow is the number of earlier runs a control band is computed
// from, as in XDMoD's application kernels.
const DefaultWindow = 20

// HistoryQuery picks one series out of the archive: one metric of one
// benchmark at one x, one point per run.
type HistoryQuery struct {
	Benchmark string
	Metric    string   // may be empty when the benchmark has one metric
	X         *float64 // may be nil when the metric has one x (or none)
	Campaign  string
	Variant   string // may be empty when the runs have one variant
	Labels    map[string]string
	// Filter narrows the runs further (run ids, jobs, statuses, times), as
	// every command's filter flags do; its benchmarks are Benchmark.
	Filter store.Filter
	// Config picks one configuration by its attributes (store.Config's
	// Lookup: a label, parameter, "variant" or "processes"); needed when
	// the runs have several.
	Config map[string]string

	Window    int     // control band window (DefaultWindow when 0)
	Alpha     float64 // significance of a step (0.05 when 0)
	Threshold float64 // smallest step, as a fraction, that is a regression
	// Seed fixes the permutations behind the steps' p-values.
	Seed uint64
	// Permutations is the most shuffles behind a p-value (999 when 0);
	// histories shown as a family of m want FamilyPermutations(m).
	Permutations int
}

// AmbiguousError says a query matches several series: the user must choose
// one of Choices with the flag named What.
type AmbiguousError struct {
	What    string // "metric", "x", "variant"
	Choices []string
}

func (e *AmbiguousError) Error() string {
	plural := e.What + "s"
	if e.What == "x" {
		plural = "x values"
	}
	return fmt.Sprintf("the runs have %d %s (%s): choose one with --%s", len(e.Choices), plural, listOf(e.Choices), e.What)
}

// History is one metric of one benchmark over time, with its control
// bands and the steps found in it.
type History struct {
	Benchmark string   `json:"benchmark"`
	Metric    string   `json:"metric"`
	Unit      string   `json:"unit"`
	Better    string   `json:"better,omitempty"`
	X         *float64 `json:"x,omitempty"`
	XUnit     string   `json:"x_unit,omitempty"`
	Variant   string   `json:"variant,omitempty"`
	Window    int      `json:"window"`
	Alpha     float64  `json:"alpha"`
	Threshold float64  `json:"threshold"`
	Points    []Point  `json:"points"`
	// Tested says the history has the runs for a step to be tested
	// (Testable: 8 at 0.05); P is then the p-value of its first test,
	// whether it changed level at all.
	Tested  bool         `json:"tested"`
	P       float64      `json:"p,omitempty"`
	Changes []StepChange `json:"changes"`
	// Warnings are what the reader should know: runs left out.
	Warnings []string `json:"warnings,omitempty"`

	search *StepSearch
}

// Point is one run of a history.
type Point struct {
	Run  int64     `json:"run"`
	Job  string    `json:"job,omitempty"`
	When time.Time `json:"when"`
	// Value is the median of the run's repeats; Min and Max their range.
	Value float64 `json:"value"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	N     int     `json:"n"`
	Band  *Band   `json:"band,omitempty"`
	// Outside is set when the value lies outside the control band.
	Outside bool `json:"outside,omitempty"`

	run *store.Run
}

// StepChange is a step found in a history: the level changed at Points[Index].
type StepChange struct {
	Index  int       `json:"index"`
	Run    int64     `json:"run"` // first run of the new level
	Job    string    `json:"job,omitempty"`
	When   time.Time `json:"when"`
	Before float64   `json:"before"` // median level before
	After  float64   `json:"after"`
	Delta  float64   `json:"delta"` // (after − before) / before
	P      float64   `json:"p"`
	Change Change    `json:"change"` // Better, Worse, Changed or Same (within the threshold)
	// Provenance is what differs between the last run before the step
	// and the first after it: kernel, MPI, firmware, port rate …
	Provenance []Difference `json:"provenance,omitempty"`
}

// Difference is one provenance field that differs across a step.
type Difference struct {
	Field  string `json:"field"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// LoadHistory reads the runs q selects and builds their history, reading
// the runs and their samples one at a time and keeping, when q names its
// metric, only that metric's samples (at q's x, when it names one).
func LoadHistory(ctx context.Context, db *store.DB, q HistoryQuery) (*History, error) {
	f := q.Filter
	f.Benchmark, f.Benchmarks = q.Benchmark, nil
	if q.Campaign != "" {
		f.Campaign = q.Campaign
	}
	if len(q.Labels) > 0 {
		f.Labels = q.Labels
	}
	var runs []store.Run
	if err := db.EachRun(ctx, f, store.RunOptions{}, func(r *store.Run) error {
		runs = append(runs, *r)
		return nil
	}); err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, ExplainEmpty(ctx, db, "history of benchmark "+q.Benchmark, f)
	}
	// With the metric named, the samples of others only name them in an
	// error: one of each (metric, x) is kept for that. Without, every
	// sample counts: the choice of metric is the runs' of the
	// configuration q picks, which BuildHistory works out.
	type metricX struct {
		metric string
		x      float64
		hasX   bool
	}
	seen := map[metricX]bool{}
	keep := func(s *store.Sample) bool {
		if q.Metric == "" || s.Metric == q.Metric && (q.X == nil || s.X != nil && *s.X == *q.X) {
			return true
		}
		k := metricX{metric: s.Metric}
		if s.X != nil {
			k.x, k.hasX = *s.X, true
		}
		first := !seen[k]
		seen[k] = true
		return first
	}
	var samples []store.Sample
	if err := db.EachSample(ctx, f, store.SampleOptions{}, func(s store.Sample) error {
		if keep(&s) {
			samples = append(samples, s)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	// A scalar is a sample with no x, for a history.
	if err := db.EachScalar(ctx, f, func(s store.Scalar) error {
		x := store.Sample{RunID: s.RunID, Sample: results.Sample{Metric: s.Name, Unit: s.Unit, Value: s.Value}}
		if keep(&x) {
			samples = append(samples, x)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return BuildHistory(runs, samples, q)
}

// BuildHistory builds the history of q from runs and their samples: the ok
// runs, in time order (start, else ingest time), one point per run (the
// median of its repeats), the steps (Steps) and the control bands
// (ControlBands, reset at each step).
func BuildHistory(runs []store.Run, samples []store.Sample, q HistoryQuery) (*History, error) {
	if q.Window <= 0 {
		q.Window = DefaultWindow
	}
	if q.Alpha <= 0 || q.Alpha >= 1 {
		q.Alpha = 0.05
	}
	h := &History{Benchmark: q.Benchmark, Window: q.Window, Alpha: q.Alpha, Threshold: q.Threshold}
	byID, err := historyRuns(runs, h, q)
	if err != nil {
		return nil, err
	}
	vals, err := historyValues(samples, byID, h, q)
	if err != nil {
		return nil, err
	}
	h.Better = betterNames[results.BetterFor(h.Unit)]
	for i := range runs {
		r := &runs[i]
		v := vals[r.ID]
		if byID[r.ID] == nil || len(v) == 0 {
			continue
		}
		when := r.Start
		if when.IsZero() {
			when = r.IngestedAt
		}
		h.Points = append(h.Points, Point{Run: r.ID, Job: JobName(r), When: when,
			Value: Median(v), Min: slices.Min(v), Max: slices.Max(v), N: len(v), run: r})
	}
	// Runs come from the archive in start order with unknown starts
	// first; order by the time shown instead, stably.
	slices.SortStableFunc(h.Points, func(a, b Point) int { return a.When.Compare(b.When) })
	h.search = NewStepSearch(h.values(), StepOptions{Alpha: q.Alpha, Seed: q.Seed, Permutations: q.Permutations})
	if p, ok := h.search.First(); ok {
		h.Tested, h.P = true, p
	}
	h.findSteps(q.Alpha)
	return h, nil
}

// historyRuns are the ok runs of the history's configuration, by id: of
// its benchmark, variant and configuration (q's), which must leave one.
func historyRuns(runs []store.Run, h *History, q HistoryQuery) (map[int64]*store.Run, error) {
	byID := map[int64]*store.Run{}
	variants := map[string]bool{}
	notOK := map[results.Status][]int64{}
	for i := range runs {
		r := &runs[i]
		if q.Benchmark != "" && r.Benchmark != q.Benchmark {
			continue
		}
		if r.Status != results.StatusOK {
			notOK[r.Status] = append(notOK[r.Status], r.ID)
			continue
		}
		byID[r.ID] = r
		variants[r.Variant] = true
	}
	if len(notOK) > 0 {
		h.Warnings = append(h.Warnings, statusRuns(notOK)+" left out")
	}
	if len(byID) == 0 {
		return nil, fmt.Errorf("no ok run of benchmark %q: %w", q.Benchmark, ErrNoData)
	}
	maps.DeleteFunc(byID, func(_ int64, r *store.Run) bool { return q.Variant != "" && r.Variant != q.Variant })
	if len(byID) == 0 {
		return nil, fmt.Errorf("no ok run of benchmark %q has variant %q (it has %s): %w", q.Benchmark, q.Variant, strings.Join(slices.Sorted(maps.Keys(variants)), ", "), ErrNoData)
	}
	// The configuration asked for first: when it leaves one variant (a
	// sweep's value, --config buf=16384), that is the history's, and
	// --variant is not needed.
	if err := pickConfig(byID, q); err != nil {
		return nil, err
	}
	if q.Variant == "" {
		left := map[string]bool{}
		for _, r := range byID {
			left[r.Variant] = true
		}
		if len(left) > 1 {
			return nil, &AmbiguousError{What: "variant", Choices: slices.Sorted(maps.Keys(left))}
		}
	}
	h.Variant = q.Variant
	if err := oneConfig(byID, q); err != nil {
		return nil, err
	}
	return byID, nil
}

// historyValues are the values of the history's metric at its x, by run:
// q's, or the one the runs have (more is ambiguous).
func historyValues(samples []store.Sample, byID map[int64]*store.Run, h *History, q HistoryQuery) (map[int64][]float64, error) {
	var rel []store.Sample
	metrics := map[string]bool{}
	for _, s := range samples {
		r := byID[s.RunID]
		if r == nil || (q.Variant != "" && r.Variant != q.Variant) {
			continue
		}
		metrics[s.Metric] = true
		if q.Metric == "" || s.Metric == q.Metric {
			rel = append(rel, s)
		}
	}
	if q.Metric == "" {
		if len(metrics) > 1 {
			return nil, &AmbiguousError{What: "metric", Choices: slices.Sorted(maps.Keys(metrics))}
		}
		for m := range metrics {
			q.Metric = m
		}
	}
	if len(rel) == 0 {
		return nil, fmt.Errorf("no run of benchmark %q has metric %q (it has %s): %w", q.Benchmark, q.Metric, strings.Join(slices.Sorted(maps.Keys(metrics)), ", "), ErrNoData)
	}
	h.Metric = q.Metric
	xs := map[float64]bool{}
	noX := false
	for _, s := range rel {
		if s.X == nil {
			noX = true
		} else {
			xs[*s.X] = true
		}
	}
	if q.X == nil && len(xs)+btoi(noX) > 1 {
		var choices []string
		for _, x := range slices.Sorted(maps.Keys(xs)) {
			choices = append(choices, strconv.FormatFloat(x, 'f', -1, 64))
		}
		return nil, &AmbiguousError{What: "x", Choices: choices}
	}
	// values per run, in the order runs were given (time order from Runs)
	vals := map[int64][]float64{}
	for _, s := range rel {
		match := (q.X == nil && (s.X == nil || len(xs) == 1)) || (q.X != nil && s.X != nil && *s.X == *q.X)
		if !match {
			continue
		}
		if h.Unit == "" {
			h.Unit, h.XUnit, h.X = s.Unit, s.XUnit, s.X
		}
		vals[s.RunID] = append(vals[s.RunID], s.Value)
	}
	if len(vals) == 0 {
		return nil, fmt.Errorf("no run of benchmark %q has %s at x = %s: %w", q.Benchmark, q.Metric, strconv.FormatFloat(*q.X, 'f', -1, 64), ErrNoData)
	}
	return vals, nil
}

// findSteps finds the history's steps at significance level (see
// StepSearch.Steps), judges each against the threshold, and draws the
// control bands, reset at each step.
func (h *History) findSteps(level float64) {
	h.Changes = nil
	var starts []int
	better := results.BetterFor(h.Unit)
	for _, s := range h.search.Steps(level) {
		starts = append(starts, s.Index)
		p := h.Points[s.Index]
		c := newStepChange(s, p, h.Threshold, better)
		c.Provenance = Provenance(h.Points[s.Index-1].run, p.run)
		h.Changes = append(h.Changes, c)
	}
	bands, outside := ControlBands(h.values(), h.Window, starts)
	for i := range h.Points {
		h.Points[i].Band, h.Points[i].Outside = bands[i], outside[i]
	}
}

// values are the points' values, in time order.
func (h *History) values() []float64 {
	v := make([]float64, len(h.Points))
	for i, p := range h.Points {
		v[i] = p.Value
	}
	return v
}

// HistoryFamily controls the steps of histories shown together — a page
// of one metric at several sizes — as one family (StepFamily): the first
// tests of those long enough to be tested are held to Benjamini–Hochberg
// at their alpha, the histories selected are searched again at alpha·R/m,
// the others lose their steps. A history alone is a family of one: as
// it was.
func HistoryFamily(hs []*History) {
	if len(hs) < 2 {
		return
	}
	ps, tested := make([]float64, len(hs)), make([]bool, len(hs))
	for i, h := range hs {
		ps[i], tested[i] = h.P, h.Tested
	}
	levels := StepFamily(ps, tested, hs[0].Alpha)
	for i, h := range hs {
		h.findSteps(levels[i])
	}
}

// pickConfig keeps in byID the runs whose configuration has every
// KEY=VALUE of q.Config: a label, a parameter or a setting the variant is
// named by (store.Run.Setting), or "campaign", "variant" or "processes"
// (store.Config's Lookup).
func pickConfig(byID map[int64]*store.Run, q HistoryQuery) error {
	if len(q.Config) == 0 {
		return nil
	}
	for id, r := range byID {
		c := store.ConfigOf(r)
		for k, v := range q.Config {
			got, ok := r.Setting(k)
			if !ok {
				got, ok = c.Lookup(k)
			}
			if !ok || got != v {
				delete(byID, id)
				break
			}
		}
	}
	if len(byID) == 0 {
		return fmt.Errorf("no ok run of benchmark %q has the configuration %s: %w", q.Benchmark, formatConfig(q.Config), ErrNoData)
	}
	return nil
}

// oneConfig says which configuration to choose when the runs left in
// byID have several (a history follows one configuration: never two
// process counts, two placements or two labelled setups averaged into one
// line). Campaigns are not configurations here: a history follows the
// same measurement across submissions.
func oneConfig(byID map[int64]*store.Run, q HistoryQuery) error {
	configs := map[string]store.Config{}
	for _, r := range byID {
		c := store.ConfigOf(r).Without(store.AttrCampaign)
		configs[c.Key()] = c
	}
	if len(configs) < 2 {
		return nil
	}
	// Name each configuration by what differs between them.
	values := map[string]map[string]bool{}
	for _, c := range configs {
		for _, a := range c {
			if values[a.Key] == nil {
				values[a.Key] = map[string]bool{}
			}
			values[a.Key][a.Value] = true
		}
	}
	var choices []string
	for _, c := range configs {
		var parts []string
		for _, a := range c {
			if len(values[a.Key]) > 1 || countWith(configs, a.Key) < len(configs) {
				parts = append(parts, a.String())
			}
		}
		choices = append(choices, strings.Join(parts, ","))
	}
	slices.Sort(choices)
	return &AmbiguousError{What: "config", Choices: choices}
}

// countWith is how many configurations have attribute key at all.
func countWith(configs map[string]store.Config, key string) int {
	n := 0
	for _, c := range configs {
		if _, ok := c.Lookup(key); ok {
			n++
		}
	}
	return n
}

func formatConfig(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// Regressions returns the steps for the worse beyond the threshold.
func (h *History) Regressions() int {
	n := 0
	for _, c := range h.Changes {
		if c.Change == Worse {
			n++
		}
	}
	return n
}

// JobName is a run's job step as history names it: 1234.0, or 1234 with no
// step, and 1234.0 r1 for a run of a requeued job's attempt 1
// (store.LaunchName); "" for a run of no job.
func JobName(r *store.Run) string { return r.Launch() }

// Provenance returns the fields of what a run ran on that differ between
// two runs: kernel, OS, MPI, CPU, InfiniBand firmware, port rate and link
// layer, loaded modules, the tool and runner versions and the nodes. Each
// field is the sorted set of its values over the run's hosts, so that a
// change on one node of many shows.
func Provenance(before, after *store.Run) []Difference {
	if before == nil || after == nil {
		return nil
	}
	a, b := provenanceOf(before), provenanceOf(after)
	var out []Difference
	for _, f := range provenanceFields {
		if a[f] != b[f] {
			out = append(out, Difference{Field: f, Before: orDash(a[f]), After: orDash(b[f])})
		}
	}
	return out
}

var provenanceFields = []string{"kernel", "os", "mpi", "cpu", "firmware", "port rate", "link layer", "modules", "governor", "tool", "runner", "nodes"}

func provenanceOf(r *store.Run) map[string]string {
	sets := map[string]map[string]bool{}
	add := func(field, v string) {
		if v == "" {
			return
		}
		if sets[field] == nil {
			sets[field] = map[string]bool{}
		}
		sets[field][v] = true
	}
	for _, h := range r.Hosts {
		add("kernel", h.Kernel)
		add("os", h.OS)
		add("mpi", h.MPI)
		add("cpu", h.CPUModel)
		add("governor", h.Governor)
		for _, m := range h.Modules {
			add("modules", m)
		}
		for _, p := range h.IB {
			dev := p.Device
			if p.Port != 0 {
				dev += "/" + strconv.Itoa(p.Port)
			}
			if p.Firmware != "" {
				add("firmware", dev+" "+p.Firmware)
			}
			rate := p.Rate
			if rate == "" && p.RateGbps > 0 {
				rate = strconv.FormatFloat(p.RateGbps, 'f', -1, 64) + " Gb/s"
			}
			if rate != "" {
				add("port rate", dev+" "+rate)
			}
			if p.LinkLayer != "" {
				add("link layer", dev+" "+p.LinkLayer)
			}
		}
	}
	tool := strings.TrimSpace(r.Tool + " " + r.ToolVer)
	add("tool", tool)
	add("runner", r.RunnerVersion)
	out := map[string]string{}
	for f, s := range sets {
		out[f] = strings.Join(slices.Sorted(maps.Keys(s)), ", ")
	}
	out["nodes"] = strings.Join(r.Nodes, ",")
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
