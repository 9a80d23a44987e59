package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/sbench/sbench/results"
)

// compressAbove is the size from which a bundle's JSON is stored gzipped.
// Smaller ones, the usual case, stay plain text so that the sqlite3 shell's
// json_extract can read them and ingest spends no time compressing; the
// large ones are those carrying a long raw tool output, which compresses
// tenfold.
const compressAbove = 16 << 10

const (
	encodingJSON     = "json"
	encodingJSONGzip = "json+gzip"
)

// ingestStmts are the statements of Ingest, prepared once on the writer
// connection and bound to each transaction with Tx.Stmt, so that an ingest of
// one small file does not pay for compiling its statements again.
type ingestStmts struct {
	findHash, run, bundle, label, param, findHost, host, runHost, sample, scalar, check *sql.Stmt

	// tx and rows are those of a transaction (in): statements inserting
	// several samples at once, by their number, prepared as needed.
	tx   *sql.Tx
	rows map[int]*sql.Stmt
}

// sampleChunk is how many samples one statement inserts at most: a
// statement per file's samples rather than per sample, which is most of
// what an ingest spends in database/sql and the driver.
const sampleChunk = 32

// samplesStmt is the statement inserting n samples, prepared in the
// transaction the first time.
func (s *ingestStmts) samplesStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	if st := s.rows[n]; st != nil {
		return st, nil
	}
	row := "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
	st, err := s.tx.PrepareContext(ctx, sqlInsertSmpls+strings.Repeat(row+", ", n-1)+row)
	if err != nil {
		return nil, err
	}
	s.rows[n] = st
	return st, nil
}

const (
	sqlFindHash    = `SELECT id FROM runs WHERE hash = ?`
	sqlInsertRun   = `INSERT INTO runs (hash, campaign, variant, benchmark, kind, kernel, command, launcher, tool, tool_version, status, error, job_id, step, array_index, nodes, tasks, tasks_per_node, start_time, end_time, runner_version, source, origin, ingested_at, restart, system, tool_benchmark, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING`
	sqlInsertBndl  = `INSERT INTO bundles (run_id, encoding, data) VALUES (?, ?, ?)`
	sqlInsertLbl   = `INSERT INTO run_labels (run_id, key, value) VALUES (?, ?, ?)`
	sqlInsertPrm   = `INSERT INTO run_params (run_id, key, value) VALUES (?, ?, ?)`
	sqlFindHost    = `SELECT id FROM hosts WHERE hash = ?`
	sqlInsertHost  = `INSERT INTO hosts (hash, hostname, node_name, cpu_model, cores, memory_bytes, kernel, os, mpi, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlInsertRH    = `INSERT INTO run_hosts (run_id, idx, host_id) VALUES (?, ?, ?)`
	sqlInsertSmpl  = `INSERT INTO samples (run_id, seq, metric, unit, x, x_unit, value, min, max, p50, p99, iterations, repeat, pair, tags) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlInsertSmpls = `INSERT INTO samples (run_id, seq, metric, unit, x, x_unit, value, min, max, p50, p99, iterations, repeat, pair, tags) VALUES `
	sqlInsertSclr  = `INSERT INTO scalars (run_id, seq, name, unit, value) VALUES (?, ?, ?, ?, ?)`
	sqlInsertChk   = `INSERT INTO checks (run_id, seq, name, value, threshold, op, passed) VALUES (?, ?, ?, ?, ?, ?, ?)`
)

// stmts are the prepared statements of s, in the order of ingestQueries.
func (s *ingestStmts) stmts() []**sql.Stmt {
	return []**sql.Stmt{&s.findHash, &s.run, &s.bundle, &s.label, &s.param, &s.findHost, &s.host, &s.runHost, &s.sample, &s.scalar, &s.check}
}

var ingestQueries = []string{sqlFindHash, sqlInsertRun, sqlInsertBndl, sqlInsertLbl, sqlInsertPrm, sqlFindHost, sqlInsertHost, sqlInsertRH, sqlInsertSmpl, sqlInsertSclr, sqlInsertChk}

