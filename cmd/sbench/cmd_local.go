package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/runner"
	"github.com/sbench/sbench/store"
)

func newLocalCmd(e *env) *cobra.Command {
	var ranks int
	var verbose bool
	c := &cobra.Command{
		Use:   "local CAMPAIGN.toml [-n RANKS]",
		Short: "Run a campaign on this machine, without Slurm",
		Long: `Local runs every job of a campaign on this machine: each step starts the
runner's ranks as local processes with the SLURM_* variables srun would set
(fake nodes local1, local2 …, block distribution, ranks talking over
127.0.0.1), then ingests the bundles so that "sbench report" can run at once.
Jobs are recorded in the archive like submitted ones, with job ids
local-TIMESTAMP-N.

-n sets the number of ranks of every step, spread over the variant's nodes.`,
		Example: `  sbench local examples/quickstart.toml
  sbench local examples/quickstart.toml -n 4 --db /tmp/try.db && sbench report --db /tmp/try.db -o try.pdf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ranks < 0 {
				return usagef("local: -n %d: want a positive rank count", ranks)
			}
			camp, err := loadCampaign(args[0])
			if err != nil {
				return err
			}
			runnerPath, err := findRunner(camp.RunnerPath())
			if err != nil {
				return err
			}
			db, err := openDB(e)
			if err != nil {
				return err
			}
			defer db.Close()
			ctx := cmd.Context()
			resultsDir, err := filepath.Abs(camp.ResultsDir())
			if err != nil {
				return err
			}
			if err := os.MkdirAll(resultsDir, 0o755); err != nil {
				return err
			}
			plan := camp.Plan()
			stamp := time.Now().UTC().Format("20060102T150405")
			var total ingestSummary
			var failedSteps []string
			for _, j := range plan.Jobs {
				jobID := fmt.Sprintf("local-%s-%d", stamp, j.Index+1)
				token, err := newToken()
				if err != nil {
					return err
				}
				job := store.Job{SlurmID: jobID, Campaign: camp.Campaign.Name, Variants: []string{j.Variant.Name},
					Name: j.JobName, ResultsDir: resultsDir, Submitted: time.Now(), State: "RUNNING", Start: time.Now()}
				if job.ID, err = db.RecordJob(ctx, job); err != nil {
					return err
				}
				job.State, job.ExitCode = "COMPLETED", "0:0"
				var nodes []string
				for _, st := range j.Steps {
					n, perNode := st.Ranks, st.PerNode
					if ranks > 0 {
						n = ranks
						perNode = (n + st.Nodes - 1) / st.Nodes
					}
					nodeCount := (n + perNode - 1) / perNode
					nodes = nodes[:0]
					for i := 1; i <= nodeCount; i++ {
						nodes = append(nodes, "local"+strconv.Itoa(i))
					}
					fmt.Fprintf(e.stderr, "job %s (%s) step %d %s: %d rank(s) on %d local node(s)\n",
						jobID, j.Variant.Name, st.Index, st.Benchmark.Name, n, nodeCount)
					var log bytes.Buffer
					var out io.Writer = &log
					if verbose {
						out = io.MultiWriter(&log, e.stderr)
					}
					env := []string{"SBENCH_TOKEN=" + token}
					if camp.Runner.Bind == "" {
						env = append(env, "SBENCH_BIND=127.0.0.1")
					}
					step := runner.LocalStep{
						Runner: runnerPath, Args: st.RunnerArgs, Nodes: append([]string(nil), nodes...),
						TasksPerNode: perNode, Ranks: n, JobID: jobID, StepID: strconv.Itoa(st.Index),
						JobName: j.JobName, Env: env, Stdout: out, Stderr: out,
					}
					if err := step.Run(ctx); err != nil {
						if ctx.Err() != nil {
							job.State, job.Reason = "CANCELLED", "interrupted"
							job.End = time.Now()
							db.UpdateJob(ctx, job)
							return ctx.Err()
						}
						job.State, job.ExitCode, job.Reason = "FAILED", "1:0", "NonZeroExitCode"
						failedSteps = append(failedSteps, fmt.Sprintf("%s step %d (%s)", jobID, st.Index, st.Benchmark.Name))
						fmt.Fprintf(e.stderr, "  failed: %v\n%s", err, indent(tail(log.String(), 8)))
					}
				}
				job.End = time.Now()
				job.NodeList = strings.Join(nodes, ",")
				if err := db.UpdateJob(ctx, job); err != nil {
					return err
				}
				sum, err := ingestJobBundles(ctx, e, db, job)
				total.files += sum.files
				total.added += sum.added
				total.skipped += sum.skipped
				if err != nil {
					return err
				}
			}
			fmt.Fprintf(e.stdout, "%d run(s) from %d job(s) archived in %s (results in %s)\n", total.added, len(plan.Jobs), e.db, camp.ResultsDir())
			if len(failedSteps) > 0 {
				return fmt.Errorf("local: %d step(s) failed: %s (their failed bundles are archived)", len(failedSteps), strings.Join(failedSteps, ", "))
			}
			fmt.Fprintf(e.stdout, "next: sbench report --db %s -o report.pdf\n", e.db)
			return nil
		},
	}
	c.Flags().IntVarP(&ranks, "ranks", "n", 0, "ranks per step (default: the variant's nodes × tasks per node)")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "show the runner's output")
	return c
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}
