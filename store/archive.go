package store

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/sbench/sbench/results"
)

// ArchiveSchema names the format ExportArchive writes: JSON lines, a header
// then one run per line, each the result bundle as ingested with the file it
// came from. It moves runs between archives (another site, a laptop, a
// ticket) with nothing lost: importing it elsewhere stores the very same
// bundles, so the content hashes match and importing twice adds nothing.
const ArchiveSchema = "sbench.archive/v1"

// ArchiveSchemaBaselines is ArchiveSchema with baselines: after the runs,
// one line per baseline, naming its runs by content hash. An export
// carries a baseline when it carries every run of it, and is this schema
// only then, so that an sbench that knows v1 only still reads the others.
const ArchiveSchemaBaselines = "sbench.archive/v2"

// archiveHeader is the first line of an archive file.
type archiveHeader struct {
	Schema    string `json:"schema"`
	Runs      int    `json:"runs"`
	Baselines int    `json:"baselines,omitempty"`
	// Expectations counts the expectation sets (v3).
	Expectations int `json:"expectations,omitempty"`
}

// archiveEntry is one line after the header: a run, a baseline, or an
// expectation set.
type archiveEntry struct {
	Source       string               `json:"source,omitempty"`
	IngestedAt   string               `json:"ingested_at,omitempty"`
	Bundle       json.RawMessage      `json:"bundle,omitempty"`
	Baseline     *archiveBaseline     `json:"baseline,omitempty"`
	Expectations *archiveExpectations `json:"expectations,omitempty"`
}

// archiveBaseline is a baseline as an archive file carries it: its runs
// by content hash, which survives the move when run ids do not.
type archiveBaseline struct {
	Name      string   `json:"name"`
	Selection string   `json:"selection"`
	Note      string   `json:"note,omitempty"`
	Created   string   `json:"created"`
	Runs      []string `json:"runs"`
}

// ArchiveExport says what ExportArchive wrote.
type ArchiveExport struct {
	Runs int
	// Baselines are the baselines carried, sorted; Left says why the
	// others were not (one of their runs is not among the exported).
	Baselines []string
	Left      []string
	// Expectations are the expectation sets carried, by campaign and
	// site ("acc", "acc (site hpc1)").
	Expectations []string
}

// ExportArchive writes the runs f selects, in Runs order, as an archive
// file (see ArchiveSchema), one run at a time, then every baseline all of
// whose runs it wrote (ArchiveSchemaBaselines), then the recorded
// expectations of the campaigns of those runs (ArchiveSchemaExpectations).
// The output is deterministic: the same runs give the same bytes.
func (db *DB) ExportArchive(ctx context.Context, w io.Writer, f Filter) (ArchiveExport, error) {
	var out ArchiveExport
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		where, args := f.where()
		var total int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM runs r"+where, args...).Scan(&total); err != nil {
			return err
		}
		baselines, err := exportedBaselines(ctx, tx, f, &out)
		if err != nil {
			return err
		}
		sets, err := exportedExpectations(ctx, tx, where, args, &out)
		if err != nil {
			return err
		}
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		h := archiveHeader{Schema: ArchiveSchema, Runs: total}
		if len(baselines) > 0 {
			h.Schema, h.Baselines = ArchiveSchemaBaselines, len(baselines)
		}
		if len(sets) > 0 {
			h.Schema, h.Expectations = ArchiveSchemaExpectations, len(sets)
		}
		if err := enc.Encode(h); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT r.id, r.source, r.ingested_at, b.encoding, b.data
