package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// slurmClient is the seam tests replace.
var slurmClient = func() *slurm.Client { return &slurm.Client{R: slurm.Exec{}} }

func newSubmitCmd(e *env) *cobra.Command {
	var tmpl string
	c := &cobra.Command{
		Use:   "submit CAMPAIGN.toml",
		Short: "Render the campaign and submit its jobs with sbatch",
		Long: `Submit renders the campaign's sbatch scripts into RESULTS/scripts/TIMESTAMP/,
creates the results directory, submits every job with "sbatch --parsable" from
the current directory (a job that waits for another benchmark's gets
--dependency=afterok on their ids), records each job (Slurm id, campaign, variant, submit
time) in the archive and prints the job ids, one per line.

Every job gets its own secret token in its environment (never in the script):
the runner's ranks use it to authenticate each other. sbench's own directory is
put first in the job's PATH so that the sbench-runner beside it is found.`,
		Example: `  sbench submit examples/quickstart.toml
  sbench submit site.toml --template site.tmpl && sbench status --wait --ingest`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			camp, err := loadCampaign(args[0])
			if err != nil {
				return err
			}
			r, err := newRenderer(camp, tmpl)
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
			scriptDir := filepath.Join(resultsDir, "scripts", time.Now().UTC().Format("20060102T150405.000"))
			plan, err := camp.Plan()
			if err != nil {
				return err
			}
			paths, err := r.RenderDir(plan, scriptDir)
			if err != nil {
				return err
			}
			client := slurmClient()
			ctx := cmd.Context()
			ids := make([]string, len(plan.Jobs))
			for i, j := range plan.Jobs {
				token, err := newToken()
				if err != nil {
					return err
				}
				env := append(os.Environ(), "SBENCH_TOKEN="+token, "PATH="+pathWithSelf(os.Getenv("PATH")))
				var sbatchArgs []string
				if len(j.DependsOn) > 0 {
					deps := make([]string, len(j.DependsOn))
					for k, d := range j.DependsOn {
						deps[k] = ids[d]
					}
					sbatchArgs = append(sbatchArgs, "--dependency=afterok:"+strings.Join(deps, ":"))
				}
				id, err := client.Submit(ctx, paths[i], slurm.SubmitOptions{Dir: cwd, Env: env, Args: sbatchArgs})
				if err != nil {
					if i > 0 {
						return fmt.Errorf("submit %s: %w (%d job(s) before it were submitted and recorded)", filepath.Base(paths[i]), err, i)
					}
					return fmt.Errorf("submit %s: %w", filepath.Base(paths[i]), err)
				}
				ids[i] = id
				_, err = db.RecordJob(ctx, store.Job{SlurmID: id, Campaign: camp.Campaign.Name, Variants: j.Variants,
					Name: j.JobName, Script: paths[i], ResultsDir: resultsDir, Submitted: time.Now(), State: "PENDING"})
				if err != nil {
					return fmt.Errorf("job %s was submitted but could not be recorded: %w", id, err)
				}
				fmt.Fprintln(e.stdout, id)
			}
			fmt.Fprintf(e.stderr, "%d job(s) of campaign %s submitted; follow them with: sbench status --campaign %s --wait --ingest\n",
				len(plan.Jobs), camp.Campaign.Name, camp.Campaign.Name)
			return nil
		},
	}
	c.Flags().StringVar(&tmpl, "template", "", "sbatch template replacing the embedded one")
	return c
}

// variantsText joins a job's variants for tables.
func variantsText(j store.Job) string { return strings.Join(j.Variants, " ") }
