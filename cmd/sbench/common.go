package main

// What several commands share: opening the archive, the filter flags that
// select runs, and small flag parsers. Each command's own file has its
// cobra constructor and its runX.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// openDB opens the archive for a command that writes to it, creating it
// if it does not exist. store's errors name the archive already.
func openDB(e *env) (*store.DB, error) {
	db, err := store.Open(e.db)
	var ro *store.ReadOnlyError
	if errors.As(err, &ro) {
		return nil, fmt.Errorf("%w; this command writes to it, the commands that only read it (runs, export, report, compare, history) still work", err)
	}
	return db, err
}

// openDBRead opens the archive for a command that only reads it. It works
// on an archive nobody can write (a read-only mount), and never creates
// one: a mistyped --db would otherwise show an empty archive as if it held
// no runs.
func openDBRead(e *env) (*store.DB, error) {
	db, err := store.OpenReadOnly(e.db)
	if errors.Is(err, store.ErrNoArchive) {
		return nil, noArchive(e)
	}
	return db, err
}

// noArchive is the error of a command that needs an archive where there is
// none.
func noArchive(e *env) error {
	return usagef("no archive at %s: the archive is --db FILE, else $SBENCH_DB, else ./sbench.db; sbench ingest or sbench local create one", e.db)
}

// openDBExisting opens the archive for a command that writes to it but
// has nothing to add to an archive that does not exist (status, prune
// --yes): like the reading commands, it never creates one.
func openDBExisting(e *env) (*store.DB, error) {
	if _, err := os.Stat(e.db); errors.Is(err, fs.ErrNotExist) {
		return nil, noArchive(e)
	}
	return openDB(e)
}

// openFiltered reads the filter flags, then opens the archive to read it:
// a bad flag is reported before the archive is touched. The caller closes
// db.
func openFiltered(e *env, f filterFlags) (*store.DB, store.Filter, error) {
	flt, err := f.filter()
	if err != nil {
		return nil, flt, err
	}
	db, err := openDBRead(e)
	return db, flt, err
}

// filterFlags are the flags that select runs, the same on every command
// that selects runs (runs, export, report, compare, history, prune,
// archive export).
type filterFlags struct {
	campaign     string
	systems      []string
	benchmarks   []string
	labels       []string
	runs         []string
	jobs         []string
	statuses     []string
	since, until string
}

const filterHelp = `
Runs are selected with the same flags on every command: --system NAME (the
cluster a run came from: ingest --system, or Slurm's cluster name), --campaign
NAME, --benchmark NAME (repeatable or comma-separated), --label KEY=VALUE
(repeatable; all must match: a label, else a swept value by its name, a
parameter such as buf=16384 or a sweep's Slurm key such as
ntasks_per_node=2), --run IDS (1-24,30), --job ID (a job, 4242; a step,
4242.3; an attempt of a requeued job, 4242r1 or 4242.3r1), --status
ok|failed|invalid, --since and --until (a date 2006-01-02, a time
2006-01-02T15:04:05Z, or an age such as 30d or 12h; --since inclusive,
--until exclusive).`

func (f *filterFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringArrayVar(&f.systems, "system", nil, "only runs of this system (cluster), repeatable or comma-separated")
	fl.StringVar(&f.campaign, "campaign", "", "only runs of this campaign")
	fl.StringArrayVar(&f.benchmarks, "benchmark", nil, "only runs of this benchmark (repeatable or comma-separated)")
	fl.StringArrayVar(&f.labels, "label", nil, "only runs with this label or swept value, KEY=VALUE (repeatable; all must match)")
	fl.StringArrayVar(&f.runs, "run", nil, "only these run ids: 12, 3,7-9, 1-24,30 (repeatable)")
	fl.StringArrayVar(&f.jobs, "job", nil, "only the runs of this Slurm (or local) job, JOB[.STEP][rN] (4242, 4242.3, 4242.3r1: step 3 of attempt r1; repeatable or comma-separated)")
	fl.StringArrayVar(&f.statuses, "status", nil, "only runs with this status: ok, failed, invalid (repeatable or comma-separated)")
	fl.StringVar(&f.since, "since", "", "only runs started at or after this time: 2006-01-02, 2006-01-02T15:04:05Z or an age (30d, 12h)")
	fl.StringVar(&f.until, "until", "", "only runs started before this time (same forms as --since)")
	c.Long = strings.TrimSpace(c.Long) + "\n" + filterHelp
}

