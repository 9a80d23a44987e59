package compare

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Archive is what selectors are resolved against and empty selections
// explained with; *store.DB is one.
type Archive interface {
	Baseline(ctx context.Context, name string) (store.Baseline, error)
	Baselines(ctx context.Context) ([]store.Baseline, error)
	Jobs(ctx context.Context, campaign string) ([]store.Job, error)
	Runs(ctx context.Context, f store.Filter) ([]store.Run, error)
	Inventory(ctx context.Context) (store.Inventory, error)
}

// EmptySelectionError says that a selection found no runs, and names what
// the archive holds instead, so that a typo is seen at once: "selector
// fabric=ibx selects no runs; labels in the archive: fabric=ib,
// fabric=eth; campaigns: acceptance, quickstart". It wraps ErrNoData, and
// Err when there is a cause beyond the emptiness (store.ErrNotFound for an
// unknown baseline), so that every command can map an empty selection to
// one exit status.
type EmptySelectionError struct {
	// Selection is what selected nothing, as the user wrote it: "selector
	// fabric=ibx", "--benchmark osu_latncy".
	Selection string
	// Exists says what the archive holds instead, one clause each.
	Exists []string
	// Err is the cause beyond the emptiness, if any.
	Err error
}

func (e *EmptySelectionError) Error() string {
	s := e.Selection + " selects no runs"
	if len(e.Exists) > 0 {
		s += "; " + strings.Join(e.Exists, "; ")
	}
	return s
}

// Unwrap gives ErrNoData and the cause, for errors.Is.
func (e *EmptySelectionError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrNoData, e.Err}
	}
	return []error{ErrNoData}
}

// maxListed bounds the names a message lists of one kind.
const maxListed = 12

// ExplainEmpty returns the *EmptySelectionError for a filter that selects
// no runs of a: for each condition of f, the values the archive has when
// the one asked for is not among them, with a did-you-mean when one is
// close; when every value exists but not together, the values the runs
// matching the other conditions have. what names the selection in the
// user's words ("selector campaign:acc", "--benchmark osu_latncy"). Any
// command with an empty selection can return it: runs, export, report,
// compare, history.
func ExplainEmpty(ctx context.Context, a Archive, what string, f store.Filter) error {
	e := &EmptySelectionError{Selection: what}
	inv, err := a.Inventory(ctx)
	if err != nil {
		return err
	}
	if inv.Runs == 0 {
		e.Exists = append(e.Exists, "the archive has no runs yet (sbench ingest or sbench local add them)")
		return e
	}
	unknown := false
	if f.Campaign != "" && !slices.Contains(inv.Campaigns, f.Campaign) {
		unknown = true
		e.Exists = append(e.Exists, listClause("campaigns", inv.Campaigns, f.Campaign))
	}
	var benchmarks []string
	if f.Benchmark != "" {
		benchmarks = append(benchmarks, f.Benchmark)
	}
	benchmarks = append(benchmarks, f.Benchmarks...)
	for _, b := range benchmarks {
		if !slices.Contains(inv.Benchmarks, b) {
			unknown = true
			e.Exists = append(e.Exists, listClause("benchmarks", inv.Benchmarks, b))
			break // one list of benchmarks is enough, with the first typo's suggestion
		}
	}
	for _, sys := range f.Systems {
		if !slices.Contains(inv.Systems, sys) {
			unknown = true
			if len(inv.Systems) == 0 {
				e.Exists = append(e.Exists, "no run says which system it came from (sbench ingest --system NAME, or Slurm's cluster name recorded by sbench-runner)")
			} else {
				e.Exists = append(e.Exists, listClause("systems", inv.Systems, sys))
			}
			break
		}
	}
	// KEY=VALUE names a label, else a parameter or a setting a variant is
	// named by (store.Run.Setting): the message names both.
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		if c := labelClause(k, f.Labels[k], &inv); c != "" {
			unknown = true
			e.Exists = append(e.Exists, c)
		}
	}
	if len(f.RunIDs) > 0 && (slices.Max(f.RunIDs) < inv.FirstRun || slices.Min(f.RunIDs) > inv.LastRun) {
		unknown = true
		e.Exists = append(e.Exists, fmt.Sprintf("run ids in the archive: %d-%d", inv.FirstRun, inv.LastRun))
	}
	if len(f.JobIDs) > 0 {
		jobs, err := a.Jobs(ctx, f.Campaign)
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(jobs))
		for _, j := range jobs {
			ids = append(ids, j.SlurmID)
		}
		if !slices.ContainsFunc(f.JobIDs, func(id string) bool { return slices.Contains(ids, id) || slices.Contains(ids, arrayOf(id)) }) {
			unknown = true
			// The newest jobs are the likeliest meant.
			slices.Reverse(ids)
			what := "jobs recorded"
			if f.Campaign != "" {
				what = "jobs of campaign " + f.Campaign
			}
			e.Exists = append(e.Exists, listClause(what+", newest first", ids, f.JobIDs[0]))
		}
	}
	if unknown {
		if f.Campaign == "" && len(inv.Campaigns) > 0 && !slices.ContainsFunc(e.Exists, func(s string) bool { return strings.HasPrefix(s, "campaigns") }) {
			e.Exists = append(e.Exists, listClause("campaigns", inv.Campaigns, ""))
		}
		return e
	}
	// Every value exists on its own: say which condition leaves nothing,
	// and what the runs matching the others have instead.
	return explainCombination(ctx, a, e, f, inv)
}

