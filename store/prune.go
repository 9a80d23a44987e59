package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// PrunePlan is what pruning the runs of a filter would do: nothing is
// deleted until Prune is called with the plan's ids, so that a caller can
// show the list first.
type PrunePlan struct {
	Delete []Run     // runs that would be deleted, in Runs order
	Kept   []KeptRun // runs selected but held by a baseline, which prune keeps
}

// KeptRun is a run prune keeps because baselines refer to it.
type KeptRun struct {
	Run
	Baselines []string
}

// IDs returns the ids of the runs the plan deletes.
func (p PrunePlan) IDs() []int64 {
	ids := make([]int64, len(p.Delete))
	for i, r := range p.Delete {
		ids[i] = r.ID
	}
	return ids
}

// PlanPrune returns which of the runs f selects Prune may delete. A run a
// baseline holds is never deleted: delete the baseline first.
func (db *DB) PlanPrune(ctx context.Context, f Filter) (PrunePlan, error) {
	var plan PrunePlan
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		runs, err := loadRuns(ctx, tx, f, RunLabels)
		if err != nil {
			return err
		}
		held, err := baselinesOf(ctx, tx, PrunePlan{Delete: runs}.IDs())
		if err != nil {
			return err
		}
		for _, r := range runs {
			if names := held[r.ID]; len(names) > 0 {
				plan.Kept = append(plan.Kept, KeptRun{Run: r, Baselines: names})
			} else {
				plan.Delete = append(plan.Delete, r)
			}
		}
		return nil
	})
	if err != nil {
		return PrunePlan{}, fmt.Errorf("plan prune of %s: %w", db.path, err)
	}
	return plan, nil
}

// PruneResult says what Prune deleted.
type PruneResult struct {
	Runs  int // runs deleted, with their bundles, samples, scalars and checks
	Hosts int // host descriptions no remaining run refers to
}

// Prune deletes the runs ids in one transaction, with everything stored for
// them, and the host descriptions that no other run shares. It refuses (and
// deletes nothing) if a baseline holds one of them; ids not in the archive
// are ignored, so that running the same prune twice is harmless.
func (db *DB) Prune(ctx context.Context, ids []int64) (PruneResult, error) {
	if len(ids) == 0 {
		return PruneResult{}, nil
	}
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune %s: %w", db.path, err)
	}
	defer tx.Rollback()
	held, err := baselinesOf(ctx, tx, ids)
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune %s: %w", db.path, err)
	}
	if len(held) > 0 {
		var msgs []string
		for _, id := range ids {
			if names := held[id]; len(names) > 0 {
				msgs = append(msgs, fmt.Sprintf("run %d (baseline %s)", id, strings.Join(names, ", ")))
			}
		}
		return PruneResult{}, fmt.Errorf("prune %s: baselines hold %s; delete the baselines first", db.path, strings.Join(msgs, ", "))
	}
	idsJSON, _ := json.Marshal(ids)
	res, err := tx.ExecContext(ctx, "DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?))", string(idsJSON))
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune %s: %w", db.path, err)
	}
	var out PruneResult
	n, _ := res.RowsAffected()
	out.Runs = int(n)
	// NOT IN builds one temporary index of run_hosts' host ids; a
	// correlated NOT EXISTS would scan run_hosts once per host.
	res, err = tx.ExecContext(ctx, "DELETE FROM hosts WHERE id NOT IN (SELECT host_id FROM run_hosts)")
	if err != nil {
		return PruneResult{}, fmt.Errorf("prune %s: hosts: %w", db.path, err)
	}
	n, _ = res.RowsAffected()
	out.Hosts = int(n)
	if err := tx.Commit(); err != nil {
		return PruneResult{}, fmt.Errorf("prune %s: %w", db.path, err)
	}
	return out, nil
}

// VacuumResult says what Vacuum reclaimed: the archive's size (its pages,
// what SQLite's file holds once its log is checkpointed) before and after.
type VacuumResult struct {
	Before, After int64
}

// Free returns how many bytes of the archive hold nothing: pages freed by
// deletes, which SQLite reuses for new rows but does not give back to the
// file system until Vacuum.
func (db *DB) Free(ctx context.Context) (int64, error) {
	var free int64
	if err := db.w.QueryRowContext(ctx, "SELECT f.freelist_count * s.page_size FROM pragma_freelist_count f, pragma_page_size s").Scan(&free); err != nil {
		return 0, fmt.Errorf("free space of %s: %w", db.path, err)
	}
	return free, nil
}

// Vacuum gives the space deleted runs held back to the file system: SQLite
// rewrites the archive without its free pages (VACUUM, which needs as much
// free disk as the archive's size while it runs) and the write-ahead log,
// which the rewrite filled, is emptied. Readers may read meanwhile; other
// writers wait.
func (db *DB) Vacuum(ctx context.Context) (VacuumResult, error) {
	var res VacuumResult
	size := func() (int64, error) {
		var n int64
		err := db.w.QueryRowContext(ctx, "SELECT c.page_count * s.page_size FROM pragma_page_count c, pragma_page_size s").Scan(&n)
		return n, err
	}
	var err error
	if res.Before, err = size(); err != nil {
		return res, fmt.Errorf("vacuum %s: %w", db.path, err)
	}
	if _, err := db.w.ExecContext(ctx, "VACUUM"); err != nil {
		return res, fmt.Errorf("vacuum %s: %w (the runs are deleted; to reclaim their space later, free some disk and run sqlite3 %s VACUUM)", db.path, err, db.path)
	}
	if _, err := db.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return res, fmt.Errorf("vacuum %s: checkpoint: %w", db.path, err)
	}
	if res.After, err = size(); err != nil {
		return res, fmt.Errorf("vacuum %s: %w", db.path, err)
	}
	return res, nil
}