FROM runs r JOIN bundles b ON b.run_id = r.id`+where+" ORDER BY r.start_time, r.id", args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		// Compact, as Hash sees it: one run per line.
		var buf bytes.Buffer
		be := json.NewEncoder(&buf)
		be.SetEscapeHTML(false)
		for rows.Next() {
			var id int64
			var e archiveEntry
			var encoding string
			var data []byte
			if err := rows.Scan(&id, &e.Source, &e.IngestedAt, &encoding, &data); err != nil {
				return err
			}
			b, err := decodeStored(encoding, data)
			if err != nil {
				return fmt.Errorf("run %d: %w", id, err)
			}
			buf.Reset()
			if err := be.Encode(b); err != nil {
				return fmt.Errorf("run %d: %w", id, err)
			}
			e.Bundle = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if err := enc.Encode(&e); err != nil {
				return fmt.Errorf("run %d: %w", id, err)
			}
			out.Runs++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if out.Runs != total {
			return fmt.Errorf("%d runs counted but %d have a bundle", total, out.Runs)
		}
		for i := range baselines {
			if err := enc.Encode(archiveEntry{Baseline: &baselines[i]}); err != nil {
				return err
			}
		}
		for i := range sets {
			if err := enc.Encode(archiveEntry{Expectations: &sets[i]}); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
	if err != nil {
		return out, fmt.Errorf("export archive from %s: %w", db.path, err)
	}
	return out, nil
}

// exportedBaselines are the baselines whose every run f selects, with
// their runs' hashes; out says which were left out, and why.
func exportedBaselines(ctx context.Context, tx *sql.Tx, f Filter, out *ArchiveExport) ([]archiveBaseline, error) {
	all, err := loadBaselines(ctx, tx, "")
	if err != nil {
		return nil, err
	}
	var carried []archiveBaseline
	for _, b := range all {
		where, args := f.And(Filter{RunIDs: b.RunIDs}).where()
		hashes, err := queryStrings(ctx, tx, "SELECT r.hash FROM runs r"+where+" ORDER BY r.hash", args...)
		if err != nil {
			return nil, err
		}
		if len(hashes) < len(b.RunIDs) {
			out.Left = append(out.Left, fmt.Sprintf("baseline %s: %d of its %d runs are not exported", b.Name, len(b.RunIDs)-len(hashes), len(b.RunIDs)))
			continue
		}
		carried = append(carried, archiveBaseline{Name: b.Name, Selection: b.Selection, Note: b.Note,
			Created: formatTime(b.Created).(string), Runs: hashes})
		out.Baselines = append(out.Baselines, b.Name)
	}
	return carried, nil
}

// ArchiveImport says what ImportArchive did.
type ArchiveImport struct {
	IngestResult
	// Baselines are the baselines the file carried that were set; Known
	// those this archive had already, with the same runs.
	Baselines, Known []string
	// Expectations are the expectation sets the file carried that were
	// recorded (named as ArchiveExport names them); ExpectationsKnown
	// those this archive had already, recorded at the same time;
	// ExpectationsKept those it kept because its own set was recorded
	// later.
	Expectations, ExpectationsKnown, ExpectationsKept []string
}

// ImportOptions tune ImportArchive.
type ImportOptions struct {
	// Progress, when set, is told how many of the file's runs are stored
	// so far, and how many it holds (its header's count).
	Progress func(done, total int)
}

// importBatch is how many runs of one source file are stored together:
// what an import holds of the file at a time.
const importBatch = 256

// ImportArchive stores the runs, baselines and expectations of an archive file (plain or
// gzipped; name is for messages) in one transaction: all of them or, on
// any error, none. It decodes and stores as it reads, a few runs at a
// time, so that a file of years costs what one run does; a file that is
// truncated or corrupt anywhere is refused whole, its transaction rolled
// back. Runs already in this archive (same content hash) are skipped, as
// Ingest does. Each run keeps the source file and ingest time it had where
// it was exported from. A baseline the file carries is set unless this
// archive has one of that name: the same runs is no change, others are an
// error. An expectation set the file carries replaces this archive's set
// of the same campaign and site only if it was recorded later: a set
// recorded here since is kept.
func (db *DB) ImportArchive(ctx context.Context, r io.Reader, name string, o ImportOptions) (ArchiveImport, error) {
	if db.ins == nil {
		return ArchiveImport{}, fmt.Errorf("import %s: archive %s is not at the latest schema", name, db.path)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return ArchiveImport{}, fmt.Errorf("import %s: %w", name, err)
	}
	defer tx.Rollback()
	st := db.ins.in(ctx, tx)
	now := formatTime(db.now())
	var out ArchiveImport
	var pending archiveGroup
	var total int
	flush := func() error {
		if len(pending.runs) == 0 {
			return nil
		}
		// Encoded as they were decoded, on another goroutine; an error
		// is reported as encodeFile would.
		enc := make([]*encoded, len(pending.runs))
		for i, r := range pending.runs {
			if r.encErr != nil {
				err := fmt.Errorf("ingest %s: %s: %w", pending.source, describe(i, len(pending.runs), r.b), r.encErr)
				return fmt.Errorf("line %d: %w", pending.line, err)
			}
			enc[i] = r.enc
		}
		when := now
		if pending.ingestedAt != "" {
			when = pending.ingestedAt
		}
		res, err := storeFile(ctx, st, pending.source, when, enc)
		if err != nil {
			return err
		}
		out.Added = append(out.Added, res.Added...)
		out.Skipped = append(out.Skipped, res.Skipped...)
		pending.runs = pending.runs[:0]
		if o.Progress != nil {
			o.Progress(len(out.Added)+len(out.Skipped), total)
		}
		return nil
	}
	err = readArchive(r, name, func(h archiveHeader) { total = h.Runs }, func(r *rawRun) error {
		if len(pending.runs) > 0 && (pending.source != r.e.Source || pending.ingestedAt != r.e.IngestedAt || len(pending.runs) == importBatch) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(pending.runs) == 0 {
			pending.source, pending.ingestedAt, pending.line = r.e.Source, r.e.IngestedAt, r.line
		}
		pending.runs = append(pending.runs, r)
		return nil
	}, func(line int, b *archiveBaseline) error {
		if err := flush(); err != nil {
			return err
		}
		set, err := importBaseline(ctx, tx, b)
		if err != nil {
			return fmt.Errorf("line %d: baseline %s: %w", line, b.Name, err)
		}
		if set {
			out.Baselines = append(out.Baselines, b.Name)
		} else {
			out.Known = append(out.Known, b.Name)
		}
		return nil
	}, func(line int, s *archiveExpectations) error {
		if err := flush(); err != nil {
			return err
		}
		what := "expectations"
		if s.Campaign != "" {
			what += " of " + expectationSetName(s.Campaign, s.Site)
		}
		res, err := importExpectations(ctx, tx, s)
		if err != nil {
			return fmt.Errorf("line %d: %s: %w", line, what, err)
		}
		list := map[setOutcome]*[]string{setRecorded: &out.Expectations, setKnown: &out.ExpectationsKnown, setKept: &out.ExpectationsKept}[res]
		*list = append(*list, expectationSetName(s.Campaign, s.Site))
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		if !strings.HasPrefix(err.Error(), "import "+name) {
			err = fmt.Errorf("import %s: %w", name, err)
		}
		return ArchiveImport{}, err
	}
	if err := tx.Commit(); err != nil {
		return ArchiveImport{}, fmt.Errorf("import %s: %w", name, err)
	}
	return out, nil
}

// importBaseline sets a baseline the file carries, its runs found by
// hash; set is false when this archive has it already, with the same
// runs.
func importBaseline(ctx context.Context, tx *sql.Tx, b *archiveBaseline) (set bool, err error) {
	if err := CheckBaselineName(b.Name); err != nil {
		return false, err
	}
	created, err := parseTime(sql.NullString{String: b.Created, Valid: true})
	if err == nil {
		err = checkTime(created)
	}
	if err != nil {
		return false, fmt.Errorf("created: %w", err)
	}
	if len(b.Runs) == 0 {
		return false, errors.New("no runs")
	}
	var ids []int64
	for _, h := range b.Runs {
		var id int64
		if err := tx.QueryRowContext(ctx, sqlFindHash, h).Scan(&id); errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("run %s is neither in the file nor in this archive", h)
		} else if err != nil {
			return false, err
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	have, err := loadBaselines(ctx, tx, b.Name)
	if err != nil {
		return false, err
	}
	if len(have) > 0 {
		if slices.Equal(have[0].RunIDs, slices.Compact(ids)) {
			return false, nil
		}
		return false, fmt.Errorf("this archive has a baseline %s of other runs (%s): delete it first (sbench baseline rm %s), or import into another archive",
			b.Name, FormatRunIDs(have[0].RunIDs), b.Name)
	}
	if _, err := setBaselineTx(ctx, tx, Baseline{Name: b.Name, Selection: b.Selection, Note: b.Note, Created: created, RunIDs: ids}); err != nil {
		return false, err
	}
	return true, nil
}

// archiveGroup is consecutive runs of an archive file that came from the
// same file and were ingested at the same time: one Ingest, as they were.
type archiveGroup struct {
	source, ingestedAt string
	line               int
	runs               []*rawRun
}

// decodeBatch is how many lines of an archive file are decoded together.
const decodeBatch = 32

// rawRun is a run line of an archive file as read, then decoded.
type rawRun struct {
	line int
	e    archiveEntry
	b    *results.Bundle
	err  error
	// enc is b encoded for the store, or why it cannot be (reported
	// where ImportArchive would have encoded it).
	enc    *encoded
	encErr error
}

// decodeRuns decodes and checks the bundles of a batch of lines.
func decodeRuns(batch []*rawRun) {
	for _, r := range batch {
		r.b, r.err = decodeRun(&r.e)
		r.e.Bundle = nil
		if r.err == nil {
			r.enc, r.encErr = encodeBundle(r.b)
		}
	}
}

// decodeRun decodes and checks the bundle of a run line, and puts its
// ingest time in the archive's form.
func decodeRun(e *archiveEntry) (*results.Bundle, error) {
	b, err := results.Decode(bytes.NewReader(e.Bundle))
	if err != nil {
		return nil, err
	}
	if e.IngestedAt != "" {
		// Stored in the archive's fixed-width form, which sorts.
		t, err := parseTime(sql.NullString{String: e.IngestedAt, Valid: true})
		if err == nil {
			err = checkTime(t)
		}
		if err != nil {
			return nil, fmt.Errorf("ingested_at: %w", err)
		}
		e.IngestedAt = ""
		if s, ok := formatTime(t).(string); ok {
			e.IngestedAt = s
		}
	}
	if err := b.Validate(); err != nil {
		return nil, fmt.Errorf("invalid bundle: %w", err)
	}
	return b, nil
}

// readArchive decodes an archive file line by line, checking each as it
// goes, and hands each run, baseline and expectation set on; the header
// goes to header first. A line that is not what the format says, a header
// whose counts the file does not hold (a truncated file), or an error from
// a callback ends it with an error naming the file and the line.
func readArchive(r io.Reader, name string, header func(archiveHeader), run func(*rawRun) error,
	baseline func(line int, b *archiveBaseline) error, sets func(line int, s *archiveExpectations) error) error {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("import %s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	dec := json.NewDecoder(br)
	var h archiveHeader
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("import %s: line 1: not an sbench archive export: %w", name, err)
	}
	if err := h.check(); err != nil {
		return fmt.Errorf("import %s: line 1: %w", name, err)
	}
	header(h)
	p := &runPipeline{name: name, run: run}
	defer p.stop()
	// fail is err, unless a line before it was bad.
	fail := func(err error) error {
		if e := p.drain(); e != nil {
			return e
		}
		return err
	}
	held := archiveCounts{}
	line := 1
	for ; ; line++ {
		var e archiveEntry
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = held.add(&e, h)
		}
		if err != nil {
			return fail(fmt.Errorf("import %s: line %d: %w", name, line+1, err))
		}
		switch {
		case e.Baseline != nil, e.Expectations != nil:
			if err := p.drain(); err != nil {
				return err
			}
			if e.Baseline != nil {
				err = baseline(line+1, e.Baseline)
			} else {
				err = sets(line+1, e.Expectations)
			}
			if err != nil {
				return fmt.Errorf("import %s: %w", name, err)
			}
		default:
			if err := p.add(&rawRun{line: line + 1, e: e}); err != nil {
				return err
			}
		}
	}
	if err := p.drain(); err != nil {
		return err
	}
	if err := held.check(h); err != nil {
		return fmt.Errorf("import %s: the file ends after line %d: %w", name, line, err)
	}
	return nil
}

// check says what is wrong with an archive file's header.
func (h archiveHeader) check() error {
	switch h.Schema {
	case ArchiveSchema, ArchiveSchemaBaselines, ArchiveSchemaExpectations:
	default:
		return fmt.Errorf("schema %q, want %q, %q or %q", h.Schema, ArchiveSchema, ArchiveSchemaBaselines, ArchiveSchemaExpectations)
	}
	if h.Runs >= 0 && h.Baselines >= 0 && h.Expectations >= 0 &&
		(h.Schema != ArchiveSchema || h.Baselines == 0) && (h.Schema == ArchiveSchemaExpectations || h.Expectations == 0) {
		return nil
	}
	if h.Expectations == 0 {
		return fmt.Errorf("%d runs and %d baselines is not a header of %s", h.Runs, h.Baselines, h.Schema)
	}
	return fmt.Errorf("%d runs, %d baselines and %d expectation sets is not a header of %s", h.Runs, h.Baselines, h.Expectations, h.Schema)
}

// archiveCounts are the lines of each kind an archive file holds so far.
type archiveCounts struct{ runs, baselines, sets int }

// add counts line e, checking that it is one thing, in its place (runs,
// then baselines, then expectation sets), and no more than h counts.
func (n *archiveCounts) add(e *archiveEntry, h archiveHeader) error {
	isRun := len(e.Bundle) > 0 || e.Source != "" || e.IngestedAt != ""
	if e.Baseline != nil && (isRun || e.Expectations != nil) || e.Expectations != nil && isRun {
		return errors.New("two of a run, a baseline and an expectation set on one line")
	}
	switch {
	case e.Expectations != nil:
		if n.sets++; n.sets > h.Expectations {
			return fmt.Errorf("more expectation sets than the header's %d", h.Expectations)
		}
	case e.Baseline != nil:
		if n.sets > 0 {
			return errors.New("a baseline after the expectation sets")
		}
		if n.baselines++; n.baselines > h.Baselines {
			return fmt.Errorf("more baselines than the header's %d", h.Baselines)
		}
	default:
		if n.sets > 0 {
			return errors.New("a run after the expectation sets")
		}
		if n.baselines > 0 {
			return errors.New("a run after the baselines")
		}
		if len(e.Bundle) == 0 {
			return errors.New("no bundle")
		}
		if n.runs++; n.runs > h.Runs {
			return fmt.Errorf("more runs than the header's %d", h.Runs)
		}
	}
	return nil
}

// check says how a file's counts fall short of its header's.
func (n archiveCounts) check(h archiveHeader) error {
	switch {
	case n == archiveCounts{h.Runs, h.Baselines, h.Expectations}:
		return nil
	case h.Baselines == 0 && h.Expectations == 0:
		return fmt.Errorf("header says %d runs, the file holds %d (truncated?)", h.Runs, n.runs)
	case h.Expectations == 0:
		return fmt.Errorf("header says %d runs and %d baselines, the file holds %d and %d (truncated?)", h.Runs, h.Baselines, n.runs, n.baselines)
	}
	return fmt.Errorf("header says %d runs, %d baselines and %d expectation sets, the file holds %d, %d and %d (truncated?)",
		h.Runs, h.Baselines, h.Expectations, n.runs, n.baselines, n.sets)
}

// runPipeline decodes and checks the bundles of an archive on other
// goroutines, a batch of lines at a time, while the caller stores the
// batch before: decoding was most of an import's time, on one core. Runs
// still reach run in the file's order, and the first bad line is the
// error, as if read one by one.
type runPipeline struct {
	name      string
	run       func(*rawRun) error
	prev, cur []*rawRun
	wait      func()
}

// add adds a line's run; a full batch starts decoding, and the batch
// before it is handed on.
func (p *runPipeline) add(r *rawRun) error {
	p.cur = append(p.cur, r)
	if len(p.cur) < decodeBatch {
		return nil
	}
	p.stop()
	batch := p.cur
	done := make(chan struct{})
	go func() {
		defer close(done)
		decodeRuns(batch)
	}()
	p.wait = func() { <-done }
	err := p.deliver(p.prev)
	p.prev, p.cur = batch, nil
	return err
}

// stop waits for the batch being decoded.
func (p *runPipeline) stop() {
	if p.wait != nil {
		p.wait()
		p.wait = nil
	}
}

// drain hands on every run read so far.
func (p *runPipeline) drain() error {
	p.stop()
	err := p.deliver(p.prev)
	p.prev = nil
	if err == nil {
		decodeRuns(p.cur)
		err = p.deliver(p.cur)
	}
	p.cur = nil
	return err
}

func (p *runPipeline) deliver(batch []*rawRun) error {
	for _, r := range batch {
		if r.err != nil {
			return fmt.Errorf("import %s: line %d: %w", p.name, r.line, r.err)
		}
		if err := p.run(r); err != nil {
			return fmt.Errorf("import %s: %w", p.name, err)
		}
	}
	return nil
}