func prepareIngest(ctx context.Context, w *sql.DB) (*ingestStmts, error) {
	s := &ingestStmts{}
	for i, dst := range s.stmts() {
		st, err := w.PrepareContext(ctx, ingestQueries[i])
		if err != nil {
			s.close()
			return nil, fmt.Errorf("prepare %q: %w", ingestQueries[i], err)
		}
		*dst = st
	}
	return s, nil
}

func (s *ingestStmts) close() error {
	var errs []error
	for _, st := range s.stmts() {
		if *st != nil {
			errs = append(errs, (*st).Close())
		}
	}
	return errors.Join(errs...)
}

// in returns the statements bound to tx.
func (s *ingestStmts) in(ctx context.Context, tx *sql.Tx) *ingestStmts {
	t := &ingestStmts{tx: tx, rows: map[int]*sql.Stmt{}}
	src := s.stmts()
	for i, dst := range t.stmts() {
		*dst = tx.StmtContext(ctx, *src[i])
	}
	return t
}

// encoded is a bundle turned into column values, done before the write
// transaction starts so that the lock is held only while inserting.
type encoded struct {
	b        *results.Bundle
	hash     string
	encoding string
	data     any // string for json, []byte for json+gzip
	raw      int // the JSON's length before compression: what the run weighs in memory
	command  any // JSON text or NULL
	nodes    any
	hosts    []encodedHost
	pairs    []any
	tags     []any
}

type encodedHost struct {
	hash, json string
}

func encodeBundle(b *results.Bundle) (*encoded, error) {
	if b == nil {
		return nil, errors.New("bundle is nil")
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("invalid bundle: %w", err)
	}
	if err := checkTime(b.Start); err != nil {
		return nil, fmt.Errorf("invalid bundle: start: %w", err)
	}
	if err := checkTime(b.End); err != nil {
		return nil, fmt.Errorf("invalid bundle: end: %w", err)
	}
	e := &encoded{b: b}
	// The stored text is what results.Hash hashes: one encoding for both,
	// of the bundle's canonical form.
	data, err := json.Marshal(results.Canonical(b))
	if err != nil {
		return nil, fmt.Errorf("encode bundle: %w", err)
	}
	sum := sha256.Sum256(data)
	e.hash = hex.EncodeToString(sum[:])
	if bytes.Contains(data, []byte(`\ufffd`)) {
		// A string was not valid UTF-8 (a tool printing Latin-1, say):
		// JSON, and so the stored bundle and its hash, replaced the bad
		// bytes. Store the columns from that same text, so that Samples
		// and Bundle agree and two runs differing only in bad bytes are
		// one run, as their hashes say.
		var clean results.Bundle
		if err := json.Unmarshal(data, &clean); err != nil {
			return nil, fmt.Errorf("encode bundle: %w", err)
		}
		b = &clean
		e.b = b
	}
	e.encoding, e.data, e.raw = encodingJSON, string(data), len(data)
	if len(data) > compressAbove {
		if e.data, err = gzipBytes(data); err != nil {
			return nil, fmt.Errorf("compress bundle: %w", err)
		}
		e.encoding = encodingJSONGzip
	}
	if e.command, err = jsonOrNull(b.Benchmark.Command, len(b.Benchmark.Command) == 0); err != nil {
		return nil, err
	}
	if e.nodes, err = jsonOrNull(b.Job.Nodes, len(b.Job.Nodes) == 0); err != nil {
		return nil, err
	}
	e.hosts = make([]encodedHost, len(b.Hosts))
	for i := range b.Hosts {
		h, err := json.Marshal(&b.Hosts[i])
		if err != nil {
			return nil, fmt.Errorf("encode hosts[%d]: %w", i, err)
		}
		sum := sha256.Sum256(h)
		e.hosts[i] = encodedHost{hash: hex.EncodeToString(sum[:]), json: string(h)}
	}
	e.pairs = make([]any, len(b.Samples))
	e.tags = make([]any, len(b.Samples))
	for i := range b.Samples {
		s := &b.Samples[i]
		// Empty is stored as NULL, as the bundle's JSON omits it.
		if e.pairs[i], err = jsonOrNull(s.Pair, len(s.Pair) == 0); err != nil {
			return nil, err
		}
		if e.tags[i], err = jsonOrNull(s.Tags, len(s.Tags) == 0); err != nil {
			return nil, err
		}
	}
	return e, nil
}