// filter checks the flags and makes the store's filter.
func (f *filterFlags) filter() (store.Filter, error) {
	flt := store.Filter{Campaign: f.campaign, Systems: splitList(f.systems), Benchmarks: splitList(f.benchmarks)}
	var err error
	if flt.JobIDs, flt.Launches, err = jobRefs(splitList(f.jobs)); err != nil {
		return flt, err
	}
	if flt.Labels, err = parseLabels("--label", f.labels); err != nil {
		return flt, err
	}
	for _, r := range f.runs {
		ids, err := store.ParseRunIDs(r)
		if err != nil {
			return flt, usagef("--run %q: %v", r, err)
		}
		flt.RunIDs = append(flt.RunIDs, ids...)
	}
	for _, s := range splitList(f.statuses) {
		if !results.Status(s).Valid() {
			return flt, usagef("--status %q: want ok, failed or invalid", s)
		}
		flt.Statuses = append(flt.Statuses, results.Status(s))
	}
	if flt.Since, err = parseWhen("--since", f.since, time.Now()); err != nil {
		return flt, err
	}
	if flt.Until, err = parseWhen("--until", f.until, time.Now()); err != nil {
		return flt, err
	}
	if !flt.Since.IsZero() && !flt.Until.IsZero() && !flt.Until.After(flt.Since) {
		return flt, usagef("--until %s is not after --since %s", f.until, f.since)
	}
	return flt, nil
}

// empty reports whether the flags select every run.
func (f *filterFlags) empty() bool {
	return f.campaign == "" && len(f.systems) == 0 && len(f.benchmarks) == 0 && len(f.labels) == 0 && len(f.runs) == 0 &&
		len(f.jobs) == 0 && len(f.statuses) == 0 && f.since == "" && f.until == ""
}

func parseLabels(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\n,=") {
			return nil, usagef("%s %q: want KEY=VALUE with a KEY of letters, digits and _", flag, kv)
		}
		m[k] = v
	}
	return m, nil
}

// when is a run's start, or for files that do not say when they ran, the
// time they were ingested.
func when(r store.Run) string {
	if !r.Start.IsZero() {
		return r.Start.Local().Format("2006-01-02 15:04")
	}
	return "ingested " + r.IngestedAt.Local().Format("2006-01-02 15:04")
}

func dash(s string) string { return cmp.Or(s, "-") }

// parsePercent reads a threshold given as "5%" or "5" (percent either way).
func parsePercent(flag, s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v >= 1000 {
		return 0, usagef("%s %q: want a percentage such as 5%%", flag, s)
	}
	return v / 100, nil
}

func checkAlpha(a float64) error {
	if !(a > 0 && a < 1) {
		return usagef("--alpha %v: want a level between 0 and 1, such as 0.05", a)
	}
	return nil
}

// dataError marks errors about what the selection found (no runs, unknown
// baseline, nothing measured on both sides) as exit status 2, like bad
// usage: a CI gate must not read them as "a regression".
func dataError(err error) error {
	if errors.Is(err, compare.ErrNoData) || errors.Is(err, store.ErrNotFound) {
		return usageError{err}
	}
	return err
}

