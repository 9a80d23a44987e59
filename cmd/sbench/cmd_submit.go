package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/ingest"
	"github.com/sbench/sbench/jobs"
	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// slurmClient is the seam tests replace.
var slurmClient = func() *slurm.Client { return &slurm.Client{R: slurm.Exec{}} }

// submitOptions are submit's flags.
type submitOptions struct {
	template, site string
}

func newSubmitCmd(e *env) *cobra.Command {
	var o submitOptions
	c := &cobra.Command{
		Use:   "submit CAMPAIGN.toml",
		Short: "Render the campaign and submit its jobs with sbatch",
		Long: `Submit renders the campaign's sbatch scripts into RESULTS/scripts/TIMESTAMP/,
creates the results directory, submits every job with "sbatch --parsable" from
the current directory (a job that waits for another benchmark's gets
--dependency=afterok on their ids), records each job (Slurm id, campaign, variants, submit
time, the steps it is to run) in the archive and prints the job ids, one per
line.

Nothing Slurm accepts is unknown to the archive: each job is recorded before
sbatch runs, sbatch gets --comment=sbench:CAMPAIGN:ID, and an interrupt
(Ctrl-C, SIGTERM) stops the submission only between two jobs — the one being
submitted is submitted and recorded first. If sbench is killed outright
while sbatch runs, "sbench status" finds the job by that comment.

Every job gets its own secret token in its environment (never in the script):
the runner's ranks use it to authenticate each other. sbench's own directory is
put first in the job's PATH so that the sbench-runner beside it is found.

A site profile (--site FILE, $SBENCH_SITE or ~/.config/sbench/site.toml;
see docs/site-profile.md) gives the cluster's defaults, which the
campaign's own settings override; every run is labelled with the profile's
name and hash (site_profile), its system, link_rate and rpeak.`,
		Example: `  sbench submit examples/quickstart.toml
  sbench submit site.toml --template site.tmpl && sbench status --wait --ingest`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSubmit(cmd.Context(), e, o, args)
		},
	}
	c.Flags().StringVar(&o.template, "template", "", "sbatch template replacing the embedded one")
	c.Flags().StringVar(&o.site, "site", "", siteFlagUsage)
	return c
}

// runSubmit renders the campaign of args[0] and submits its jobs, each
// recorded in the archive before sbatch runs.
func runSubmit(ctx context.Context, e *env, o submitOptions, args []string) error {
	camp, err := loadCampaignSite(e, args[0], o.site)
	if err != nil {
		return err
	}
	r, err := newRenderer(camp, o.template)
	if err != nil {
		return err
	}
	db, err := openDB(e)
	if err != nil {
		return err
	}
	defer db.Close()
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	resultsDir := filepath.Join(cwd, camp.ResultsDir())
	scriptDir := filepath.Join(resultsDir, "scripts", time.Now().UTC().Format(ingest.ScriptsStamp))
	submission := newSubmissionID("submit")
	plan, err := camp.Plan()
	if err != nil {
		return err
	}
	paths, err := r.RenderDir(plan, scriptDir)
	if err != nil {
		return err
	}
	if err := recordExpectations(ctx, db, camp); err != nil {
		return err
	}
	client := slurmClient()
	// What Slurm accepted must be in the archive: each job is
	// recorded (with its plan) before sbatch, under an intent that
	// sbatch passes on as the job's comment, and sbatch and the
	// recording run to the end whatever signal arrives. A signal
	// stops the submission between jobs; sbench status finds a job
	// whose id was never recorded (a kill -9 mid-sbatch) by its
	// comment.
	keep := context.WithoutCancel(ctx)
	ids := make([]string, len(plan.Jobs))
	for i, j := range plan.Jobs {
		if ctx.Err() != nil {
			return fmt.Errorf("submit interrupted: %d of %d job(s) submitted and recorded, the rest not submitted: %w", i, len(plan.Jobs), ctx.Err())
		}
		token := newToken()
		env := append(os.Environ(), "SBENCH_TOKEN="+token, "PATH="+pathWithSelf(os.Getenv("PATH")))
		var sbatchArgs, deps []string
		if len(j.DependsOn) > 0 {
			deps = make([]string, len(j.DependsOn))
			for k, d := range j.DependsOn {
				deps[k] = ids[d]
			}
			sbatchArgs = append(sbatchArgs, "--dependency=afterok:"+strings.Join(deps, ":"))
		}
		intent := "sbench:" + camp.Campaign.Name + ":" + token[:16]
		sbatchArgs = append(sbatchArgs, "--comment="+intent)
		out, errFile := camp.OutputFiles(j)
		job := store.Job{SlurmID: "intent-" + token[:16], Intent: intent, Campaign: camp.Campaign.Name, Variants: j.Variants,
			Name: j.JobName, Script: paths[i], ResultsDir: resultsDir, Submitted: time.Now(), State: "SUBMITTING",
			Plan: jobs.PlannedSteps(camp, j), Output: absUnder(cwd, out), Error: absUnder(cwd, errFile),
			Submission: submission, After: deps}
		critical.Add(1)
		id, err := jobs.Submit(keep, db, client, job, paths[i], slurm.SubmitOptions{Dir: cwd, Env: env, Args: sbatchArgs})
		critical.Done()
		if err != nil {
			if i > 0 {
				return fmt.Errorf("submit %s: %w (%d job(s) before it were submitted and recorded)", filepath.Base(paths[i]), err, i)
			}
			return fmt.Errorf("submit %s: %w", filepath.Base(paths[i]), err)
		}
		ids[i] = id
		fmt.Fprintln(e.stdout, id)
	}
	fmt.Fprintf(e.stderr, "%d job(s) of campaign %s submitted; follow them with: sbench status --campaign %s --wait --ingest\n",
		len(plan.Jobs), camp.Campaign.Name, camp.Campaign.Name)
	return nil
}

// absUnder makes a relative output pattern absolute under dir, where sbatch
// runs, so that status finds the file from anywhere; "" stays "".
func absUnder(dir, pattern string) string {
	if pattern == "" || filepath.IsAbs(pattern) {
		return pattern
	}
	return filepath.Join(dir, pattern)
}

// variantsText joins a job's variants for tables.
func variantsText(j store.Job) string { return strings.Join(j.Variants, " ") }