func jsonOrNull(v any, null bool) (any, error) {
	if null {
		return nil, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	return string(data), nil
}

var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Ingest stores bundles read from source (a file name, kept with each run)
// in one transaction: either all of them are archived or, on any error, none
// is. A bundle whose content hash is already archived — by an earlier ingest
// or earlier in the same batch — is not stored again; its run id is reported
// in Skipped. An error names the offending bundle by its position and what
// identifies it.
func (db *DB) Ingest(ctx context.Context, source string, bundles []*results.Bundle) (IngestResult, error) {
	if db.ins == nil {
		return IngestResult{}, fmt.Errorf("ingest %s: archive %s is not at the latest schema", source, db.path)
	}
	enc, err := encodeFile(source, bundles)
	if err != nil {
		return IngestResult{}, err
	}
	if len(enc) == 0 {
		return IngestResult{}, nil
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return IngestResult{}, fmt.Errorf("ingest %s: %w", source, err)
	}
	defer tx.Rollback()
	res, err := storeFile(ctx, db.ins.in(ctx, tx), source, formatTime(db.now()), enc)
	if err != nil {
		return IngestResult{}, err
	}
	if err := tx.Commit(); err != nil {
		return IngestResult{}, fmt.Errorf("ingest %s: %w", source, err)
	}
	return res, nil
}

// File is the bundles read from one source file, for IngestFiles.
type File struct {
	Source  string
	Bundles []*results.Bundle

	// What Prepare made of the bundles.
	prepared bool
	enc      []*encoded
	encErr   error
}

// Size is how many bytes the file's bundles take as JSON before any
// compression (after Prepare; 0 before): what a caller batching files can
// bound its memory by, since the bundles themselves are held until stored.
// (The compressed size understated a matrix run's weight tenfold.)
func (f *File) Size() int {
	n := 0
	for _, e := range f.enc {
		n += e.raw
	}
	return n
}

// Prepare checks and encodes the file's bundles now (hash, JSON, the
// columns), so that IngestFiles, which holds the archive's write lock,
// only inserts them: a caller that reads files on one goroutine and stores
// them on another does the two at once. A bad bundle is IngestFiles'
// error for the file, as without Prepare.
func (f *File) Prepare() {
	f.enc, f.encErr = encodeFile(f.Source, f.Bundles)
	f.prepared = true
}

// FileResult says what IngestFiles did with one file: what Ingest would
// have returned for it.
type FileResult struct {
	Source string
	IngestResult
	Err error
}

// IngestFiles stores many files in one transaction, each of them all or
// nothing within it: a file with a bad bundle is left out, with its error in
// its FileResult, and the others are stored. It is Ingest for a directory of
// results: a commit costs as much as the inserts of a small file, so one
// commit for the lot is several times faster than one per file.
//
// An error that is not about one file (cancellation, a full disk) rolls the
// whole batch back and is returned as err, with no results.
func (db *DB) IngestFiles(ctx context.Context, files []File) ([]FileResult, error) {
	if db.ins == nil {
		return nil, fmt.Errorf("ingest: archive %s is not at the latest schema", db.path)
	}
	out := make([]FileResult, len(files))
	enc := make([][]*encoded, len(files))
	for i, f := range files {
		out[i].Source = f.Source
		if f.prepared {
			enc[i], out[i].Err = f.enc, f.encErr
		} else {
			enc[i], out[i].Err = encodeFile(f.Source, f.Bundles)
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	defer tx.Rollback()
	st := db.ins.in(ctx, tx)
	now := formatTime(db.now())
	for i, f := range files {
		if out[i].Err != nil || len(enc[i]) == 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, "SAVEPOINT file"); err != nil {
			return nil, fmt.Errorf("ingest %s: %w", f.Source, err)
		}
		res, err := storeFile(ctx, st, f.Source, now, enc[i])
		if err != nil {
			if !isConstraint(err) {
				// SQLite may already have rolled the whole transaction
				// back (I/O error, disk full); nothing of the batch stands.
				return nil, err
			}
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO file"); rerr != nil {
				return nil, fmt.Errorf("ingest %s: %w (rolling back after: %v)", f.Source, rerr, err)
			}
			out[i].Err = err
		} else {
			out[i].IngestResult = res
		}
		if _, err := tx.ExecContext(ctx, "RELEASE file"); err != nil {
			return nil, fmt.Errorf("ingest %s: %w", f.Source, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	return out, nil
}

// encodeFile encodes the bundles of one file, or says which one is bad.
func encodeFile(source string, bundles []*results.Bundle) ([]*encoded, error) {
	enc := make([]*encoded, len(bundles))
	for i, b := range bundles {
		e, err := encodeBundle(b)
		if err != nil {
			return nil, fmt.Errorf("ingest %s: %s: %w", source, describe(i, len(bundles), b), err)
		}
		enc[i] = e
	}
	return enc, nil
}

// storeFile inserts the encoded bundles of one file with the statements of
// the current transaction, skipping those already archived.
func storeFile(ctx context.Context, st *ingestStmts, source string, now any, enc []*encoded) (IngestResult, error) {
	var res IngestResult
	for i, e := range enc {
		// Insert first, look only when that adds nothing: a new run (the
		// common case) costs one statement, not a lookup and an insert.
		id, added, err := insertRun(ctx, st, source, now, e)
		if err == nil && !added {
			err = st.findHash.QueryRowContext(ctx, e.hash).Scan(&id)
		}
		if err != nil {
			return IngestResult{}, fmt.Errorf("ingest %s: %s: %w", source, describe(i, len(enc), e.b), err)
		}
		if added {
			res.Added = append(res.Added, id)
		} else {
			res.Skipped = append(res.Skipped, id)
		}
	}
	return res, nil
}

// insertRun stores a run, unless one of its hash is stored already (added
// is false, and nothing else is written).
func insertRun(ctx context.Context, st *ingestStmts, source string, now any, e *encoded) (id int64, added bool, err error) {
	b := e.b
	// The tool and its benchmark as this sbench writes them, whichever
	// sbench wrote the bundle (the bundle itself is kept as it was).
	tool := b.Benchmark.Normalized()
	r, err := st.run.ExecContext(ctx,
		e.hash, b.Campaign, b.Variant, b.Benchmark.Name, b.Benchmark.Kind, b.Benchmark.Kernel,
		e.command, b.Benchmark.Launcher, tool.Tool, b.Benchmark.ToolVersion,
		string(b.Status), b.Error,
		b.Job.ID, b.Job.Step, b.Job.ArrayIndex, e.nodes, b.Job.Tasks, b.Job.TasksPerNode,
		formatTime(b.Start), formatTime(b.End), b.RunnerVersion, source, b.Source, now, b.Job.Restart, SystemOf(b), tool.ToolBenchmark, b.Note)
	if err != nil {
		return 0, false, fmt.Errorf("insert run: %w", err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 0 {
		return 0, false, err // the same content is archived already
	}
	if id, err = r.LastInsertId(); err != nil {
		return 0, false, fmt.Errorf("insert run: %w", err)
	}
	if _, err := st.bundle.ExecContext(ctx, id, e.encoding, e.data); err != nil {
		return 0, false, fmt.Errorf("insert bundle: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(b.Labels)) {
		if _, err := st.label.ExecContext(ctx, id, k, b.Labels[k]); err != nil {
			return 0, false, fmt.Errorf("insert label %q: %w", k, err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(b.Params)) {
		if _, err := st.param.ExecContext(ctx, id, k, b.Params[k]); err != nil {
			return 0, false, fmt.Errorf("insert param %q: %w", k, err)
		}
	}
	for i := range b.Hosts {
		hostID, err := insertHost(ctx, st, &b.Hosts[i], e.hosts[i])
		if err != nil {
			return 0, false, fmt.Errorf("insert hosts[%d]: %w", i, err)
		}
		if _, err := st.runHost.ExecContext(ctx, id, i, hostID); err != nil {
			return 0, false, fmt.Errorf("insert hosts[%d]: %w", i, err)
		}
	}
	if err := insertSamples(ctx, st, id, e); err != nil {
		return 0, false, err
	}
	for i, s := range b.Scalars {
		if _, err := st.scalar.ExecContext(ctx, id, i, s.Name, s.Unit, s.Value); err != nil {
			return 0, false, fmt.Errorf("insert scalars[%d]: %w", i, err)
		}
	}
	for i, c := range b.Checks {
		if _, err := st.check.ExecContext(ctx, id, i, c.Name, c.Value, c.Threshold, c.Op, c.Passed); err != nil {
			return 0, false, fmt.Errorf("insert checks[%d]: %w", i, err)
		}
	}
	return id, true, nil
}

// insertHost returns the id of host h, storing it if no run had it before.
func insertHost(ctx context.Context, st *ingestStmts, h *results.Host, e encodedHost) (int64, error) {
	var id int64
	err := st.findHost.QueryRowContext(ctx, e.hash).Scan(&id)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	r, err := st.host.ExecContext(ctx, e.hash, h.Hostname, h.NodeName, h.CPUModel, h.Cores,
		int64(h.MemoryBytes), h.Kernel, h.OS, h.MPI, e.json)
	if err != nil {
		return 0, err
	}
	return r.LastInsertId()
}

// SystemOf is the system a bundle's run came from, as Run.System records
// it: its "system" label, which the user gave (ingest --system, a campaign
// label) and so wins, else the Slurm cluster the runner recorded.
func SystemOf(b *results.Bundle) string {
	if s := b.Labels["system"]; s != "" {
		return s
	}
	return b.Job.Cluster
}

// optFloat turns an optional float into a value for a nullable column.
func optFloat(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// describe names bundle i of n for an error message: its position and what
// a user would recognise it by.
func describe(i, n int, b *results.Bundle) string {
	pos := fmt.Sprintf("bundle %d of %d", i+1, n)
	if b == nil {
		return pos
	}
	var parts []string
	add := func(name, v string) {
		if v != "" {
			parts = append(parts, fmt.Sprintf("%s %q", name, v))
		}
	}
	add("campaign", b.Campaign)
	add("variant", b.Variant)
	add("benchmark", b.Benchmark.Name)
	job := b.Job.ID
	if job != "" && b.Job.Step != "" {
		job += "." + b.Job.Step
	}
	add("job", job)
	add("source", b.Source)
	if len(parts) == 0 {
		return pos
	}
	return pos + " (" + strings.Join(parts, ", ") + ")"
}

// insertSamples stores the samples of run id's bundle e, sampleChunk rows
// a statement; a refused row is named by its index. Ingest and Rederive
// both write samples through it.
func insertSamples(ctx context.Context, st *ingestStmts, id int64, e *encoded) error {
	b := e.b
	args := make([]any, 0, 15*min(len(b.Samples), sampleChunk))
	for lo := 0; lo < len(b.Samples); lo += sampleChunk {
		hi := min(lo+sampleChunk, len(b.Samples))
		args = args[:0]
		for i := lo; i < hi; i++ {
			s := &b.Samples[i]
			args = append(args, id, i, s.Metric, s.Unit, optFloat(s.X), s.XUnit, s.Value,
				optFloat(s.Min), optFloat(s.Max), optFloat(s.P50), optFloat(s.P99),
				s.Iterations, s.Repeat, e.pairs[i], e.tags[i])
		}
		stmt, err := st.samplesStmt(ctx, hi-lo)
		if err == nil {
			_, err = stmt.ExecContext(ctx, args...)
		}
		if err == nil {
			continue
		}
		if !isConstraint(err) {
			return fmt.Errorf("insert samples[%d:%d]: %w", lo, hi, err)
		}
		// The statement stored none of its rows: one at a time, to name the
		// one refused (the file is rolled back whatever happens).
		for i := lo; i < hi; i++ {
			if _, err := st.sample.ExecContext(ctx, args[(i-lo)*15:(i-lo+1)*15]...); err != nil {
				return fmt.Errorf("insert samples[%d]: %w", i, err)
			}
		}
		return fmt.Errorf("insert samples[%d:%d]: %w", lo, hi, err)
	}
	return nil
}
