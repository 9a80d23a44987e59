package templates

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"text/template"

	"github.com/sbench/sbench/results"
)

//go:embed sbatch.tmpl
var defaultTemplate string

// DefaultTemplate returns the embedded sbatch template, for sites that want
// to start their own from it.
func DefaultTemplate() string { return defaultTemplate }

// ScriptData is what the sbatch template sees.
type ScriptData struct {
	Plan     *Plan
	Campaign *Campaign
	Job      Job
	// Directives are the #SBATCH options, already checked to be safe.
	Directives []string
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
// gets the same data and functions (q, args, comment, base, inc).
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
}

// NewRenderer returns a renderer using the embedded template unless an
// option replaces it.
func NewRenderer(opts ...Option) (*Renderer, error) {
	r := &Renderer{version: "dev"}
	for _, o := range opts {
		if err := o(r); err != nil {
			return nil, err
		}
	}
	if r.tmpl == nil {
		r.tmpl = template.Must(template.New("sbatch.tmpl").Funcs(funcs).Option("missingkey=error").Parse(defaultTemplate))
	}
	return r, nil
}

// Script renders one job's sbatch script.
func (r *Renderer) Script(p *Plan, j Job) ([]byte, error) {
	d := ScriptData{
		Plan:       p,
		Campaign:   p.Campaign,
		Job:        j,
		Directives: directives(p.Campaign, j),
		ResultsDir: p.Campaign.ResultsDir(),
		Runner:     p.Campaign.RunnerPath(),
		Version:    r.version,
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

// directives lists the job's #SBATCH options in a fixed order.
func directives(c *Campaign, j Job) []string {
	s := j.Variant.Slurm
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
	add("time", s.Time)
	num("nodes", j.Variant.NodeCount())
	num("ntasks", j.Variant.Ranks())
	num("ntasks-per-node", j.Variant.TasksPerNode())
	num("cpus-per-task", s.CPUsPerTask)
	add("mem", s.Mem)
	add("mem-per-cpu", s.MemPerCPU)
	if s.Exclusive {
		d = append(d, "--exclusive")
	}
	add("constraint", s.Constraint)
	add("gres", s.Gres)
	add("nodelist", s.Nodelist)
	add("exclude", s.Exclude)
	out := s.Output
	if out == "" {
		out = c.ResultsDir() + "/%x-%j.out"
	}
	add("output", out)
	add("error", s.Error)
	d = append(d, s.Extra...)
	return d
}
