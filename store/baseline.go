package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Baseline is a named reference point: the runs a later campaign is
// compared with ("pre-upgrade", "acceptance-2024"). It holds run ids, not
// the selection that found them, so that runs added later never creep into
// a reference; Selection keeps what the user typed, for display.
type Baseline struct {
	Name      string
	Selection string
	Note      string
	Created   time.Time
	RunIDs    []int64 // sorted
}

// CheckBaselineName reports a name that cannot be typed back in a
// "baseline:NAME" selector.
func CheckBaselineName(name string) error {
	if name == "" {
		return errors.New("baseline name is empty")
	}
	if strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == ',' }) >= 0 {
		return fmt.Errorf("baseline name %q: no spaces, commas or control characters", name)
	}
	return nil
}

// SetBaseline records b under b.Name, replacing any baseline of that name
// (replaced says so). A zero Created is stamped with the current time. Every
// run must be in the archive.
func (db *DB) SetBaseline(ctx context.Context, b Baseline) (replaced bool, err error) {
	if err := CheckBaselineName(b.Name); err != nil {
		return false, fmt.Errorf("set baseline: %w", err)
	}
	if len(b.RunIDs) == 0 {
		return false, fmt.Errorf("set baseline %s: no runs", b.Name)
	}
	if b.Created.IsZero() {
		b.Created = db.now()
	}
	if err := checkTime(b.Created); err != nil {
		return false, fmt.Errorf("set baseline %s: created: %w", b.Name, err)
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("set baseline %s: %w", b.Name, err)
	}
	defer tx.Rollback()
	if replaced, err = setBaselineTx(ctx, tx, b); err != nil {
		return false, fmt.Errorf("set baseline %s: %w", b.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("set baseline %s: %w", b.Name, err)
	}
	return replaced, nil
}

// setBaselineTx records b, checked, in tx, replacing a baseline of its
// name.
func setBaselineTx(ctx context.Context, tx *sql.Tx, b Baseline) (replaced bool, err error) {
	ids := slices.Compact(slices.Sorted(slices.Values(b.RunIDs)))
	idsJSON, _ := json.Marshal(ids)
	var missing sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT min(j.value) FROM json_each(?) j WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = j.value)`,
		string(idsJSON)).Scan(&missing); err != nil {
		return false, err
	}
	if missing.Valid {
		return false, fmt.Errorf("run %d: %w", missing.Int64, ErrNotFound)
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM baselines WHERE name = ?", b.Name)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, "INSERT INTO baselines (name, selection, note, created) VALUES (?, ?, ?, ?)",
		b.Name, b.Selection, b.Note, formatTime(b.Created)); err != nil {
		return false, err
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO baseline_runs (baseline, run_id) SELECT ?, value FROM json_each(?)",
		b.Name, string(idsJSON)); err != nil {
		return false, err
	}
	return n > 0, nil
}

// Baseline returns the baseline called name; an unknown name wraps
// ErrNotFound.
func (db *DB) Baseline(ctx context.Context, name string) (Baseline, error) {
	out, err := readValue(ctx, db, func(tx *sql.Tx) ([]Baseline, error) { return loadBaselines(ctx, tx, name) })
	if err != nil {
		return Baseline{}, fmt.Errorf("baseline %s in %s: %w", name, db.path, err)
	}
	if len(out) == 0 {
		return Baseline{}, fmt.Errorf("baseline %s in %s: %w", name, db.path, ErrNotFound)
	}
	return out[0], nil
}

// Baselines returns every baseline, sorted by name.
func (db *DB) Baselines(ctx context.Context) ([]Baseline, error) {
	out, err := readValue(ctx, db, func(tx *sql.Tx) ([]Baseline, error) { return loadBaselines(ctx, tx, "") })
	if err != nil {
		return nil, fmt.Errorf("query baselines of %s: %w", db.path, err)
	}
	return out, nil
}

// DeleteBaseline forgets a baseline (not its runs). An unknown name wraps
// ErrNotFound.
func (db *DB) DeleteBaseline(ctx context.Context, name string) error {
	res, err := db.w.ExecContext(ctx, "DELETE FROM baselines WHERE name = ?", name)
	if err != nil {
		return fmt.Errorf("delete baseline %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete baseline %s: %w", name, ErrNotFound)
	}
	return nil
}

// loadBaselines reads the baseline called name, or all of them for "".
func loadBaselines(ctx context.Context, tx *sql.Tx, name string) ([]Baseline, error) {
	var out []Baseline
	index := map[string]int{}
	var b Baseline
	var created string
	err := eachRow(ctx, tx, `SELECT name, selection, note, created FROM baselines
WHERE ? = '' OR name = ? ORDER BY name`, []any{name, name}, []any{&b.Name, &b.Selection, &b.Note, &created}, func() (err error) {
		if b.Created, err = parseTime(sql.NullString{String: created, Valid: true}); err != nil {
			return fmt.Errorf("baseline %s: %w", b.Name, err)
		}
		index[b.Name] = len(out)
		out = append(out, b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	var bl string
	var id int64
	err = eachRow(ctx, tx, `SELECT baseline, run_id FROM baseline_runs
WHERE ? = '' OR baseline = ? ORDER BY baseline, run_id`, []any{name, name}, []any{&bl, &id}, func() error {
		if i, ok := index[bl]; ok {
			out[i].RunIDs = append(out[i].RunIDs, id)
		}
		return nil
	})
	return out, err
}

// baselinesOf returns, for each of ids that some baseline holds, the
// baselines' names, sorted.
func baselinesOf(ctx context.Context, q queryer, ids []int64) (map[int64][]string, error) {
	idsJSON, _ := json.Marshal(ids)
	out := map[int64][]string{}
	var id int64
	var name string
	err := eachRow(ctx, q, `SELECT run_id, baseline FROM baseline_runs
WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY run_id, baseline`, []any{string(idsJSON)}, []any{&id, &name}, func() error {
		out[id] = append(out[id], name)
		return nil
	})
	return out, err
}
