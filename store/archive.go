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

	"github.com/sbench/sbench/results"
)

// ArchiveSchema names the format ExportArchive writes: JSON lines, a header
// then one run per line, each the result bundle as ingested with the file it
// came from. It moves runs between archives (another site, a laptop, a
// ticket) with nothing lost: importing it elsewhere stores the very same
// bundles, so the content hashes match and importing twice adds nothing.
const ArchiveSchema = "sbench.archive/v1"

// archiveHeader is the first line of an archive file.
type archiveHeader struct {
	Schema string `json:"schema"`
	Runs   int    `json:"runs"`
}

// archiveEntry is one run of an archive file.
type archiveEntry struct {
	Source     string          `json:"source"`
	IngestedAt string          `json:"ingested_at,omitempty"`
	Bundle     json.RawMessage `json:"bundle"`
}

// ExportArchive writes the runs f selects, in Runs order, as an archive
// file (see ArchiveSchema), and returns how many it wrote. The output is
// deterministic: the same runs give the same bytes.
func (db *DB) ExportArchive(ctx context.Context, w io.Writer, f Filter) (int, error) {
	n := 0
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		where, args := f.where()
		var total int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM runs r"+where, args...).Scan(&total); err != nil {
			return err
		}
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(archiveHeader{Schema: ArchiveSchema, Runs: total}); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT r.id, r.source, r.ingested_at, b.encoding, b.data
FROM runs r JOIN bundles b ON b.run_id = r.id`+where+" ORDER BY r.start_time, r.id", args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var buf bytes.Buffer
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
			// Compact, as Hash sees it: one run per line.
			buf.Reset()
			be := json.NewEncoder(&buf)
			be.SetEscapeHTML(false)
			if err := be.Encode(b); err != nil {
				return fmt.Errorf("run %d: %w", id, err)
			}
			e.Bundle = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if err := enc.Encode(&e); err != nil {
				return fmt.Errorf("run %d: %w", id, err)
			}
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n != total {
			return fmt.Errorf("%d runs counted but %d have a bundle", total, n)
		}
		return bw.Flush()
	})
	if err != nil {
		return n, fmt.Errorf("export archive from %s: %w", db.path, err)
	}
	return n, nil
}

// ImportArchive stores the runs of an archive file (plain or gzipped; name
// is for messages) in one transaction: all of them or, on any error, none.
// Runs already in this archive (same content hash) are skipped, as Ingest
// does. Each run keeps the source file and ingest time it had where it was
// exported from.
func (db *DB) ImportArchive(ctx context.Context, r io.Reader, name string) (IngestResult, error) {
	if db.ins == nil {
		return IngestResult{}, fmt.Errorf("import %s: archive %s is not at the latest schema", name, db.path)
	}
	groups, err := readArchive(r, name)
	if err != nil {
		return IngestResult{}, err
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return IngestResult{}, fmt.Errorf("import %s: %w", name, err)
	}
	defer tx.Rollback()
	st := db.ins.in(ctx, tx)
	now := formatTime(db.now())
	var out IngestResult
	for _, g := range groups {
		enc, err := encodeFile(g.source, g.bundles)
		if err != nil {
			return IngestResult{}, fmt.Errorf("import %s: %w", name, err)
		}
		when := now
		if g.ingestedAt != "" {
			when = g.ingestedAt
		}
		res, err := storeFile(ctx, st, g.source, when, enc)
		if err != nil {
			return IngestResult{}, fmt.Errorf("import %s: %w", name, err)
		}
		out.Added = append(out.Added, res.Added...)
		out.Skipped = append(out.Skipped, res.Skipped...)
	}
	if err := tx.Commit(); err != nil {
		return IngestResult{}, fmt.Errorf("import %s: %w", name, err)
	}
	return out, nil
}

// archiveGroup is consecutive runs of an archive file that came from the
// same file and were ingested at the same time: one Ingest, as they were.
type archiveGroup struct {
	source, ingestedAt string
	bundles            []*results.Bundle
}

// readArchive decodes and checks a whole archive file before anything is
// written, so that a truncated or corrupt file is refused whole.
func readArchive(r io.Reader, name string) ([]archiveGroup, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	dec := json.NewDecoder(br)
	var h archiveHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("import %s: line 1: not an sbench archive export: %w", name, err)
	}
	if h.Schema != ArchiveSchema {
		return nil, fmt.Errorf("import %s: line 1: schema %q, want %q", name, h.Schema, ArchiveSchema)
	}
	var groups []archiveGroup
	count := 0
	for {
		var e archiveEntry
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		line := count + 2 // each entry on a line of its own, after the header
		if err != nil {
			return nil, fmt.Errorf("import %s: line %d: %w", name, line, err)
		}
		count++
		if len(e.Bundle) == 0 {
			return nil, fmt.Errorf("import %s: line %d: no bundle", name, line)
		}
		b, err := results.Decode(bytes.NewReader(e.Bundle))
		if err != nil {
			return nil, fmt.Errorf("import %s: line %d: %w", name, line, err)
		}
		if e.IngestedAt != "" {
			// Stored in the archive's fixed-width form, which sorts.
			t, err := parseTime(sql.NullString{String: e.IngestedAt, Valid: true})
			if err == nil {
				err = checkTime(t)
			}
			if err != nil {
				return nil, fmt.Errorf("import %s: line %d: ingested_at: %w", name, line, err)
			}
			e.IngestedAt = ""
			if s, ok := formatTime(t).(string); ok {
				e.IngestedAt = s
			}
		}
		if n := len(groups); n > 0 && groups[n-1].source == e.Source && groups[n-1].ingestedAt == e.IngestedAt {
			groups[n-1].bundles = append(groups[n-1].bundles, b)
		} else {
			groups = append(groups, archiveGroup{source: e.Source, ingestedAt: e.IngestedAt, bundles: []*results.Bundle{b}})
		}
	}
	if count != h.Runs {
		return nil, fmt.Errorf("import %s: header says %d runs, the file holds %d (truncated?)", name, h.Runs, count)
	}
	return groups, nil
}
