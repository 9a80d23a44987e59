package main

import (
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/templates"
)

// loadCampaign reads a campaign; problems in it are the user's input, so
// they exit with the usage status.
func loadCampaign(path string) (*templates.Campaign, error) {
	c, err := templates.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	return c, nil
}

func newRenderer(templateFile string) (*templates.Renderer, error) {
	opts := []templates.Option{templates.WithVersion(version)}
	if templateFile != "" {
		text, err := os.ReadFile(templateFile)
		if err != nil {
			return nil, usageError{fmt.Errorf("--template: %w", err)}
		}
		opts = append(opts, templates.WithTemplate(filepath.Base(templateFile), string(text)))
	}
	r, err := templates.NewRenderer(opts...)
	if err != nil {
		return nil, usageError{err}
	}
	return r, nil
}

func newRenderCmd(e *env) *cobra.Command {
	var out, tmpl string
	c := &cobra.Command{
		Use:   "render CAMPAIGN.toml -o DIR",
		Short: "Write the campaign's sbatch scripts",
		Long: `Render writes one sbatch script per job of the campaign into DIR, without
submitting anything. The output is deterministic: rendering the same campaign
twice gives the same bytes, so scripts can be reviewed and diffed.

Scripts write their results and Slurm output under the campaign's results
directory (default sbench-runs/NAME, relative to where sbatch runs), which
must exist before sbatch is called: "sbench submit" creates it.`,
		Example: `  sbench render examples/quickstart.toml -o scripts/
  sbench render site.toml -o scripts/ --template site-header.tmpl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("render: -o DIR is required")
			}
			c, err := loadCampaign(args[0])
			if err != nil {
				return err
			}
			r, err := newRenderer(tmpl)
			if err != nil {
				return err
			}
			paths, err := r.RenderDir(c.Plan(), out)
			if err != nil {
				return err
			}
			for _, p := range paths {
				fmt.Fprintln(e.stdout, p)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "directory to write the scripts into")
	c.Flags().StringVar(&tmpl, "template", "", "sbatch template replacing the embedded one (text/template)")
	return c
}

func newValidateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "validate CAMPAIGN.toml",
		Short: "Check a campaign and print its plan",
		Long: `Validate reads a campaign, reports every problem at once (each with
file:line:column and the key), and prints the plan: variants, jobs, steps,
node and task counts, and the node-hours the time limits allow.`,
		Example: `  sbench validate examples/quickstart.toml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := loadCampaign(args[0])
			if err != nil {
				return err
			}
			p := c.Plan()
			steps := 0
			for _, j := range p.Jobs {
				steps += len(j.Steps)
			}
			fmt.Fprintf(e.stdout, "campaign %s: %d variant(s), %d job(s), %d step(s)\n", c.Campaign.Name, len(p.Variants), len(p.Jobs), steps)
			tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "JOB\tVARIANT\tNODES\tTASKS\tTIME\tSTEPS")
			for _, j := range p.Jobs {
				names := ""
				for i, s := range j.Steps {
					if i > 0 {
						names += ","
					}
					names += s.Benchmark.Name
				}
				t := j.Variant.Slurm.Time
				if t == "" {
					t = "(partition default)"
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", j.File, j.Variant.Name, j.Variant.NodeCount(), j.Variant.Ranks(), t, names)
			}
			tw.Flush()
			if h, known := p.NodeHours(); known {
				fmt.Fprintf(e.stdout, "at most %.2f node-hours (time limit × nodes)\n", h)
			} else {
				fmt.Fprintf(e.stdout, "node-hours unknown: set [slurm] time to bound them\n")
			}
			return nil
		},
	}
}
