package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sbench/sbench/results"
)

// RecordJob archives a submitted Slurm job of a campaign and returns its
// archive id. SlurmID and Campaign are required; a zero Submitted or Updated
// is stamped with the current time. Recording the same (campaign, Slurm id)
// twice wraps ErrExists.
func (db *DB) RecordJob(ctx context.Context, j Job) (int64, error) {
	if j.SlurmID == "" {
		return 0, errors.New("record job: slurm id is empty")
	}
	if j.Campaign == "" {
		return 0, fmt.Errorf("record job %s: campaign is empty", j.SlurmID)
	}
	now := db.now()
	if j.Submitted.IsZero() {
		j.Submitted = now
	}
	if j.Updated.IsZero() {
		j.Updated = now
	}
	for _, t := range []struct {
		name string
		err  error
	}{{"submitted", checkTime(j.Submitted)}, {"start", checkTime(j.Start)}, {"end", checkTime(j.End)}, {"updated", checkTime(j.Updated)}} {
		if t.err != nil {
			return 0, fmt.Errorf("record job %s of campaign %s: %s: %w", j.SlurmID, j.Campaign, t.name, t.err)
		}
	}
	variants, err1 := jsonOrNull(j.Variants, len(j.Variants) == 0)
	plan, err2 := jsonOrNull(j.Plan, j.Plan == nil)
	after, err3 := jsonOrNull(j.After, len(j.After) == 0)
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, fmt.Errorf("record job %s of campaign %s: %w", j.SlurmID, j.Campaign, err)
	}
	r, err := db.w.ExecContext(ctx, `INSERT INTO jobs (slurm_id, campaign, variants, name, script, results_dir, submitted, state, reason, exit_code, start_time, end_time, nodelist, updated,
	plan, output, error, restarts, intent, submission, after_ok)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		j.SlurmID, j.Campaign, variants, j.Name, j.Script, j.ResultsDir, formatTime(j.Submitted),
		j.State, j.Reason, j.ExitCode, formatTime(j.Start), formatTime(j.End), j.NodeList, formatTime(j.Updated),
		plan, j.Output, j.Error, j.Restarts, j.Intent, j.Submission, after)
	if isUniqueViolation(err) {
		return 0, fmt.Errorf("record job %s of campaign %s: %w", j.SlurmID, j.Campaign, ErrExists)
	}
	if err != nil {
		return 0, fmt.Errorf("record job %s of campaign %s: %w", j.SlurmID, j.Campaign, err)
	}
	id, err := r.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("record job %s of campaign %s: %w", j.SlurmID, j.Campaign, err)
	}
	return id, nil
}

// UpdateJob records what Slurm now says of a job, found by SlurmID within
// Campaign (or across campaigns when Campaign is empty and the id is
// unambiguous). State, Reason and ExitCode are set as given; Start, End and
// NodeList only when known, so that a partial view (squeue on a job that
// sacct already described) never erases what was learnt. A zero Updated is
// stamped with the current time. An unknown job wraps ErrNotFound.
func (db *DB) UpdateJob(ctx context.Context, j Job) error {
	name := j.SlurmID
	if j.Campaign != "" {
		name += " of campaign " + j.Campaign
	}
	if j.SlurmID == "" {
		return errors.New("update job: slurm id is empty")
	}
	if j.Updated.IsZero() {
		j.Updated = db.now()
	}
	for _, t := range []struct {
		name string
		err  error
	}{{"start", checkTime(j.Start)}, {"end", checkTime(j.End)}, {"updated", checkTime(j.Updated)}} {
		if t.err != nil {
			return fmt.Errorf("update job %s: %s: %w", name, t.name, t.err)
		}
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("update job %s: %w", name, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM jobs WHERE slurm_id = ? AND (? = '' OR campaign = ?)",
		j.SlurmID, j.Campaign, j.Campaign).Scan(&n); err != nil {
		return fmt.Errorf("update job %s: %w", name, err)
	}
	switch {
	case n == 0:
		return fmt.Errorf("update job %s: %w", name, ErrNotFound)
	case n > 1:
		return fmt.Errorf("update job %s: %d campaigns have a job with this id; name the campaign", name, n)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET state = ?, reason = ?, exit_code = ?,
	start_time = coalesce(?, start_time), end_time = coalesce(?, end_time),
	nodelist = coalesce(nullif(?, ''), nodelist), updated = ?, restarts = max(restarts, ?)
WHERE slurm_id = ? AND (? = '' OR campaign = ?)`,
		j.State, j.Reason, j.ExitCode, formatTime(j.Start), formatTime(j.End), j.NodeList, formatTime(j.Updated), j.Restarts,
		j.SlurmID, j.Campaign, j.Campaign); err != nil {
		return fmt.Errorf("update job %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("update job %s: %w", name, err)
	}
	return nil
}

