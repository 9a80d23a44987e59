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

// newRenderer uses --template if given, else the campaign's templates_dir,
// else the embedded template.
func newRenderer(c *templates.Campaign, templateFile string) (*templates.Renderer, error) {
	opts := []templates.Option{templates.WithVersion(version)}
	if templateFile == "" {
		templateFile = c.TemplatePath()
	}
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
			r, err := newRenderer(c, tmpl)
			if err != nil {
				return err
			}
			plan, err := c.Plan()
			if err != nil {
				return err
			}
			paths, err := r.RenderDir(plan, out)
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
file:line:column and the key), and prints the plan: variants, jobs (with
their allocation and dependencies), the steps of each job with their rank
and node counts, and the node-hours the time limits allow at most.`,
		Example: `  sbench validate examples/quickstart.toml`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := loadCampaign(args[0])
			if err != nil {
				return err
			}
			p, err := c.Plan()
			if err != nil {
				return err
			}
			steps := 0
			for _, j := range p.Jobs {
				steps += len(j.AllSteps())
			}
			fmt.Fprintf(e.stdout, "campaign %s (%s mode): %d variant(s), %d job(s), %d step(s)\n",
				c.Campaign.Name, c.Mode(), len(p.Variants), len(p.Jobs), steps)
			for _, j := range p.Jobs {
				t := "no time limit"
				if j.Time > 0 {
					t = "time " + j.Time.String()
				}
				fmt.Fprintf(e.stdout, "\njob %s: %s node(s) × %d task(s), %s", j.File, j.Alloc.Nodes, j.Alloc.NtasksPerNode, t)
				if len(j.Tasks) > 0 {
					fmt.Fprintf(e.stdout, ", array of %d task(s)", len(j.Tasks))
				}
				for _, d := range j.DependsOn {
					fmt.Fprintf(e.stdout, ", after %s", p.Jobs[d].File)
				}
				fmt.Fprintln(e.stdout)
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "  TASK\tSTEP\tBENCHMARK\tVARIANT\tRANKS\tNODES\tPLACEMENT")
				print := func(task string, steps []templates.Step) {
					for _, st := range steps {
						placement := st.Benchmark.Pairs
						if placement == "" {
							placement = "-"
						}
						fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%d\t%d\t%s\n", task, st.Index, st.Benchmark.Name, st.Name, st.Ranks, st.Nodes, placement)
					}
				}
				if len(j.Tasks) == 0 {
					print("-", j.Steps)
				}
				for i, task := range j.Tasks {
					print(fmt.Sprint(i), task)
				}
				tw.Flush()
			}
			if h, known := p.NodeHours(); known {
				fmt.Fprintf(e.stdout, "\nat most %.2f node-hours (time limits × nodes)\n", h)
			} else {
				fmt.Fprintf(e.stdout, "\nnode-hours unknown: give every benchmark a time limit ([slurm] time) to bound them\n")
			}
			return nil
		},
	}
}
