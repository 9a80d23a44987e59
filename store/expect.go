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
	if err := recordExpectations(ctx, tx, campaign, site, refs, db.now()); err != nil {
		return fmt.Errorf("record the expectations of %s: %w", campaign, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record the expectations of %s: %w", campaign, err)
	}
	return nil
}

// recordExpectations replaces the expectations of campaign from site by
// refs, recorded at recorded.
func recordExpectations(ctx context.Context, tx *sql.Tx, campaign, site string, refs []expect.Ref, recorded time.Time) error {
	if _, err := tx.ExecContext(ctx, "DELETE FROM expectations WHERE campaign = ? AND site = ?", campaign, site); err != nil {
		return err
	}
	at := formatTime(recorded)
	for i, r := range refs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO expectations (campaign, site, seq, name, benchmark, metric, at, bound, selection, system, source, recorded)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, campaign, site, i, r.Name, r.Benchmark, r.Metric, r.At, r.Bound, r.Where, r.System, r.Source, at); err != nil {
			return err
		}
	}
	return nil
}

// Expectations returns the expectations recorded for campaign, or for
// every campaign when it is "", by campaign name: the campaign's own in
// their order, then each site profile's (by profile name).
func (db *DB) Expectations(ctx context.Context, campaign string) ([]Expectations, error) {
	var out []Expectations
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		sets, err := loadExpectationSets(ctx, tx, "? = '' OR e.campaign = ?", campaign, campaign)
		for _, s := range sets {
			if len(out) == 0 || out[len(out)-1].Campaign != s.Campaign {
				out = append(out, Expectations{Campaign: s.Campaign, Recorded: s.Recorded})
			}
			out[len(out)-1].Refs = append(out[len(out)-1].Refs, s.Refs...)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("query the expectations of %s: %w", db.path, err)
	}
	return out, nil
}

// expectationSet is the expectations of a campaign recorded from one site
// ("" for the campaign's own).
type expectationSet struct {
	Campaign, Site string
	Recorded       time.Time
	Refs           []expect.Ref
}

// loadExpectationSets returns the expectation sets (table alias e) that
// cond selects, by campaign, then site, each in its order.
func loadExpectationSets(ctx context.Context, q queryer, cond string, args ...any) ([]expectationSet, error) {
	var out []expectationSet
	var c, site string
	var recorded sql.NullString
	var r expect.Ref
	err := eachRow(ctx, q, `SELECT e.campaign, e.site, e.name, e.benchmark, e.metric, e.at, e.bound, e.selection, e.system, e.source, e.recorded
		FROM expectations e WHERE `+cond+` ORDER BY e.campaign, e.site, e.seq`, args,
		[]any{&c, &site, &r.Name, &r.Benchmark, &r.Metric, &r.At, &r.Bound, &r.Where, &r.System, &r.Source, &recorded}, func() error {
			if n := len(out); n == 0 || out[n-1].Campaign != c || out[n-1].Site != site {
				t, err := parseTime(recorded)
				if err != nil {
					return err
				}
				out = append(out, expectationSet{Campaign: c, Site: site, Recorded: t})
			}
			out[len(out)-1].Refs = append(out[len(out)-1].Refs, r)
			return nil
		})
	return out, err
}
