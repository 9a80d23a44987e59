package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
)

// queryer is what the read helpers need: a transaction, usually.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// where returns the SQL condition selecting the runs (aliased r) of f, and
// its arguments. Labels are matched in sorted key order so that the same
// filter always gives the same statement (and hits the statement cache).
func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	if f.nothing {
		conds = append(conds, "0")
	}
	if f.Campaign != "" {
		conds = append(conds, "r.campaign = ?")
		args = append(args, f.Campaign)
	}
	if len(f.RunIDs) > 0 {
		// One JSON argument rather than one placeholder per id: no limit on
		// the number of ids and one statement text for any count.
		ids, _ := json.Marshal(f.RunIDs)
		conds = append(conds, "r.id IN (SELECT value FROM json_each(?))")
		args = append(args, string(ids))
	}
	inList := func(column string, values []string) {
		if len(values) == 0 {
			return
		}
		list, _ := json.Marshal(values)
		conds = append(conds, column+" IN (SELECT value FROM json_each(?))")
		args = append(args, string(list))
	}
	inList("r.benchmark", f.benchmarks())
	statuses := make([]string, len(f.Statuses))
	for i, st := range f.Statuses {
		statuses[i] = string(st)
	}
	inList("r.status", statuses)
	inList("r.job_id", f.JobIDs)
	if len(f.ExcludeRunIDs) > 0 {
		ids, _ := json.Marshal(f.ExcludeRunIDs)
		conds = append(conds, "r.id NOT IN (SELECT value FROM json_each(?))")
		args = append(args, string(ids))
	}
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		conds = append(conds, "EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = r.id AND l.key = ? AND l.value = ?)")
		args = append(args, k, f.Labels[k])
	}
	if !f.Since.IsZero() {
		conds = append(conds, "r.start_time >= ?")
		args = append(args, formatTime(f.Since))
	}
	if !f.Until.IsZero() {
		conds = append(conds, "r.start_time < ?")
		args = append(args, formatTime(f.Until))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// Runs returns the runs f selects, ordered by start time (unknown first),
// then id, with their labels, parameters and hosts. Since is inclusive and
// Until exclusive; a run with no start time matches neither.
func (db *DB) Runs(ctx context.Context, f Filter) ([]Run, error) {
	var runs []Run
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		runs, err = loadRuns(ctx, tx, f, withHosts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("query runs of %s: %w", db.path, err)
	}
	return runs, nil
}

const runColumns = `r.id, r.hash, r.campaign, r.variant, r.benchmark, r.kind, r.kernel, r.command, r.launcher, r.tool, r.tool_version, r.status, r.error, r.job_id, r.step, r.array_index, r.nodes, r.tasks, r.tasks_per_node, r.start_time, r.end_time, r.runner_version, r.source, r.origin, r.ingested_at, r.restart`

// runDetail is how much of each run loadRuns reads.
type runDetail int

const (
	withLabels runDetail = iota // the runs and their labels
	withParams                  // and their parameters (what ConfigOf needs)
	withHosts                   // and their hosts: everything
)

// loadRuns reads the runs of f with what detail asks for: export needs no
// hosts, prune not even parameters.
func loadRuns(ctx context.Context, q queryer, f Filter, detail runDetail) ([]Run, error) {
	where, args := f.where()
	rows, err := q.QueryContext(ctx, "SELECT "+runColumns+" FROM runs r"+where+" ORDER BY r.start_time, r.id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []Run
	index := map[int64]int{}
	for rows.Next() {
		var r Run
		var command, nodes, start, end sql.NullString
		var status, ingested string
		if err := rows.Scan(&r.ID, &r.Hash, &r.Campaign, &r.Variant, &r.Benchmark, &r.Kind, &r.Kernel,
			&command, &r.Launcher, &r.Tool, &r.ToolVer, &status, &r.Error,
			&r.JobID, &r.Step, &r.ArrayIndex, &nodes, &r.Tasks, &r.TasksPerNode,
			&start, &end, &r.RunnerVersion, &r.Source, &r.Origin, &ingested, &r.Restart); err != nil {
			return nil, err
		}
		r.Status = results.Status(status)
		if err := unmarshalNull(command, &r.Command); err != nil {
			return nil, fmt.Errorf("run %d: command: %w", r.ID, err)
		}
		if err := unmarshalNull(nodes, &r.Nodes); err != nil {
			return nil, fmt.Errorf("run %d: nodes: %w", r.ID, err)
		}
		if r.Start, err = parseTime(start); err != nil {
			return nil, fmt.Errorf("run %d: %w", r.ID, err)
		}
		if r.End, err = parseTime(end); err != nil {
			return nil, fmt.Errorf("run %d: %w", r.ID, err)
		}
		if r.IngestedAt, err = parseTime(sql.NullString{String: ingested, Valid: true}); err != nil {
			return nil, fmt.Errorf("run %d: %w", r.ID, err)
		}
		index[r.ID] = len(runs)
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, nil
	}
	keyValues := func(table string, set func(r *Run, k, v string)) error {
		rows, err := q.QueryContext(ctx, "SELECT t.run_id, t.key, t.value FROM "+table+" t JOIN runs r ON r.id = t.run_id"+where, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var k, v string
			if err := rows.Scan(&id, &k, &v); err != nil {
				return err
			}
			if i, ok := index[id]; ok {
				set(&runs[i], k, v)
			}
		}
		return rows.Err()
	}
	if err := keyValues("run_labels", func(r *Run, k, v string) {
		if r.Labels == nil {
			r.Labels = map[string]string{}
		}
		r.Labels[k] = v
	}); err != nil {
		return nil, err
	}
	if detail < withParams {
		return runs, nil
	}
	if err := keyValues("run_params", func(r *Run, k, v string) {
		if r.Params == nil {
			r.Params = map[string]string{}
		}
		r.Params[k] = v
	}); err != nil {
		return nil, err
	}
	if detail < withHosts {
		return runs, nil
	}
	hrows, err := q.QueryContext(ctx, `SELECT rh.run_id, h.id, h.host FROM run_hosts rh JOIN hosts h ON h.id = rh.host_id
JOIN runs r ON r.id = rh.run_id`+where+" ORDER BY rh.run_id, rh.idx", args...)
	if err != nil {
		return nil, err
	}
	defer hrows.Close()
	// A campaign's runs share their hosts: decode each description once.
	decoded := map[int64]*results.Host{}
	for hrows.Next() {
		var id, hostID int64
		var data sql.RawBytes
		if err := hrows.Scan(&id, &hostID, &data); err != nil {
			return nil, err
		}
		h, ok := decoded[hostID]
		if !ok {
			h = new(results.Host)
			if err := json.Unmarshal(data, h); err != nil {
				return nil, fmt.Errorf("run %d: host %d: %w", id, hostID, err)
			}
			decoded[hostID] = h
		}
		if i, ok := index[id]; ok {
			runs[i].Hosts = append(runs[i].Hosts, cloneHost(h))
		}
	}
	if err := hrows.Err(); err != nil {
		return nil, err
	}
	return runs, nil
}

// cloneHost copies h deeply, so that runs sharing a host description do not
// share its slices and maps.
func cloneHost(h *results.Host) results.Host {
	c := *h
	c.Ranks = slices.Clone(h.Ranks)
	c.CPUFlags = slices.Clone(h.CPUFlags)
	c.Modules = slices.Clone(h.Modules)
	c.IB = slices.Clone(h.IB)
	c.Net = slices.Clone(h.Net)
	c.Extra = maps.Clone(h.Extra)
	return c
}

func unmarshalNull(s sql.NullString, v any) error {
	if !s.Valid {
		return nil
	}
	return json.Unmarshal([]byte(s.String), v)
}

func nullFloat(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	v := n.Float64
	return &v
}

// Samples returns the samples of the runs f selects, ordered by run id,
// metric, x (none first), repeat, then their order in the bundle.
func (db *DB) Samples(ctx context.Context, f Filter) ([]Sample, error) {
	var out []Sample
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		return eachSample(ctx, tx, f, func(s Sample) error {
			out = append(out, s)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query samples of %s: %w", db.path, err)
	}
	return out, nil
}

// eachSample streams the samples of f to fn, so that an export of a large
// archive does not hold them all in memory.
func eachSample(ctx context.Context, q queryer, f Filter, fn func(Sample) error) error {
	where, args := f.where()
	rows, err := q.QueryContext(ctx, `SELECT `+sampleColumns+`
FROM samples s JOIN runs r ON r.id = s.run_id`+where+` ORDER BY s.run_id, s.metric, s.x, s.repeat, s.seq`, args...)
	if err != nil {
		return err
	}
	return scanSamples(rows, fn)
}

const sampleColumns = `s.run_id, s.metric, s.unit, s.x, s.x_unit, s.value, s.min, s.max, s.p50, s.p99, s.iterations, s.repeat, s.pair, s.tags`

// scanSamples reads rows of sampleColumns into fn, and closes them.
func scanSamples(rows *sql.Rows, fn func(Sample) error) error {
	defer rows.Close()
	for rows.Next() {
		var s Sample
		var x, lo, hi, p50, p99 sql.NullFloat64
		var pair, tags sql.NullString
		if err := rows.Scan(&s.RunID, &s.Metric, &s.Unit, &x, &s.XUnit, &s.Value, &lo, &hi, &p50, &p99,
			&s.Iterations, &s.Repeat, &pair, &tags); err != nil {
			return err
		}
		s.X, s.Min, s.Max, s.P50, s.P99 = nullFloat(x), nullFloat(lo), nullFloat(hi), nullFloat(p50), nullFloat(p99)
		if err := unmarshalNull(pair, &s.Pair); err != nil {
			return fmt.Errorf("run %d: sample pair: %w", s.RunID, err)
		}
		if err := unmarshalNull(tags, &s.Tags); err != nil {
			return fmt.Errorf("run %d: sample tags: %w", s.RunID, err)
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Scalars returns the scalars of the runs f selects, ordered by run id, then
// their order in the bundle (HPL's N, NB, P, Q … stay in HPL's order).
func (db *DB) Scalars(ctx context.Context, f Filter) ([]Scalar, error) {
	var out []Scalar
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		return eachScalar(ctx, tx, f, func(s Scalar) error {
			out = append(out, s)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query scalars of %s: %w", db.path, err)
	}
	return out, nil
}

func eachScalar(ctx context.Context, q queryer, f Filter, fn func(Scalar) error) error {
	where, args := f.where()
	rows, err := q.QueryContext(ctx, "SELECT s.run_id, s.name, s.unit, s.value FROM scalars s JOIN runs r ON r.id = s.run_id"+where+" ORDER BY s.run_id, s.seq", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var s Scalar
		if err := rows.Scan(&s.RunID, &s.Name, &s.Unit, &s.Value); err != nil {
			return err
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Checks returns the validity checks of the runs f selects, ordered by run
// id, then their order in the bundle.
func (db *DB) Checks(ctx context.Context, f Filter) ([]Check, error) {
	var out []Check
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		where, args := f.where()
		rows, err := tx.QueryContext(ctx, "SELECT c.run_id, c.name, c.value, c.threshold, c.op, c.passed FROM checks c JOIN runs r ON r.id = c.run_id"+where+" ORDER BY c.run_id, c.seq", args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c Check
			if err := rows.Scan(&c.RunID, &c.Name, &c.Value, &c.Threshold, &c.Op, &c.Passed); err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("query checks of %s: %w", db.path, err)
	}
	return out, nil
}

// Bundle returns run runID's bundle as it was ingested: raw output, hosts and
// all. It wraps ErrNotFound for an unknown run.
func (db *DB) Bundle(ctx context.Context, runID int64) (*results.Bundle, error) {
	var encoding string
	var data []byte
	err := db.r.QueryRowContext(ctx, "SELECT encoding, data FROM bundles WHERE run_id = ?", runID).Scan(&encoding, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("bundle of run %d in %s: %w", runID, db.path, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("bundle of run %d in %s: %w", runID, db.path, err)
	}
	b, err := decodeStored(encoding, data)
	if err != nil {
		return nil, fmt.Errorf("bundle of run %d in %s: %w", runID, db.path, err)
	}
	return b, nil
}

// decodeStored decodes a bundle as the bundles table holds it.
func decodeStored(encoding string, data []byte) (*results.Bundle, error) {
	var r io.Reader = bytes.NewReader(data)
	switch encoding {
	case encodingJSON:
	case encodingJSONGzip:
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("decompress: %w", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("unknown encoding %s", strconv.Quote(encoding))
	}
	return results.Decode(r)
}

// Campaigns returns the names of the campaigns with runs or jobs in the
// archive, sorted.
func (db *DB) Campaigns(ctx context.Context) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT campaign FROM runs WHERE campaign <> ''
UNION SELECT campaign FROM jobs WHERE campaign <> '' ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("query campaigns of %s: %w", db.path, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, fmt.Errorf("query campaigns of %s: %w", db.path, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query campaigns of %s: %w", db.path, err)
	}
	return out, nil
}

// maxRunRange caps one A-B range of run ids, so that a typo cannot ask for
// billions of them.
const maxRunRange = 1_000_000

// ParseRunIDs reads run ids as users write them: "12", "3,7-9",
// "1-24,30"; it returns them sorted, each once.
func ParseRunIDs(s string) ([]int64, error) {
	var ids []int64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		if err != nil || a < 1 {
			return nil, fmt.Errorf("run id %q: want a positive integer, or a range such as 1-24", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("run range %q: want A-B with A ≤ B", part)
			}
			if b-a >= maxRunRange {
				return nil, fmt.Errorf("run range %q: more than %d ids", part, maxRunRange)
			}
		}
		for id := a; id <= b; id++ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// FormatRunIDs writes ids sorted, each once, consecutive ones as ranges:
// "1-4,13,18-24".
func FormatRunIDs(ids []int64) string {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, strconv.FormatInt(ids[i], 10)+"-"+strconv.FormatInt(ids[j], 10))
		} else {
			parts = append(parts, strconv.FormatInt(ids[i], 10))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// Inventory is what an archive holds, for messages about a selection that
// found nothing: the names a user could have meant.
type Inventory struct {
	Runs       int
	Campaigns  []string
	Benchmarks []string
	// Labels are the label keys, each with its values (at most a few, the
	// most common first).
	Labels map[string][]string
	// FirstRun and LastRun are the smallest and largest run ids.
	FirstRun, LastRun int64
	// FirstStart and LastStart bound the runs' start times; NoStart runs
	// do not say when they ran (files ingested by hand).
	FirstStart, LastStart time.Time
	NoStart               int
}

// maxInventoryValues caps the values listed per label.
const maxInventoryValues = 8

// Inventory reads what the archive holds: counts and distinct names, from
// the indexes, without loading runs.
func (db *DB) Inventory(ctx context.Context) (Inventory, error) {
	inv := Inventory{Labels: map[string][]string{}}
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		var first, last sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT count(*), min(id), max(id) FROM runs").Scan(&inv.Runs, &first, &last); err != nil {
			return err
		}
		inv.FirstRun, inv.LastRun = first.Int64, last.Int64
		var lo, hi sql.NullString
		if err := tx.QueryRowContext(ctx, "SELECT min(start_time), max(start_time), count(*) - count(start_time) FROM runs").Scan(&lo, &hi, &inv.NoStart); err != nil {
			return err
		}
		var err error
		if inv.FirstStart, err = parseTime(lo); err != nil {
			return err
		}
		if inv.LastStart, err = parseTime(hi); err != nil {
			return err
		}
		list := func(query string, dst *[]string) error {
			rows, err := tx.QueryContext(ctx, query)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var v string
				if err := rows.Scan(&v); err != nil {
					return err
				}
				*dst = append(*dst, v)
			}
			return rows.Err()
		}
		if err := list("SELECT DISTINCT campaign FROM runs WHERE campaign != '' ORDER BY 1", &inv.Campaigns); err != nil {
			return err
		}
		if err := list("SELECT DISTINCT benchmark FROM runs ORDER BY 1", &inv.Benchmarks); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, "SELECT key, value, count(*) AS n FROM run_labels GROUP BY key, value ORDER BY key, n DESC, value")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k, v string
			var n int
			if err := rows.Scan(&k, &v, &n); err != nil {
				return err
			}
			if len(inv.Labels[k]) < maxInventoryValues {
				inv.Labels[k] = append(inv.Labels[k], v)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return Inventory{}, fmt.Errorf("read what %s holds: %w", db.path, err)
	}
	return inv, nil
}

// CountRuns returns how many runs f selects.
func (db *DB) CountRuns(ctx context.Context, f Filter) (int, error) {
	where, args := f.where()
	var n int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM runs r"+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count runs of %s: %w", db.path, err)
	}
	return n, nil
}
