package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/campaign"
)

// siteFlagUsage is the --site flag's help, the same on every command.
const siteFlagUsage = "site profile (TOML) giving the cluster's defaults; default $SBENCH_SITE, else $XDG_CONFIG_HOME/sbench/site.toml (~/.config/sbench/site.toml), else /etc/sbench/site.toml if it exists; \"none\" for no profile"

// loadSite reads the site profile --site (site), $SBENCH_SITE or the
// default path names; nil when there is none.
func loadSite(e *env, site string) (*campaign.Site, error) {
	s, err := campaign.FindSite(site, e.getenv)
	if err != nil {
		return nil, usageError{err}
	}
	return s, nil
}

// loadCampaignSite reads a campaign under its site profile (loadSite);
// problems in either are the user's input, so they exit with the usage
// status.
func loadCampaignSite(e *env, path, site string) (*campaign.Campaign, error) {
	s, err := loadSite(e, site)
	if err != nil {
		return nil, err
	}
	c, err := campaign.LoadWith(path, s)
	if err != nil {
		return nil, usageError{err}
	}
	return c, nil
}

// newRenderer uses --template if given, else the campaign's templates_dir,
// else the embedded template.
func newRenderer(c *campaign.Campaign, templateFile string) (*campaign.Renderer, error) {
	opts := []campaign.Option{campaign.WithVersion(version)}
	templateFile = cmp.Or(templateFile, c.TemplatePath())
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
	out, template, site string
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
must exist before sbatch is called: "sbench submit" creates it.

The cluster's partition, account, modules, environment and launcher may
come from a site profile (--site FILE, $SBENCH_SITE or
~/.config/sbench/site.toml; see docs/site-profile.md): the campaign's own
settings win over the profile's.`,
		Example: `  sbench render examples/quickstart.toml -o scripts/
  sbench render examples/quickstart.toml -o scripts/ --site /etc/sbench/alpha.toml
  sbench render site.toml -o scripts/ --template site-header.tmpl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRender(cmd.Context(), e, o, args)
		},
	}
	c.Flags().StringVarP(&o.out, "output", "o", "", "directory to write the scripts into")
	c.Flags().StringVar(&o.template, "template", "", "sbatch template replacing the embedded one (text/template)")
	c.Flags().StringVar(&o.site, "site", "", siteFlagUsage)
	return c
}

// runRender writes the sbatch scripts of the campaign args[0].
func runRender(ctx context.Context, e *env, o renderOptions, args []string) error {
	if o.out == "" {
		return usagef("render: -o DIR is required")
	}
	c, err := loadCampaignSite(e, args[0], o.site)
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
	site string
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
"key", "msg"}]} (exit status 2 either way when there are problems).

Under a site profile (--site FILE, $SBENCH_SITE or
~/.config/sbench/site.toml; see docs/site-profile.md) the plan is the
merged one, and validate also prints each campaign-wide setting with where
it came from: the profile's file:line, the campaign's, or "default" (in
JSON: "site" {name, file, hash} and "settings" [{key, value, from}]). A
problem in the profile is placed in it, file:line:column and key.`,
		Example: `  sbench validate examples/quickstart.toml
  sbench validate --site site-a.toml examples/quickstart.toml
  sbench validate --json campaign.toml | jq '.problems[] | "\(.line): \(.msg)"'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(cmd.Context(), e, o, args)
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print the plan, or the problems, as JSON")
	c.Flags().StringVar(&o.site, "site", "", siteFlagUsage)
	return c
}

// runValidate checks the campaign args[0] and prints its plan.
func runValidate(ctx context.Context, e *env, o validateOptions, args []string) error {
	path, asJSON := args[0], o.json
	c, err := loadCampaignSite(e, path, o.site)
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
	writeSources(e, c)
	return nil
}

// writeSources prints, under a site profile, each campaign-wide setting
// and where it came from.
func writeSources(e *env, c *campaign.Campaign) {
	s := c.Site()
	if s == nil {
		return
	}
	fmt.Fprintf(e.stdout, "\nsite profile %s (%s, %s); the campaign's own settings win:\n", s.Site.Name, s.File, s.Hash)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SETTING\tVALUE\tFROM")
	for _, src := range c.Sources() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", src.Key, src.Value, src.From)
	}
	tw.Flush()
	if es := s.Expectations(); len(es) > 0 {
		fmt.Fprintf(e.stdout, "\n%d expectation(s) from the profile:\n", len(es))
		for _, x := range es {
			fmt.Fprintf(e.stdout, "  %s %s@%s %s  (%s)\n", x.Benchmark, x.Metric, dash(x.At), x.Bound, x.Source())
		}
	}
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
	type site struct {
		Name string `json:"name"`
		File string `json:"file"`
		Hash string `json:"hash"`
	}
	type setting struct {
		Key   string `json:"key"`
		Value string `json:"value"`
		From  string `json:"from"`
	}
	out := struct {
		OK        bool      `json:"ok"`
		Campaign  string    `json:"campaign"`
		Mode      string    `json:"mode"`
		Variants  int       `json:"variants"`
		Jobs      []job     `json:"jobs"`
		NodeHours *float64  `json:"node_hours,omitempty"`
		Site      *site     `json:"site,omitempty"`
		Settings  []setting `json:"settings,omitempty"`
	}{OK: true, Campaign: c.Campaign.Name, Mode: c.Mode(), Variants: len(p.Variants), Jobs: []job{}}
	if s := c.Site(); s != nil {
		out.Site = &site{s.Site.Name, s.File, s.Hash}
		for _, src := range c.Sources() {
			out.Settings = append(out.Settings, setting{src.Key, src.Value, src.From})
		}
	}
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
