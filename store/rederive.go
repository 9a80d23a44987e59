package store

import (
	"context"
	"fmt"

	"github.com/sbench/sbench/results"
)

// Rederive rewrites archived runs from their own bundles, in one
// transaction: derive gets each run's bundle and changes it in place (its
// samples, status and error: sbench ingest --reparse reading its raw
// output again), reporting whether it changed anything. A changed run
// keeps its id, labels, parameters, hosts, scalars and checks; its bundle,
// hash, status, error and samples are replaced. On any error nothing is
// written. It returns the ids of the changed runs.
func (db *DB) Rederive(ctx context.Context, ids []int64, derive func(id int64, b *results.Bundle) (bool, error)) ([]int64, error) {
	if db.ins == nil {
		return nil, fmt.Errorf("rederive: archive %s is not at the latest schema", db.path)
	}
	type change struct {
		id  int64
		enc *encoded
	}
	var changes []change
	for _, id := range ids {
		b, err := db.Bundle(ctx, id)
		if err != nil {
			return nil, err
		}
		changed, err := derive(id, b)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", id, err)
		}
		if !changed {
			continue
		}
		e, err := encodeBundle(b)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", id, err)
		}
		changes = append(changes, change{id, e})
	}
	if len(changes) == 0 {
		return nil, nil
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("rederive: %w", err)
	}
	defer tx.Rollback()
	st := db.ins.in(ctx, tx)
	var out []int64
	for _, c := range changes {
		if err := rewriteRun(ctx, st, c.id, c.enc); err != nil {
			return nil, fmt.Errorf("rederive run %d: %w", c.id, err)
		}
		out = append(out, c.id)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("rederive: %w", err)
	}
	return out, nil
}

// rewriteRun replaces run id's bundle, hash, status, error and samples.
func rewriteRun(ctx context.Context, st *ingestStmts, id int64, e *encoded) error {
	b := e.b
	var other int64
	if err := st.findHash.QueryRowContext(ctx, e.hash).Scan(&other); err == nil && other != id {
		return fmt.Errorf("it would become the same as run %d", other)
	}
	if _, err := st.tx.ExecContext(ctx, "UPDATE runs SET hash = ?, status = ?, error = ? WHERE id = ?", e.hash, string(b.Status), b.Error, id); err != nil {
		return fmt.Errorf("update run: %w", err)
	}
	if _, err := st.tx.ExecContext(ctx, "UPDATE bundles SET encoding = ?, data = ? WHERE run_id = ?", e.encoding, e.data, id); err != nil {
		return fmt.Errorf("update bundle: %w", err)
	}
	if _, err := st.tx.ExecContext(ctx, "DELETE FROM samples WHERE run_id = ?", id); err != nil {
		return fmt.Errorf("delete samples: %w", err)
	}
	return insertSamples(ctx, st, id, e)
}
