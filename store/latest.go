package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sbench/sbench/results"
)

// LatestRun returns the newest ok run that f selects and that ran one of
// kernels (native kernels or parsers; any when none is given): the latest
// start, then the highest id. It wraps ErrNotFound when there is none.
// sbench screen starts from the newest matrix run this way.
func (db *DB) LatestRun(ctx context.Context, f Filter, kernels ...string) (Run, error) {
	where, args := f.where()
	conds := []string{"r.status = ?"}
	args = append(args, string(results.StatusOK))
	if len(kernels) > 0 {
		list, _ := json.Marshal(kernels)
		conds = append(conds, "r.kernel IN (SELECT value FROM json_each(?))")
		args = append(args, string(list))
	}
	where = and(where, strings.Join(conds, " AND "))
	var run Run
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, "SELECT r.id FROM runs r"+where+" ORDER BY r.start_time DESC, r.id DESC LIMIT 1", args...).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no ok run of %s: %w", strings.Join(kernels, ", "), ErrNotFound)
		}
		if err != nil {
			return err
		}
		runs, err := loadRuns(ctx, tx, Filter{RunIDs: []int64{id}}, RunAll)
		if err != nil {
			return err
		}
		if len(runs) != 1 {
			return fmt.Errorf("run %d: %w", id, ErrNotFound)
		}
		run = runs[0]
		return nil
	})
	if err != nil {
		return Run{}, fmt.Errorf("query the latest run of %s: %w", db.path, err)
	}
	return run, nil
}
