package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// Submit records job (its intent), submits its script and records the
// id Slurm gave it; a job sbatch refused is forgotten again.
func Submit(ctx context.Context, db *store.DB, client *slurm.Client, job store.Job, script string, o slurm.SubmitOptions) (string, error) {
	if _, err := db.RecordJob(ctx, job); err != nil {
		return "", fmt.Errorf("record the job before submitting it: %w", err)
	}
	id, err := client.Submit(ctx, script, o)
	if err != nil {
		if derr := db.DropIntent(ctx, job.Campaign, job.Intent); derr != nil {
			err = errors.Join(err, derr)
		}
		return "", err
	}
	if err := db.ResolveIntent(ctx, job.Campaign, job.Intent, id); err != nil {
		return "", fmt.Errorf("job %s was submitted but its id could not be recorded (sbench status finds it by its comment %s): %w", id, job.Intent, err)
	}
	return id, nil
}

// ResolveIntents finds the Slurm id of the jobs of campaign ("": every
// campaign) recorded before sbatch answered (an interrupted Submit) by the
// comment sbatch gave them, and says what it found on w.
func ResolveIntents(ctx context.Context, db *store.DB, client *slurm.Client, campaign string, w io.Writer) error {
	js, err := db.Jobs(ctx, campaign)
	if err != nil {
		return err
	}
	for _, j := range js {
		if j.Intent == "" {
			continue
		}
		id, found, err := client.FindByComment(ctx, j.Name, j.Intent)
		if err != nil {
			return err
		}
		if !found {
			if j.State != slurm.StateUnknown {
				j.State, j.Reason = slurm.StateUnknown, "its submission was interrupted and Slurm has no job with comment "+j.Intent
				if err := db.UpdateJob(ctx, j); err != nil {
					return err
				}
			}
			fmt.Fprintf(w, "job %s of campaign %s: submission interrupted, and Slurm knows no job with comment %s (never accepted, or ended long ago)\n", j.Name, j.Campaign, j.Intent)
			continue
		}
		if err := db.ResolveIntent(ctx, j.Campaign, j.Intent, id); err != nil {
			return err
		}
		fmt.Fprintf(w, "job %s of campaign %s: its submission was interrupted; Slurm accepted it as job %s\n", j.Name, j.Campaign, id)
	}
	return nil
}
