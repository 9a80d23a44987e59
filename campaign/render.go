package campaign

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"

	"github.com/sbench/sbench/results"
)

//go:embed templates/sbatch.tmpl
var defaultTemplate string

// ScriptData is what the sbatch template sees.
type ScriptData struct {
	Plan     *Plan
	Campaign *Campaign
	Job      Job
	Mode     string
	// Directives are the #SBATCH options, already checked to be safe.
	Directives []string
	// Blocks are the steps as shell text (Tasks: per array task).
	Blocks     []Block
	Tasks      [][]Block
	Pairs      bool
	DependsOn  []string
	ResultsDir string
	Runner     string
	Version    string
}

// Renderer turns a plan into sbatch scripts.
type Renderer struct {
	tmpl    *template.Template
	version string
}

// Option configures a Renderer.
type Option func(*Renderer) error

// WithTemplate replaces the embedded template with a site's own text. It
// gets the same data (ScriptData) and functions (q, args, comment, base,
// inc, join, indent).
func WithTemplate(name, text string) Option {
	return func(r *Renderer) error {
		t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(text)
		if err != nil {
			return fmt.Errorf("template %s: %w", name, err)
		}
		r.tmpl = t
		return nil
	}
}

// WithVersion sets the sbench version named in the scripts' header.
func WithVersion(v string) Option {
	return func(r *Renderer) error { r.version = v; return nil }
}

var funcs = template.FuncMap{
	"q":       Quote,
	"args":    QuoteArgs,
	"comment": commentLines,
	"base":    filepath.Base,
	"inc":     func(i int) int { return i + 1 },
	"join":    strings.Join,
	"indent":  indent,
}

// NewRenderer returns a renderer using the embedded template unless an
// option replaces it.
func NewRenderer(opts ...Option) (*Renderer, error) {
	r := &Renderer{version: "dev"}
	for _, o := range append([]Option{WithTemplate("sbatch.tmpl", defaultTemplate)}, opts...) {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Script renders one job's sbatch script.
func (r *Renderer) Script(p *Plan, j Job) ([]byte, error) {
	c := p.Campaign
	d := ScriptData{
		Plan:       p,
		Campaign:   c,
		Job:        j,
		Mode:       c.Mode(),
		Directives: directives(c, j),
		Pairs:      usesPairs(j.AllSteps()),
		ResultsDir: c.ResultsDir(),
		Runner:     c.RunnerPath(),
		Version:    r.version,
	}
	for _, dep := range j.DependsOn {
		d.DependsOn = append(d.DependsOn, p.Jobs[dep].File)
	}
	blocks := func(steps []Step) []Block {
		var out []Block
		for _, st := range steps {
			out = append(out, c.block(st))
		}
		return out
	}
	d.Blocks = blocks(j.Steps)
	for _, task := range j.Tasks {
		d.Tasks = append(d.Tasks, blocks(task))
	}
	var buf bytes.Buffer
	if err := r.tmpl.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("render %s: %w", j.File, err)
	}
	return buf.Bytes(), nil
}

// RenderDir writes every job's script into dir and returns their paths.
// Scripts are written atomically; nothing is written if any job fails to
// render.
func (r *Renderer) RenderDir(p *Plan, dir string) ([]string, error) {
	scripts := make([][]byte, len(p.Jobs))
	for i, j := range p.Jobs {
		s, err := r.Script(p, j)
		if err != nil {
			return nil, err
		}
		scripts[i] = s
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	paths := make([]string, len(p.Jobs))
	for i, j := range p.Jobs {
		paths[i] = filepath.Join(dir, j.File)
		if err := results.WriteAtomic(paths[i], scripts[i], 0o755); err != nil {
			return nil, err
		}
	}
	return paths, nil
}

// OutputFiles are the job's --output and --error, as its script gives them
// to sbatch (Slurm patterns, relative to where sbatch runs): [slurm]
// output, else RESULTS/%x-%j.out (%x-%A_%a.out for an array); error ""
// when stderr goes with stdout.
func (c *Campaign) OutputFiles(j Job) (output, errFile string) {
	out := c.Slurm.Output
	if out == "" {
		out = c.ResultsDir() + "/%x-%j.out"
		if len(j.Tasks) > 0 {
			out = c.ResultsDir() + "/%x-%A_%a.out"
		}
	}
	return out, c.Slurm.Error
}

// directives lists the job's #SBATCH options in a fixed order.
func directives(c *Campaign, j Job) []string {
	s := j.Alloc
	var d []string
	add := func(opt, val string) {
		if val != "" {
			d = append(d, "--"+opt+"="+val)
		}
	}
	num := func(opt string, n int) {
		if n > 0 {
			add(opt, strconv.Itoa(n))
		}
	}
	add("job-name", j.JobName)
	add("partition", s.Partition)
	add("account", s.Account)
	add("qos", s.QOS)
	add("reservation", s.Reservation)
	if j.Time > 0 {
		add("time", formatSlurmTime(j.Time))
	}
	add("nodes", s.Nodes.String())
	num("ntasks-per-node", s.NtasksPerNode)
	num("cpus-per-task", s.CPUsPerTask)
	add("mem", s.Mem)
	add("mem-per-cpu", s.MemPerCPU)
	if s.Exclusive {
		d = append(d, "--exclusive")
	}
	add("constraint", s.Constraint)
	add("gres", s.Gres)
	add("gpus", s.GPUs)
	add("nodelist", s.Nodelist)
	add("exclude", s.Exclude)
	if len(j.Tasks) > 0 {
		add("array", fmt.Sprintf("0-%d", len(j.Tasks)-1))
	}
	out, errFile := c.OutputFiles(j)
	add("output", out)
	add("error", errFile)
	// A requeued job appends to its output: the first attempt's step
	// markers and messages stay there beside the second's.
	add("open-mode", "append")
	d = append(d, s.Extra...)
	return d
}