// splitList flattens repeated and comma-separated flag values.
func splitList(vals []string) []string {
	var out []string
	for _, v := range vals {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// parseWhen reads a --since/--until time: a date (midnight UTC), a time
// (RFC 3339, or without seconds or zone: UTC), or an age before now such
// as 30d, 12h, 90m.
func parseWhen(flag, s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if n, unit := strings.TrimRight(s, "dhmw"), strings.TrimLeft(s, "0123456789"); n != "" && len(unit) == 1 {
		if v, err := strconv.Atoi(n); err == nil && v >= 0 {
			d := map[string]time.Duration{"m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[unit]
			return now.Add(-time.Duration(v) * d), nil
		}
	}
	return time.Time{}, usagef("%s %q: want a date (2006-01-02), a time (2006-01-02T15:04:05Z) or an age (30d, 12h)", flag, s)
}

// noRuns is the error of a selection that found no runs, on every command
// alike (exit status 2): compare.ExplainEmpty names what the archive does
// hold, so that a typo in --benchmark or --label is seen at once.
func noRuns(ctx context.Context, db *store.DB, what string, flt store.Filter) error {
	return dataError(compare.ExplainEmpty(ctx, db, what+": the selection", flt))
}

// requireRuns fails with noRuns when flt selects no run.
func requireRuns(ctx context.Context, db *store.DB, what string, flt store.Filter) error {
	n, err := db.CountRuns(ctx, flt)
	if err != nil || n > 0 {
		return err
	}
	return noRuns(ctx, db, what, flt)
}

// newProgressBar shows a bar of n steps on stderr, described as what,
// when the work is worth one and stderr is a terminal (or SBENCH_PROGRESS=1
// asks for it anyway); otherwise a bar that draws nothing.
func newProgressBar(e *env, what string, n int, worth bool) *progressbar.ProgressBar {
	visible := worth
	if f, ok := e.stderr.(*os.File); visible && (!ok || !term.IsTerminal(int(f.Fd()))) {
		visible = e.getenv("SBENCH_PROGRESS") == "1"
	}
	return progressbar.NewOptions(n,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetVisibility(visible),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// writeJSON prints v as indented JSON: the one shape every --json takes.
func writeJSON(e *env, v any) error { return writeJSONTo(e.stdout, v) }

// writeJSONTo prints v to w as writeJSON does.
func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// textOrJSON is a result that prints as a table or, with --json, as JSON.
type textOrJSON interface {
	WriteText(w io.Writer) error
	WriteJSON(w io.Writer) error
}

// writeResult prints r on stdout: as JSON if asJSON, else as text.
func writeResult(e *env, r textOrJSON, asJSON bool) error {
	if asJSON {
		return r.WriteJSON(e.stdout)
	}
	return r.WriteText(e.stdout)
}

// runJSON is a run as runs --json and prune --json print it.
type runJSON struct {
	ID        int64  `json:"id"`
	System    string `json:"system,omitempty"`
	Start     string `json:"start,omitempty"`
	Ingested  string `json:"ingested"`
	Campaign  string `json:"campaign,omitempty"`
	Variant   string `json:"variant,omitempty"`
	Benchmark string `json:"benchmark"`
	// ToolBenchmark is the benchmark the run's tool ran ("IMB-MPI1
	// PingPong"), as export's column.
	ToolBenchmark string `json:"tool_benchmark,omitempty"`
	Job           string `json:"job,omitempty"`
	Step          string `json:"step,omitempty"`
	// Restart is the attempt of a job Slurm requeued that made the run:
	// Slurm's restart count, 0 (left out) for the first attempt.
	Restart int               `json:"restart,omitempty"`
	Source  string            `json:"source,omitempty"`
	Nodes   []string          `json:"nodes,omitempty"`
	Status  results.Status    `json:"status"`
	Error   string            `json:"error,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Note is what an ok run says that did not fail it (a rank's
	// command exited non-zero after the run's output was complete).
	Note string `json:"note,omitempty"`
}

func newRunJSON(r store.Run) runJSON {
	return runJSON{r.ID, r.System, rfc3339(r.Start), r.IngestedAt.UTC().Format(time.RFC3339), r.Campaign, r.Variant, r.Benchmark, r.ToolBenchmark, r.JobID, r.Step, r.Restart, r.Source, r.Nodes, r.Status, r.Error, r.Labels, r.Note}
}

// rfc3339 is t in UTC as JSON gives times, "" for no time.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// jobRefs splits --job's values into whole jobs and the steps or attempts
// of jobs (store.JobRef).
func jobRefs(values []string) (ids []string, launches []store.JobRef, err error) {
	for _, v := range values {
		ref, err := store.ParseJobRef(v)
		if err != nil {
			return nil, nil, usagef("--job: %v", err)
		}
		if ref.Plain() {
			ids = append(ids, v)
		} else {
			launches = append(launches, ref)
		}
	}
	return ids, launches, nil
}
