package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sbench/sbench/expect"
)

// Expectations are a campaign's acceptance references as the archive
// recorded them, and when.
type Expectations struct {
	Campaign string
	Recorded time.Time
	Refs     []expect.Ref
}

// SetExpectations records the expectations of campaign that come from
// site ("" for the campaign's own, else a site profile's name),
// replacing those recorded from it before: a campaign's own expectations
// are those it was last submitted or run with, and a profile's those of
// the campaign's last run under it, whatever ran under another profile
// since. No refs forgets them.
func (db *DB) SetExpectations(ctx context.Context, campaign, site string, refs []expect.Ref) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record the expectations of %s: %w", campaign, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "DELETE FROM expectations WHERE campaign = ? AND site = ?", campaign, site); err != nil {
		return fmt.Errorf("record the expectations of %s: %w", campaign, err)
	}
	now := formatTime(db.now())
	for i, r := range refs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO expectations (campaign, site, seq, name, benchmark, metric, at, bound, selection, system, source, recorded)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, campaign, site, i, r.Name, r.Benchmark, r.Metric, r.At, r.Bound, r.Where, r.System, r.Source, now); err != nil {
			return fmt.Errorf("record the expectations of %s: %w", campaign, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record the expectations of %s: %w", campaign, err)
	}
	return nil
}

// Expectations returns the expectations recorded for campaign, or for
// every campaign when it is "", by campaign name: the campaign's own in
// their order, then each site profile's (by profile name).
func (db *DB) Expectations(ctx context.Context, campaign string) ([]Expectations, error) {
	var out []Expectations
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT campaign, name, benchmark, metric, at, bound, selection, system, source, recorded
			FROM expectations WHERE ? = '' OR campaign = ? ORDER BY campaign, site, seq`, campaign, campaign)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c string
			var recorded sql.NullString
			var r expect.Ref
			if err := rows.Scan(&c, &r.Name, &r.Benchmark, &r.Metric, &r.At, &r.Bound, &r.Where, &r.System, &r.Source, &recorded); err != nil {
				return err
			}
			if len(out) == 0 || out[len(out)-1].Campaign != c {
				t, err := parseTime(recorded)
				if err != nil {
					return err
				}
				out = append(out, Expectations{Campaign: c, Recorded: t})
			}
			out[len(out)-1].Refs = append(out[len(out)-1].Refs, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("query the expectations of %s: %w", db.path, err)
	}
	return out, nil
}
