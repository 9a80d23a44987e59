package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
)

// SampleAxis is a metric and an x that some samples have: what a history
// can follow.
type SampleAxis struct {
	Metric string
	X      *float64 // nil for samples with no x
	XUnit  string
}

// SampleAxes returns the metrics and x values the samples of the runs ids
// have, ordered by metric, then x (none first): what a view that follows a
// few of them (the site's key sizes) needs to know before it reads only
// those samples with SamplesAt.
func (db *DB) SampleAxes(ctx context.Context, ids []int64) ([]SampleAxis, error) {
	list, _ := json.Marshal(ids)
	var out []SampleAxis
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		var a SampleAxis
		var x sql.NullFloat64
		return eachRow(ctx, tx, `SELECT DISTINCT metric, x, x_unit FROM samples
WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY metric, x, x_unit`, []any{string(list)}, []any{&a.Metric, &x, &a.XUnit}, func() error {
			a.X = nullFloat(x)
			out = append(out, a)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query sample axes of %s: %w", db.path, err)
	}
	return out, nil
}

// SamplesAt returns the samples of the runs ids that lie on one of axes
// (a metric at an x, or with no x), in Samples' order: one pass over the
// runs' samples for all of them.
func (db *DB) SamplesAt(ctx context.Context, ids []int64, axes []SampleAxis) ([]Sample, error) {
	if len(axes) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(ids)
	args := []any{string(list)}
	var conds []string
	for _, a := range axes {
		if a.X == nil {
			conds = append(conds, "(s.metric = ? AND s.x IS NULL)")
			args = append(args, a.Metric)
			continue
		}
		conds = append(conds, "(s.metric = ? AND s.x = ?)")
		args = append(args, a.Metric, *a.X)
	}
	var out []Sample
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+sampleColumns(true)+` FROM samples s
WHERE s.run_id IN (SELECT value FROM json_each(?)) AND (`+strings.Join(conds, " OR ")+`) ORDER BY s.run_id, s.metric, s.x, s.repeat, s.seq`, args...)
		if err != nil {
			return err
		}
		return decodeSamples(rows, true, interner{}, func(s Sample) error {
			out = append(out, s)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query samples of %s: %w", db.path, err)
	}
	return out, nil
}
