package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/campaign"
)

// loadCampaign reads a campaign; problems in it are the user's input, so
// they exit with the usage status.
func loadCampaign(path string) (*campaign.Campaign, error) {
	c, err := campaign.Load(path)
	if err != nil {
		return nil, usageError{err}
	}
	return c, nil
}

// newRenderer uses --template if given, else the campaign's templates_dir,
// else the embedded template.
func newRenderer(c *campaign.Campaign, templateFile string) (*campaign.Renderer, error) {
	opts := []campaign.Option{campaign.WithVersion(version)}
	if templateFile == "" {
		templateFile = c.TemplatePath()
	}
	if templateFile != "" {
		text, err := os.ReadFile(templateFile)
		if err != nil {
			return nil, usageError{fmt.Errorf("--template: %w", err)}
		}
		opts = append(opts, campaign.WithTemplate(filepath.Base(templateFile), string(text)))
	}
	r, err := campaign.NewRenderer(opts...)
	if err != nil {
		return nil, usageError{err}
	}
	return r, nil
}

// renderOptions are render's flags.
type renderOptions struct {
	out, template string
}

func newRenderCmd(e *env) *cobra.Command {
	var o renderOptions
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
			return runRender(cmd.Context(), e, o, args)
		},
	}
	c.Flags().StringVarP(&o.out, "output", "o", "", "directory to write the scripts into")
	c.Flags().StringVar(&o.template, "template", "", "sbatch template replacing the embedded one (text/template)")
	return c
}

// runRender writes the sbatch scripts of the campaign args[0].
func runRender(ctx context.Context, e *env, o renderOptions, args []string) error {
	if o.out == "" {
		return usagef("render: -o DIR is required")
	}
	c, err := loadCampaign(args[0])
	if err != nil {
		return err
	}
	r, err := newRenderer(c, o.template)
	if err != nil {
		return err
	}
	plan, err := c.Plan()
	if err != nil {
		return err
	}
	paths, err := r.RenderDir(plan, o.out)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintln(e.stdout, p)
	}
	return nil
}

// validateOptions are validate's flags.
type validateOptions struct {
	json bool
}

func newValidateCmd(e *env) *cobra.Command {
	var o validateOptions
	c := &cobra.Command{
		Use:   "validate [--json] CAMPAIGN.toml",
		Short: "Check a campaign and print its plan",
		Long: `Validate reads a campaign, reports every problem at once (each with
file:line:column and the key), and prints the plan: variants, jobs (with
their allocation and dependencies), the steps of each job with their rank
and node counts, and the node-hours the time limits allow at most.

With --json it prints {"ok": true, "campaign": …, "jobs": [plan]} or, for a
campaign with problems, {"ok": false, "problems": [{"file", "line", "col",
"key", "msg"}]} (exit status 2 either way when there are problems).`,
		Example: `  sbench validate examples/quickstart.toml
  sbench validate --json campaign.toml | jq '.problems[] | "\(.line): \(.msg)"'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(cmd.Context(), e, o, args)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the plan, or the problems, as JSON")
	return c
}

// runValidate checks the campaign args[0] and prints its plan.
func runValidate(ctx context.Context, e *env, o validateOptions, args []string) error {
	path, asJSON := args[0], o.json
	c, err := loadCampaign(path)
	var p *campaign.Plan
	if err == nil {
		p, err = c.Plan()
	}
	if err != nil {
		if asJSON {
			if jerr := writeProblemsJSON(e, path, err); jerr != nil {
				return jerr
			}
		}
		return usageError{err}
	}
	if asJSON {
		return writePlanJSON(e, c, p)
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
		print := func(task string, steps []campaign.Step) {
			for _, st := range steps {
				fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%d\t%d\t%s\n", task, st.Index, st.Benchmark.Name, st.Name, st.Ranks, st.Nodes, dash(st.Benchmark.Pairs))
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
}

// writeProblemsJSON prints a campaign's problems as validate --json does.
func writeProblemsJSON(e *env, path string, err error) error {
	type problem struct {
		File string `json:"file"`
		Line int    `json:"line,omitempty"`
		Col  int    `json:"col,omitempty"`
		Key  string `json:"key,omitempty"`
		Msg  string `json:"msg"`
	}
	var out []problem
	var ps campaign.Problems
	var one *campaign.Problem
	switch {
	case errors.As(err, &ps):
		for _, p := range ps {
			out = append(out, problem{p.File, p.Line, p.Col, p.Key, p.Msg})
		}
	case errors.As(err, &one):
		out = append(out, problem{one.File, one.Line, one.Col, one.Key, one.Msg})
	default:
		out = append(out, problem{File: path, Msg: err.Error()})
	}
	return writeJSON(e, struct {
		OK       bool      `json:"ok"`
		Problems []problem `json:"problems"`
	}{false, out})
}

// writePlanJSON prints a campaign's plan as validate --json does.
func writePlanJSON(e *env, c *campaign.Campaign, p *campaign.Plan) error {
	type step struct {
		Task      *int   `json:"task,omitempty"`
		Index     int    `json:"index"`
		Benchmark string `json:"benchmark"`
		Variant   string `json:"variant"`
		Ranks     int    `json:"ranks"`
		Nodes     int    `json:"nodes"`
		Placement string `json:"placement,omitempty"`
	}
	type job struct {
		File          string   `json:"file"`
		Nodes         string   `json:"nodes"`
		NtasksPerNode int      `json:"ntasks_per_node"`
		TimeSeconds   float64  `json:"time_seconds,omitempty"`
		ArrayTasks    int      `json:"array_tasks,omitempty"`
		After         []string `json:"after,omitempty"`
		Steps         []step   `json:"steps"`
	}
	out := struct {
		OK        bool     `json:"ok"`
		Campaign  string   `json:"campaign"`
		Mode      string   `json:"mode"`
		Variants  int      `json:"variants"`
		Jobs      []job    `json:"jobs"`
		NodeHours *float64 `json:"node_hours,omitempty"`
	}{OK: true, Campaign: c.Campaign.Name, Mode: c.Mode(), Variants: len(p.Variants), Jobs: []job{}}
	for _, j := range p.Jobs {
		oj := job{File: j.File, Nodes: fmt.Sprint(j.Alloc.Nodes), NtasksPerNode: j.Alloc.NtasksPerNode,
			TimeSeconds: j.Time.Seconds(), ArrayTasks: len(j.Tasks), Steps: []step{}}
		for _, d := range j.DependsOn {
			oj.After = append(oj.After, p.Jobs[d].File)
		}
		add := func(task *int, steps []campaign.Step) {
			for _, st := range steps {
				oj.Steps = append(oj.Steps, step{task, st.Index, st.Benchmark.Name, st.Name, st.Ranks, st.Nodes, st.Benchmark.Pairs})
			}
		}
		if len(j.Tasks) == 0 {
			add(nil, j.Steps)
		}
		for i, task := range j.Tasks {
			add(&i, task)
		}
		out.Jobs = append(out.Jobs, oj)
	}
	if h, known := p.NodeHours(); known {
		out.NodeHours = &h
	}
	return writeJSON(e, out)
}