// labelClause says what the archive has instead of k=v, a label or a
// setting of runs (see ExplainEmpty); "" when some run has it.
func labelClause(k, v string, inv *store.Inventory) string {
	labels, isLabel := inv.Labels[k]
	settings, isSetting := inv.Settings[settingName(k)]
	switch {
	case !isLabel && !isSetting:
		keys := slices.Sorted(maps.Keys(inv.Labels))
		names := slices.Sorted(maps.Keys(inv.Settings))
		c := "no run has a label or parameter " + k
		if s := Suggest(k, append(slices.Clone(keys), names...)); len(s) > 0 {
			c += " (did you mean " + orList(s) + "?)"
		}
		if len(keys) > 0 {
			c += "; " + listClause("label keys", keys, "")
		}
		if len(names) > 0 {
			c += "; " + listClause("parameters and swept settings", names, "")
		}
		return c
	case !slices.Contains(labels, v) && !slices.Contains(settings, v):
		var pairs []string
		for _, w := range labels {
			pairs = append(pairs, k+"="+w)
		}
		for _, w := range settings {
			if !slices.Contains(labels, w) {
				pairs = append(pairs, settingName(k)+"="+w)
			}
		}
		what := map[[2]bool]string{{true, false}: "labels", {false, true}: "parameters", {true, true}: "labels and parameters"}[[2]bool{isLabel, isSetting}]
		c := what + " in the archive: " + strings.Join(pairs, ", ")
		if len(labels) >= 8 || len(settings) >= 8 {
			// The inventory lists the most common values only.
			c += ", …"
		}
		if s := Suggest(v, append(slices.Clone(labels), settings...)); len(s) > 0 {
			c += " (did you mean " + k + "=" + orList(s) + "?)"
		}
		return c
	}
	return ""
}

// settingName is the name the inventory lists a setting under: without
// its sweep prefix ("buf" of "param.buf").
func settingName(k string) string {
	for _, p := range []string{"param.", "label.", "env.", "launcher."} {
		if name, ok := strings.CutPrefix(k, p); ok && name != "" {
			return name
		}
	}
	return k
}

// explainCombination finds the condition of f without which runs are
// selected, and names the values those runs have for it.
func explainCombination(ctx context.Context, a Archive, e *EmptySelectionError, f store.Filter, inv store.Inventory) error {
	type relax struct {
		name  string
		clear func(*store.Filter)
		have  func([]store.Run) []string
	}
	distinct := func(get func(*store.Run) []string) func([]store.Run) []string {
		return func(runs []store.Run) []string {
			set := map[string]bool{}
			for i := range runs {
				for _, v := range get(&runs[i]) {
					set[v] = true
				}
			}
			return slices.Sorted(maps.Keys(set))
		}
	}
	var tries []relax
	if f.Campaign != "" {
		tries = append(tries, relax{"campaign", func(g *store.Filter) { g.Campaign = "" },
			distinct(func(r *store.Run) []string { return []string{r.Campaign} })})
	}
	if f.Benchmark != "" || len(f.Benchmarks) > 0 {
		tries = append(tries, relax{"benchmark", func(g *store.Filter) { g.Benchmark, g.Benchmarks = "", nil },
			distinct(func(r *store.Run) []string { return []string{r.Benchmark} })})
	}
	if len(f.Systems) > 0 {
		tries = append(tries, relax{"system", func(g *store.Filter) { g.Systems = nil },
			distinct(func(r *store.Run) []string { return []string{"system " + orNone(r.System)} })})
	}
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		name := "label " + k
		if _, ok := inv.Labels[k]; !ok {
			name = "parameter " + k
		}
		tries = append(tries, relax{name, func(g *store.Filter) {
			g.Labels = maps.Clone(g.Labels)
			delete(g.Labels, k)
		}, distinct(func(r *store.Run) []string {
			if k == "system" && r.System != "" {
				return []string{k + "=" + r.System}
			}
			if v, ok := r.Setting(k); ok {
				return []string{k + "=" + v}
			}
			return []string{"no " + k}
		})})
	}
	if len(f.Statuses) > 0 {
		tries = append(tries, relax{"status", func(g *store.Filter) { g.Statuses = nil },
			distinct(func(r *store.Run) []string { return []string{string(r.Status)} })})
	}
	if len(f.JobIDs) > 0 || len(f.Launches) > 0 {
		tries = append(tries, relax{"job", func(g *store.Filter) { g.JobIDs, g.Launches = nil, nil },
			distinct(func(r *store.Run) []string { return []string{r.Launch()} })})
	}
	if len(f.RunIDs) > 0 {
		tries = append(tries, relax{"run ids", func(g *store.Filter) { g.RunIDs = nil },
			func(runs []store.Run) []string { return []string{store.FormatRunIDs(runIDs(runs))} }})
	}
	if !f.Since.IsZero() || !f.Until.IsZero() {
		tries = append(tries, relax{"time", func(g *store.Filter) { g.Since, g.Until = time.Time{}, time.Time{} },
			func(runs []store.Run) []string {
				var starts []time.Time
				for _, r := range runs {
					if !r.Start.IsZero() {
						starts = append(starts, r.Start)
					}
				}
				if len(starts) == 0 {
					return []string{"do not say when they started, so no --since or --until selects them"}
				}
				first, last := slices.MinFunc(starts, time.Time.Compare), slices.MaxFunc(starts, time.Time.Compare)
				return []string{"started from " + first.UTC().Format(time.RFC3339) + " to " + last.UTC().Format(time.RFC3339)}
			}})
	}
	if len(f.ExcludeRunIDs) > 0 {
		tries = append(tries, relax{"excluded runs", func(g *store.Filter) { g.ExcludeRunIDs = nil },
			func(runs []store.Run) []string {
				return []string{"only runs " + store.FormatRunIDs(runIDs(runs)) + ", all left out"}
			}})
	}
	if len(tries) < 2 {
		// One condition, whose value exists: only time, statuses or
		// run ids in the archive's range can come here.
		if len(tries) == 1 && tries[0].name == "time" {
			return explainOne(ctx, a, e, f, tries[0].clear, tries[0].have)
		}
		return e
	}
	for _, t := range tries {
		g := f
		t.clear(&g)
		runs, err := a.Runs(ctx, g)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			continue
		}
		verb := "match"
		if len(runs) == 1 {
			verb = "matches"
		}
		e.Exists = append(e.Exists, fmt.Sprintf("each condition matches runs, not all together: without the %s condition %d run%s %s, with %s",
			t.name, len(runs), results.Plural(len(runs)), verb, listOf(t.have(runs))))
		return e
	}
	e.Exists = append(e.Exists, "each condition matches runs, but no two together")
	return e
}

