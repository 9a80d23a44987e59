package store

import (
	"bytes"
	"cmp"
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
	// A list is one JSON argument rather than one placeholder per value:
	// no limit on its length and one statement text for any length.
	inList := func(cond string, n int, values any) {
		if n == 0 {
			return
		}
		list, _ := json.Marshal(values)
		conds = append(conds, cond+" (SELECT value FROM json_each(?))")
		args = append(args, string(list))
	}
	inList("r.id IN", len(f.RunIDs), f.RunIDs)
	inList("r.benchmark IN", len(f.benchmarks()), f.benchmarks())
	inList("r.system IN", len(f.Systems), f.Systems)
	inList("r.status IN", len(f.Statuses), f.Statuses)
	if len(f.Launches) > 0 {
		c, a := launchCond(f.jobRefs())
		conds, args = append(conds, c), append(args, a...)
	} else {
		inList("r.job_id IN", len(f.JobIDs), f.JobIDs)
	}
	for _, refs := range f.andLaunches {
		c, a := launchCond(refs)
		conds, args = append(conds, c), append(args, a...)
	}
	inList("r.id NOT IN", len(f.ExcludeRunIDs), f.ExcludeRunIDs)
	for _, k := range slices.Sorted(maps.Keys(f.Labels)) {
		if k == "system" {
			// The system label is the column (SystemOf), indexed.
			conds = append(conds, "r.system = ?")
			args = append(args, f.Labels[k])
			continue
		}
		c, a := settingCond(k, f.Labels[k])
		conds, args = append(conds, c), append(args, a...)
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

// settingCond is the SQL condition that run r's setting key is value:
// Run.Setting's rule — a label, else a parameter, else the variant's name
// — in SQL.
func settingCond(key, value string) (string, []any) {
	var b strings.Builder
	b.WriteString("CASE WHEN EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = r.id AND l.key = ?)" +
		" THEN EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = r.id AND l.key = ? AND l.value = ?)")
	args := []any{key, key, value}
	for _, k := range paramKeys(key) {
		b.WriteString(" WHEN EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = r.id AND p.key = ?)" +
			" THEN EXISTS (SELECT 1 FROM run_params p WHERE p.run_id = r.id AND p.key = ? AND p.value = ?)")
		args = append(args, k, k, value)
	}
	var parts []string
	for _, k := range variantKeys(key) {
		parts = append(parts, k+"="+value)
	}
	list, _ := json.Marshal(parts)
	b.WriteString(" ELSE EXISTS (SELECT 1 FROM json_each(?) WHERE instr(',' || r.variant || ',', ',' || value || ',') > 0) END")
	return b.String(), append(args, string(list))
}

// Runs returns the runs f selects, ordered by start time (unknown first),
// then id, with their labels, parameters and hosts. Since is inclusive and
// Until exclusive; a run with no start time matches neither.
func (db *DB) Runs(ctx context.Context, f Filter) ([]Run, error) {
	runs, err := readValue(ctx, db, func(tx *sql.Tx) ([]Run, error) { return loadRuns(ctx, tx, f, RunAll) })
	if err != nil {
		return nil, fmt.Errorf("query runs of %s: %w", db.path, err)
	}
	return runs, nil
}

// RunDetail is how much of each run EachRun reads: the less, the cheaper.
type RunDetail int

const (
	// RunAll reads everything: labels, parameters and hosts.
	RunAll RunDetail = iota
	// RunParams reads labels and parameters (what ConfigOf needs), no
	// hosts.
	RunParams
	// RunLabels reads labels only.
	RunLabels
)

// RunOptions say what EachRun reads.
type RunOptions struct {
	Detail RunDetail
	// Limit, when positive, reads only the newest Limit runs (by start
	// time, then id), still oldest first.
	Limit int
	// ByID reads the runs in id order (the order they were ingested)
	// rather than by start time.
	ByID bool
}

// EachRun calls fn with each run f selects, in Runs order, reading one run
// at a time: a command that lists, exports or summarises runs holds one
// run, not the archive. Everything is read in one snapshot. The Run passed
// to fn is fn's to keep, but what runs have in common is decoded once and
// shared between them — labels, parameters, command, nodes and hosts —
// so that keeping a year of runs costs what they do not share: treat
// those as read-only. An error from fn stops the walk and is returned as
// it is.
func (db *DB) EachRun(ctx context.Context, f Filter, o RunOptions, fn func(*Run) error) error {
	return db.walk(ctx, "runs", func(tx *sql.Tx, fnErr *error) error {
		return eachRun(ctx, tx, f, o, func(r *Run) error { return keep(fnErr, fn(r)) })
	})
}

const runColumns = `r.id, r.hash, r.campaign, r.variant, r.benchmark, r.kind, r.kernel, r.command, r.launcher, r.tool, r.tool_version, r.status, r.error, r.job_id, r.step, r.array_index, r.nodes, r.tasks, r.tasks_per_node, r.start_time, r.end_time, r.runner_version, r.source, r.origin, r.ingested_at, r.restart, r.system, r.tool_benchmark, r.note`

// loadRuns reads the runs of f with what detail asks for: export needs no
// hosts, prune not even parameters. Each run gets labels, parameters and
// hosts of its own, unlike EachRun's.
func loadRuns(ctx context.Context, q queryer, f Filter, detail RunDetail) ([]Run, error) {
	var runs []Run
	err := eachRun(ctx, q, f, RunOptions{Detail: detail}, func(r *Run) error {
		hosts := make([]results.Host, len(r.Hosts))
		for i := range r.Hosts {
			hosts[i] = cloneHost(&r.Hosts[i])
		}
		if r.Hosts != nil {
			r.Hosts = hosts
		}
		r.Labels, r.Params = maps.Clone(r.Labels), maps.Clone(r.Params)
		r.Command, r.Nodes = slices.Clone(r.Command), slices.Clone(r.Nodes)
		runs = append(runs, *r)
		return nil
	})
	return runs, err
}

// eachRun reads the runs of f one by one. A run's labels, parameters and
// host ids come with it, as JSON its subqueries aggregate (each a range of
// a primary key), so that the walk is one statement however many runs
// there are; host descriptions, which the runs of a campaign share, are
// read and decoded once each.
func eachRun(ctx context.Context, q queryer, f Filter, o RunOptions, fn func(*Run) error) error {
	where, args := f.where()
	cols := runColumns + ",\n(SELECT json_group_object(key, value) FROM run_labels WHERE run_id = r.id)"
	if o.Detail != RunLabels {
		cols += ",\n(SELECT json_group_object(key, value) FROM run_params WHERE run_id = r.id)"
	}
	if o.Detail == RunAll {
		cols += ",\n(SELECT group_concat(host_id ORDER BY idx) FROM run_hosts WHERE run_id = r.id)"
	}
	query := "SELECT " + cols + " FROM runs r" + where
	if o.Limit > 0 {
		query = "SELECT " + cols + " FROM runs r WHERE r.id IN (SELECT r.id FROM runs r" + where +
			" ORDER BY r.start_time DESC, r.id DESC LIMIT ?)"
		args = append(args, o.Limit)
	}
	order := " ORDER BY r.start_time, r.id"
	if o.ByID {
		order = " ORDER BY r.id"
	}
	rows, err := q.QueryContext(ctx, query+order, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	d := newRunDecoder(q)
	var campaign, variant, benchmark, kind, kernel, command, launcher, tool, toolVer, status, nodes, tasksPerNode, runnerVersion, system, toolBench sql.RawBytes
	var labels, params, hostIDs sql.RawBytes
	for rows.Next() {
		var r Run
		var start, end sql.NullString
		var ingested string
		dst := []any{&r.ID, &r.Hash, &campaign, &variant, &benchmark, &kind, &kernel,
			&command, &launcher, &tool, &toolVer, &status, &r.Error,
			&r.JobID, &r.Step, &r.ArrayIndex, &nodes, &r.Tasks, &tasksPerNode,
			&start, &end, &runnerVersion, &r.Source, &r.Origin, &ingested, &r.Restart, &system, &toolBench, &r.Note, &labels}
		if o.Detail != RunLabels {
			dst = append(dst, &params)
		}
		if o.Detail == RunAll {
			dst = append(dst, &hostIDs)
		}
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		in := d.strs
		r.Campaign, r.Variant, r.Benchmark, r.Kind, r.Kernel = in.get(campaign), in.get(variant), in.get(benchmark), in.get(kind), in.get(kernel)
		r.Launcher, r.Tool, r.ToolVer, r.Status = in.get(launcher), in.get(tool), in.get(toolVer), results.Status(in.get(status))
		r.TasksPerNode, r.RunnerVersion, r.System, r.ToolBenchmark = in.get(tasksPerNode), in.get(runnerVersion), in.get(system), in.get(toolBench)
		if r.Command, err = d.list(command); err != nil {
			return fmt.Errorf("run %d: command: %w", r.ID, err)
		}
		if r.Nodes, err = d.list(nodes); err != nil {
			return fmt.Errorf("run %d: nodes: %w", r.ID, err)
		}
		if r.Start, err = parseTime(start); err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		if r.End, err = parseTime(end); err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		if r.IngestedAt, err = parseTime(sql.NullString{String: ingested, Valid: true}); err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		// The system is the run's "system" label, whoever named it
		// (SystemOf): every view that tells configurations apart by
		// label, and every filter on it, sees the same.
		if r.Labels, err = d.keyValues(labels, r.System); err != nil {
			return fmt.Errorf("run %d: labels: %w", r.ID, err)
		}
		if r.Params, err = d.keyValues(params, ""); err != nil {
			return fmt.Errorf("run %d: params: %w", r.ID, err)
		}
		if r.Hosts, err = d.hosts(ctx, hostIDs); err != nil {
			return fmt.Errorf("run %d: %w", r.ID, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// maxShared bounds each cache of runDecoder: beyond it, values are decoded
// afresh, so that a walk over runs whose every value differs (HPL's
// timestamps among its parameters) does not keep them all.
const maxShared = 4096

// runDecoder turns the columns of a walk over runs into Runs, decoding
// each distinct value once: the runs of a campaign share their labels,
// parameters, node lists and hosts, and a year of them should cost what
// its distinct values weigh. What it returns is shared between runs.
type runDecoder struct {
	strs   interner
	lists  map[string][]string
	maps   map[kvKey]map[string]string
	hostsL map[string][]results.Host
	hc     hostCache
}

func newRunDecoder(q queryer) *runDecoder {
	return &runDecoder{strs: interner{}, lists: map[string][]string{}, maps: map[kvKey]map[string]string{},
		hostsL: map[string][]results.Host{}, hc: hostCache{q: q, decoded: map[int64]*results.Host{}}}
}

// list decodes a JSON list of strings (a command, a node list); NULL is
// nil.
func (d *runDecoder) list(b sql.RawBytes) ([]string, error) {
	if b == nil {
		return nil, nil
	}
	if v, ok := d.lists[string(b)]; ok {
		return v, nil
	}
	var v []string
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	for i := range v {
		v[i] = d.strs.str(v[i])
	}
	if len(d.lists) < maxShared {
		d.lists[string(b)] = v
	}
	return v, nil
}

// kvKey is a decoded map of keyValues: its JSON and the run's system.
type kvKey struct{ json, system string }

// keyValues decodes a json_group_object of labels or parameters, with
// system as the "system" label when it has none; none at all is a nil
// map, as a bundle without them has.
func (d *runDecoder) keyValues(b sql.RawBytes, system string) (map[string]string, error) {
	if b == nil || string(b) == "{}" && system == "" {
		return nil, nil
	}
	key := kvKey{string(b), system}
	if m, ok := d.maps[key]; ok {
		return m, nil
	}
	m, err := d.strs.decodeTags(b)
	if err != nil {
		return nil, err
	}
	if system != "" && m["system"] == "" {
		if m == nil {
			m = map[string]string{}
		}
		m["system"] = system
	}
	if len(m) == 0 {
		m = nil
	}
	if len(d.maps) < maxShared {
		d.maps[key] = m
	}
	return m, nil
}

// hosts returns the hosts of a list of host ids ("5,7"), in order.
func (d *runDecoder) hosts(ctx context.Context, ids sql.RawBytes) ([]results.Host, error) {
	if ids == nil {
		return nil, nil
	}
	if hs, ok := d.hostsL[string(ids)]; ok {
		return hs, nil
	}
	var hs []results.Host
	for _, id := range strings.Split(string(ids), ",") {
		hostID, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("host id %q: %w", id, err)
		}
		h, err := d.hc.get(ctx, hostID)
		if err != nil {
			return nil, err
		}
		hs = append(hs, *h)
	}
	if len(d.hostsL) < maxShared {
		d.hostsL[string(ids)] = hs
	}
	return hs, nil
}

// hostCache decodes each host description once per walk.
type hostCache struct {
	q       queryer
	decoded map[int64]*results.Host
}

func (c *hostCache) get(ctx context.Context, id int64) (*results.Host, error) {
	if h, ok := c.decoded[id]; ok {
		return h, nil
	}
	rows, err := c.q.QueryContext(ctx, "SELECT host FROM hosts WHERE id = ?", id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("host %d: %w", id, ErrNotFound)
	}
	var data sql.RawBytes
	if err := rows.Scan(&data); err != nil {
		return nil, err
	}
	h := new(results.Host)
	if err := json.Unmarshal(data, h); err != nil {
		return nil, fmt.Errorf("host %d: %w", id, err)
	}
	c.decoded[id] = h
	return h, rows.Close()
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
	c.Traffic = slices.Clone(h.Traffic)
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
// metric, x (none first), repeat, then their order in the bundle. Samples
// with the same tags may share their Tags map: treat it as read-only.
func (db *DB) Samples(ctx context.Context, f Filter) ([]Sample, error) {
	return collect(ctx, db, "samples", f, eachSample)
}

// collect returns in a slice, read in one snapshot, what each streams of
// the runs f selects; what names it in the error.
func collect[T any](ctx context.Context, db *DB, what string, f Filter, each func(context.Context, queryer, Filter, func(T) error) error) ([]T, error) {
	var out []T
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		return each(ctx, tx, f, func(v T) error {
			out = append(out, v)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query %s of %s: %w", what, db.path, err)
	}
	return out, nil
}

// SampleOptions say what EachSample reads of each sample.
type SampleOptions struct {
	// Stats reads the optional statistics (min, max, p50, p99),
	// iterations and repeat index too; without, they are left unset: a
	// comparison or report reads the values only, a third of the columns.
	Stats bool
}

// EachSample calls fn with each sample of the runs f selects, reading one
// at a time: a comparison or report of a year's runs holds what it
// computes, not the samples. Samples come run by run, each run's in its
// bundle's order, the runs in no order to rely on: the order SQLite finds
// them in, which costs no sort (sorting a year of samples by the runs'
// start costs more than reading them). They are read and decoded on a
// goroutine of their own, a batch ahead of fn, which runs on the caller's:
// the archive's work and fn's overlap. An error from fn stops the walk
// and is returned as it is.
func (db *DB) EachSample(ctx context.Context, f Filter, o SampleOptions, fn func(Sample) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	const batch, ahead = 512, 4
	batches := make(chan []Sample, ahead)
	// The batches fn is done with come back to be filled again: a year of
	// samples is then read through a few batches, not as much garbage.
	free := make(chan []Sample, ahead+2)
	read := make(chan error, 1)
	go func() {
		defer close(batches)
		read <- db.walk(ctx, "samples", func(tx *sql.Tx, _ *error) error {
			next := func() []Sample {
				select {
				case b := <-free:
					return b[:0]
				default:
					return make([]Sample, 0, batch)
				}
			}
			buf := next()
			send := func() error {
				select {
				case batches <- buf:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			// No ORDER BY: whichever table SQLite reads first, a run's
			// samples come together in their primary key's order (run,
			// position in the bundle).
			err := scanSamples(ctx, tx, f, "", o.Stats, func(s Sample) error {
				buf = append(buf, s)
				if len(buf) < batch {
					return nil
				}
				err := send()
				buf = next()
				return err
			})
			if err == nil && len(buf) > 0 {
				err = send()
			}
			return err
		})
	}()
	var fnErr error
	for b := range batches {
		if fnErr != nil {
			continue // drain until the reader sees the cancel
		}
		for _, s := range b {
			if fnErr = fn(s); fnErr != nil {
				cancel()
				break
			}
		}
		// fn had each sample by value: nothing of the batch is its.
		clear(b)
		select {
		case free <- b:
		default:
		}
	}
	err := <-read
	if fnErr != nil {
		return fnErr
	}
	return err
}

// EachScalar calls fn with each scalar of the runs f selects, in Scalars
// order, as EachSample does samples.
func (db *DB) EachScalar(ctx context.Context, f Filter, fn func(Scalar) error) error {
	return db.walk(ctx, "scalars", func(tx *sql.Tx, fnErr *error) error {
		return eachScalar(ctx, tx, f, func(s Scalar) error { return keep(fnErr, fn(s)) })
	})
}

// walk runs a streaming read in one snapshot: the error of the caller's
// callback (kept in fnErr) is returned as it is, the archive's wrapped.
func (db *DB) walk(ctx context.Context, what string, read func(tx *sql.Tx, fnErr *error) error) error {
	var fnErr error
	err := db.readTx(ctx, func(tx *sql.Tx) error { return read(tx, &fnErr) })
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return fmt.Errorf("query %s of %s: %w", what, db.path, err)
	}
	return nil
}

// keep records err, the callback's, in *dst and returns it.
func keep(dst *error, err error) error {
	if err != nil {
		*dst = err
	}
	return err
}

// eachSample streams the samples of f to fn, so that an export of a large
// archive does not hold them all in memory.
func eachSample(ctx context.Context, q queryer, f Filter, fn func(Sample) error) error {
	return scanSamples(ctx, q, f, "s.run_id, s.metric, s.x, s.repeat, s.seq", true, fn)
}

func scanSamples(ctx context.Context, q queryer, f Filter, order string, stats bool, fn func(Sample) error) error {
	where, args := f.where()
	if order != "" {
		order = " ORDER BY " + order
	}
	rows, err := q.QueryContext(ctx, "SELECT "+sampleColumns(stats)+" FROM samples s JOIN runs r ON r.id = s.run_id"+where+order, args...)
	if err != nil {
		return err
	}
	return decodeSamples(rows, stats, interner{}, fn)
}

// sampleColumns are the columns decodeSamples reads. The five text
// columns come as one string and their lengths in bytes (plus one, 0 for
// NULL), not as five: the driver makes a Go string and an interface value
// of every text column of every row, and a comparison of a site's years
// reads a million rows — most of its allocations, and of its collector's
// work, were those strings. Lengths up to 254 are small integers, which
// need no allocation to become interface values.
func sampleColumns(stats bool) string {
	cols := "s.run_id, s.x, s.value, " +
		"length(CAST(s.metric AS BLOB)), length(CAST(s.unit AS BLOB)), length(CAST(s.x_unit AS BLOB)), " +
		"ifnull(length(CAST(s.pair AS BLOB)) + 1, 0), ifnull(length(CAST(s.tags AS BLOB)) + 1, 0), " +
		"s.metric || s.unit || s.x_unit || ifnull(s.pair, '') || ifnull(s.tags, '')"
	if stats {
		cols += ", s.min, s.max, s.p50, s.p99, s.iterations, s.repeat"
	}
	return cols
}

// decodeSamples reads rows of sampleColumns, closing them.
func decodeSamples(rows *sql.Rows, stats bool, in interner, fn func(Sample) error) error {
	defer rows.Close()
	var s Sample
	// Scanned into interface values, the driver's values are taken as
	// they are: no conversion, no copy.
	var vals [15]any
	n := 9
	if stats {
		n = len(vals)
	}
	dst := make([]any, n)
	for i := range dst {
		dst[i] = &vals[i]
	}
	// Consecutive samples mostly share their metric, unit and x unit: the
	// last ones are kept decoded. The tags of a node pair come back in
	// every run that measured the pair (and a matrix kernel's latency and
	// bandwidth of a pair share them): those seen lately are kept decoded,
	// at most tagMapsKept. (Tags maps are so shared between samples: they
	// are read-only.)
	var last [3]string
	tagMaps := map[string]map[string]string{}
	str := func(i int, b string) string {
		if b != last[i] {
			last[i] = in.str(b)
		}
		return last[i]
	}
	for rows.Next() {
		s = Sample{}
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		var err error
		if s.RunID, err = anyInt(vals[0]); err != nil {
			return fmt.Errorf("sample run id: %w", err)
		}
		text, ok := vals[8].(string)
		if !ok {
			return fmt.Errorf("run %d: sample text columns: %T", s.RunID, vals[8])
		}
		var cut [5]string
		for i := range cut {
			l, err := anyInt(vals[3+i])
			if err != nil {
				return fmt.Errorf("run %d: sample text columns: %w", s.RunID, err)
			}
			if i >= 3 { // length + 1, 0 for NULL
				if l == 0 {
					continue
				}
				l--
			}
			if l < 0 || l > int64(len(text)) {
				return fmt.Errorf("run %d: sample text columns: length %d of %d", s.RunID, l, len(text))
			}
			cut[i], text = text[:l], text[l:]
		}
		s.Metric, s.Unit, s.XUnit = str(0, cut[0]), str(1, cut[1]), str(2, cut[2])
		if s.Value, err = anyFloat(vals[2]); err != nil {
			return fmt.Errorf("run %d: sample value: %w", s.RunID, err)
		}
		var fl [5]sql.NullFloat64
		for i, j := range [5]int{1, 9, 10, 11, 12} {
			if j >= n || vals[j] == nil {
				continue
			}
			if fl[i].Float64, err = anyFloat(vals[j]); err != nil {
				return fmt.Errorf("run %d: sample figures: %w", s.RunID, err)
			}
			fl[i].Valid = true
		}
		setFloats(&s.Sample, fl[0], fl[1], fl[2], fl[3], fl[4])
		if stats {
			it, err1 := anyInt(vals[13])
			rep, err2 := anyInt(vals[14])
			if err := errors.Join(err1, err2); err != nil {
				return fmt.Errorf("run %d: sample iterations and repeat: %w", s.RunID, err)
			}
			s.Iterations, s.Repeat = int(it), int(rep)
		}
		if vals[6] != int64(0) {
			if s.Pair, err = parseInts(cut[3]); err != nil {
				return fmt.Errorf("run %d: sample pair: %w", s.RunID, err)
			}
		}
		switch m, seen := tagMaps[cut[4]]; {
		case vals[7] == int64(0):
			s.Tags = nil
		case seen:
			s.Tags = m
		default:
			if s.Tags, err = in.decodeTags([]byte(cut[4])); err != nil {
				return fmt.Errorf("run %d: sample tags: %w", s.RunID, err)
			}
			if len(tagMaps) == tagMapsKept {
				clear(tagMaps)
			}
			tagMaps[strings.Clone(cut[4])] = s.Tags
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return rows.Err()
}

// anyInt is an integer column's value as the driver gives it.
func anyInt(v any) (int64, error) {
	if i, ok := v.(int64); ok {
		return i, nil
	}
	return 0, fmt.Errorf("want an integer, have %T", v)
}

// anyFloat is a real column's value as the driver gives it (an integer if
// SQLite stored a whole number so).
func anyFloat(v any) (float64, error) {
	switch f := v.(type) {
	case float64:
		return f, nil
	case int64:
		return float64(f), nil
	}
	return 0, fmt.Errorf("want a number, have %T", v)
}

// tagMapsKept is how many decoded tag sets decodeSamples keeps: the node
// pairs of a large cluster's matrix, at a few hundred bytes each.
const tagMapsKept = 4096

// setFloats sets a sample's optional figures, the present ones sharing
// one allocation.
func setFloats(s *results.Sample, x, lo, hi, p50, p99 sql.NullFloat64) {
	n := 0
	for _, v := range []sql.NullFloat64{x, lo, hi, p50, p99} {
		if v.Valid {
			n++
		}
	}
	if n == 0 {
		return
	}
	buf := make([]float64, 0, n)
	set := func(dst **float64, v sql.NullFloat64) {
		if v.Valid {
			buf = append(buf, v.Float64)
			*dst = &buf[len(buf)-1]
		}
	}
	set(&s.X, x)
	set(&s.Min, lo)
	set(&s.Max, hi)
	set(&s.P50, p50)
	set(&s.P99, p99)
}

// Scalars returns the scalars of the runs f selects, ordered by run id, then
// their order in the bundle (HPL's N, NB, P, Q … stay in HPL's order).
func (db *DB) Scalars(ctx context.Context, f Filter) ([]Scalar, error) {
	return collect(ctx, db, "scalars", f, eachScalar)
}

func eachScalar(ctx context.Context, q queryer, f Filter, fn func(Scalar) error) error {
	where, args := f.where()
	rows, err := q.QueryContext(ctx, "SELECT s.run_id, s.name, s.unit, s.value FROM scalars s JOIN runs r ON r.id = s.run_id"+where+" ORDER BY s.run_id, s.seq", args...)
	if err != nil {
		return err
	}
	return decodeScalars(rows, fn)
}

// decodeScalars reads rows of run_id, name, unit, value, closing them.
func decodeScalars(rows *sql.Rows, fn func(Scalar) error) error {
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
		var c Check
		return eachRow(ctx, tx, "SELECT c.run_id, c.name, c.value, c.threshold, c.op, c.passed FROM checks c JOIN runs r ON r.id = c.run_id"+where+" ORDER BY c.run_id, c.seq",
			args, []any{&c.RunID, &c.Name, &c.Value, &c.Threshold, &c.Op, &c.Passed}, func() error {
				out = append(out, c)
				return nil
			})
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
	out, err := queryStrings(ctx, db.r, `SELECT campaign FROM runs WHERE campaign <> ''
UNION SELECT campaign FROM jobs WHERE campaign <> '' ORDER BY 1`)
	if err != nil {
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
	// Systems are the systems runs came from (Run.System), sorted.
	Systems []string
	// Labels are the label keys, each with its values (at most a few, the
	// most common first).
	Labels map[string][]string
	// Settings are the other names a KEY=VALUE selection reads
	// (Run.Setting): the parameters that configure a run (not those that
	// only number or describe it) and the settings variants are named by
	// ("ntasks_per_node" of "ntasks_per_node=2"), without their sweep
	// prefix, each with its values (at most a few, the most common first).
	Settings map[string][]string
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
	inv := Inventory{Labels: map[string][]string{}, Settings: map[string][]string{}}
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
		for query, dst := range map[string]*[]string{
			"SELECT DISTINCT campaign FROM runs WHERE campaign != '' ORDER BY 1": &inv.Campaigns,
			"SELECT DISTINCT benchmark FROM runs ORDER BY 1":                     &inv.Benchmarks,
			"SELECT DISTINCT system FROM runs WHERE system != '' ORDER BY 1":     &inv.Systems,
		} {
			if *dst, err = queryStrings(ctx, tx, query); err != nil {
				return err
			}
		}
		// The system label is the runs' system column (a filter on the
		// label reads the column), whether the label or Slurm named it.
		var k, v string
		var n int
		err = eachRow(ctx, tx, `SELECT key, value, count(*) AS n FROM run_labels WHERE key != 'system' GROUP BY key, value
UNION ALL SELECT 'system', system, count(*) AS n FROM runs WHERE system != '' GROUP BY system
ORDER BY 1, 3 DESC, 2`, nil, []any{&k, &v, &n}, func() error {
			if len(inv.Labels[k]) < maxInventoryValues {
				inv.Labels[k] = append(inv.Labels[k], v)
			}
			return nil
		})
		if err != nil {
			return err
		}
		return inventorySettings(ctx, tx, &inv)
	})
	if err != nil {
		return Inventory{}, fmt.Errorf("read what %s holds: %w", db.path, err)
	}
	return inv, nil
}

// inventorySettings fills inv.Settings: the parameters and the variants'
// settings, each value counted once per run.
func inventorySettings(ctx context.Context, tx *sql.Tx, inv *Inventory) error {
	counts := map[string]map[string]int{}
	add := func(k, v string, n int) {
		if counts[k] == nil {
			counts[k] = map[string]int{}
		}
		counts[k][v] += n
	}
	var k, v, variant string
	var n int
	err := eachRow(ctx, tx, "SELECT key, value, count(*) FROM run_params GROUP BY key, value", nil, []any{&k, &v, &n}, func() error {
		if !results.DescriptiveParam("", k) {
			add(k, v, n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = eachRow(ctx, tx, "SELECT variant, count(*) FROM runs WHERE variant LIKE '%=%' GROUP BY variant", nil, []any{&variant, &n}, func() error {
		for k, v := range SettingKeys(variant) {
			add(k, v, n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for k, vs := range counts {
		values := slices.Collect(maps.Keys(vs))
		slices.SortFunc(values, func(a, b string) int { return cmp.Or(cmp.Compare(vs[b], vs[a]), cmp.Compare(a, b)) })
		inv.Settings[k] = values[:min(len(values), maxInventoryValues)]
	}
	return nil
}

// queryStrings returns the one column of text a query selects.
func queryStrings(ctx context.Context, q queryer, query string, args ...any) ([]string, error) {
	var out []string
	var v string
	err := eachRow(ctx, q, query, args, []any{&v}, func() error {
		out = append(out, v)
		return nil
	})
	return out, err
}

// eachRow runs query and, for each row, scans its columns into dst and
// calls fn.
func eachRow(ctx context.Context, q queryer, query string, args, dst []any, fn func() error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// CountSamples returns how many samples the runs f selects have.
func (db *DB) CountSamples(ctx context.Context, f Filter) (int, error) {
	return db.countRows(ctx, "samples", "samples s JOIN runs r ON r.id = s.run_id", f)
}

// CountRuns returns how many runs f selects.
func (db *DB) CountRuns(ctx context.Context, f Filter) (int, error) {
	return db.countRows(ctx, "runs", "runs r", f)
}

// countRows returns how many rows of from (which names the runs r) belong to
// the runs f selects; what names them in the error.
func (db *DB) countRows(ctx context.Context, what, from string, f Filter) (int, error) {
	where, args := f.where()
	var n int
	if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM "+from+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s of %s: %w", what, db.path, err)
	}
	return n, nil
}