// Jobs returns the jobs of campaign ("" for every campaign), ordered by
// submission time, then id.
func (db *DB) Jobs(ctx context.Context, campaign string) ([]Job, error) {
	var out []Job
	var j Job
	var variants, submitted, start, end, updated, plan, after sql.NullString
	err := eachRow(ctx, db.r, `SELECT id, slurm_id, campaign, variants, name, script, results_dir, submitted, state, reason, exit_code, start_time, end_time, nodelist, updated,
	plan, output, error, restarts, intent, submission, after_ok
FROM jobs WHERE ? = '' OR campaign = ? ORDER BY submitted, id`, []any{campaign, campaign},
		[]any{&j.ID, &j.SlurmID, &j.Campaign, &variants, &j.Name, &j.Script, &j.ResultsDir,
			&submitted, &j.State, &j.Reason, &j.ExitCode, &start, &end, &j.NodeList, &updated,
			&plan, &j.Output, &j.Error, &j.Restarts, &j.Intent, &j.Submission, &after}, func() error {
			j.Variants, j.Plan, j.After = nil, nil, nil // a NULL leaves them as the last row had them
			if err := unmarshalNull(variants, &j.Variants); err != nil {
				return fmt.Errorf("job %d: variants: %w", j.ID, err)
			}
			if err := unmarshalNull(plan, &j.Plan); err != nil {
				return fmt.Errorf("job %d: plan: %w", j.ID, err)
			}
			if err := unmarshalNull(after, &j.After); err != nil {
				return fmt.Errorf("job %d: after_ok: %w", j.ID, err)
			}
			for _, t := range []struct {
				dst *time.Time
				s   sql.NullString
			}{{&j.Submitted, submitted}, {&j.Start, start}, {&j.End, end}, {&j.Updated, updated}} {
				var err error
				if *t.dst, err = parseTime(t.s); err != nil {
					return fmt.Errorf("job %d: %w", j.ID, err)
				}
			}
			out = append(out, j)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("query jobs of %s: %w", db.path, err)
	}
	return out, nil
}

// ResolveIntent records the Slurm id of a job recorded before sbatch gave
// it one: the row with intent in campaign gets slurmID and forgets its
// intent. An unknown intent wraps ErrNotFound.
func (db *DB) ResolveIntent(ctx context.Context, campaign, intent, slurmID string) error {
	if intent == "" || slurmID == "" {
		return errors.New("resolve job intent: intent and slurm id are required")
	}
	r, err := db.w.ExecContext(ctx, `UPDATE jobs SET slurm_id = ?, intent = '', updated = ? WHERE campaign = ? AND intent = ?`,
		slurmID, formatTime(db.now()), campaign, intent)
	if isUniqueViolation(err) {
		return fmt.Errorf("resolve job intent %s: job %s of campaign %s: %w", intent, slurmID, campaign, ErrExists)
	}
	if err != nil {
		return fmt.Errorf("resolve job intent %s: %w", intent, err)
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return fmt.Errorf("resolve job intent %s of campaign %s: %w", intent, campaign, ErrNotFound)
	}
	return nil
}

// DropIntent forgets a job recorded before sbatch, which Slurm never
// accepted (sbatch refused it, or it is found nowhere).
func (db *DB) DropIntent(ctx context.Context, campaign, intent string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM jobs WHERE campaign = ? AND intent = ? AND intent != ''`, campaign, intent); err != nil {
		return fmt.Errorf("drop job intent %s: %w", intent, err)
	}
	return nil
}

// JobRuns lists the runs of a job, its array tasks' included (the runner
// names an array task by the array's id and the task's index): what the
// planned steps are checked against. Runs carry their id, step, array
// index, restart and status only.
func (db *DB) JobRuns(ctx context.Context, campaign, slurmID string) ([]Run, error) {
	var runs []Run
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		r := Run{Campaign: campaign, JobID: slurmID}
		var status string
		return eachRow(ctx, tx, `SELECT id, step, array_index, restart, status FROM runs
WHERE campaign = ? AND job_id = ? ORDER BY id`, []any{campaign, slurmID}, []any{&r.ID, &r.Step, &r.ArrayIndex, &r.Restart, &status}, func() error {
			r.Status = results.Status(status)
			runs = append(runs, r)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query runs of job %s of %s: %w", slurmID, db.path, err)
	}
	return runs, nil
}