// runIDs returns the ids of runs, in their order.
func runIDs(runs []store.Run) []int64 {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// explainOne says what the runs have when the only condition is cleared.
func explainOne(ctx context.Context, a Archive, e *EmptySelectionError, f store.Filter, clear func(*store.Filter), have func([]store.Run) []string) error {
	g := f
	clear(&g)
	runs, err := a.Runs(ctx, g)
	if err != nil {
		return err
	}
	e.Exists = append(e.Exists, "the archive's runs "+listOf(have(runs)))
	return e
}

// arrayOf is the array job of an array task's id ("1234" of "1234_7"),
// or id itself.
func arrayOf(id string) string {
	if i := strings.LastIndexByte(id, '_'); i > 0 {
		return id[:i]
	}
	return id
}

// listClause is "what: a, b, c" with a did-you-mean for typed when one of
// them is close to it.
func listClause(what string, names []string, typed string) string {
	c := what + ": " + listOf(names)
	if len(names) == 0 {
		c = what + ": none"
	}
	if typed != "" {
		if s := Suggest(typed, names); len(s) > 0 {
			c += " (did you mean " + orList(s) + "?)"
		}
	}
	return c
}

// listOf joins names, at most maxListed of them.
func listOf(names []string) string {
	if len(names) > maxListed {
		return strings.Join(names[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(names)-maxListed)
	}
	return strings.Join(names, ", ")
}

func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Suggest returns the candidates a user may have meant by typed, closest
// first (at most three): those within an edit distance of a third of its
// length (at least 1), ignoring case, as "osu_latncy" is of "osu_latency"
// or "kernal" of "kernel". The command line reuses it for flags and names.
func Suggest(typed string, candidates []string) []string {
	if typed == "" {
		return nil
	}
	limit := max(1, len([]rune(typed))/3)
	type scored struct {
		name string
		d    int
	}
	var found []scored
	seen := map[string]bool{}
	lower := strings.ToLower(typed)
	for _, c := range candidates {
		if c == typed || seen[c] {
			continue
		}
		seen[c] = true
		if d := EditDistance(lower, strings.ToLower(c)); d <= limit {
			found = append(found, scored{c, d})
		}
	}
	slices.SortFunc(found, func(a, b scored) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.name, b.name)) })
	var out []string
	for _, s := range found[:min(3, len(found))] {
		out = append(out, s.name)
	}
	return out
}

// EditDistance is the number of single-character insertions, deletions,
// substitutions and transpositions of adjacent characters that turn a into
// b (the optimal string alignment distance): a swapped pair of letters,
// the commonest typo, counts as one.
func EditDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// Three rows of the dynamic programme: two back for transpositions.
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}

func orNone(s string) string { return cmp.Or(s, "(none)") }
