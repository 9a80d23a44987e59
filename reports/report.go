package reports

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// Data is what a report shows; the caller fills it from the archive.
type Data struct {
	// Title heads the report; empty means "sbench report — CAMPAIGN(s)".
	Title   string
	Runs    []store.Run
	Samples []store.Sample
	Scalars []store.Scalar
	Checks  []store.Check
	// Jobs gives the Slurm state of the jobs the runs belong to.
	Jobs []store.Job
	// Generated is the report's date, shown on the title page and written
	// as the PDF's creation date. Zero means the end of the latest run, so
	// that the same Data always gives the same bytes.
	Generated time.Time
	// Version is sbench's version, for the generated-by line.
	Version string
}

// Option configures a report.
type Option func(*options) error

type options struct {
	compress     bool
	figureDir    string
	figureFormat string
}

// WithCompression turns compression of the PDF's page streams on (the
// default) or off; off is for reading the drawing operators while debugging.
func WithCompression(on bool) Option {
	return func(o *options) error { o.compress = on; return nil }
}

// WithFigureDir also saves every figure into dir as a file of the given
// format (png, svg, pdf, eps, jpg or tiff) when the report is written.
func WithFigureDir(dir, format string) Option {
	return func(o *options) error {
		if err := checkFigureFormat(format); err != nil {
			return err
		}
		o.figureDir, o.figureFormat = dir, format
		return nil
	}
}

// Report is a report laid out from Data: its figures are built and can be
// saved on their own, and WriteTo writes the PDF.
type Report struct {
	data    Data
	opts    options
	runs    []store.Run // sorted by id
	byID    map[int64]*store.Run
	jobs    map[string]*store.Job
	configs *configs
	figures []Figure
	notes   []string
}

// New lays out a report of d.
func New(d Data, opts ...Option) (*Report, error) {
	r := &Report{data: d, opts: options{compress: true}}
	for _, o := range opts {
		if err := o(&r.opts); err != nil {
			return nil, err
		}
	}
	r.runs = append([]store.Run(nil), d.Runs...)
	sort.SliceStable(r.runs, func(i, j int) bool { return r.runs[i].ID < r.runs[j].ID })
	r.byID = make(map[int64]*store.Run, len(r.runs))
	for i := range r.runs {
		run := &r.runs[i]
		if _, dup := r.byID[run.ID]; dup {
			r.notef("run %d appears more than once in the data; the first copy is used", run.ID)
			continue
		}
		r.byID[run.ID] = run
	}
	r.jobs = make(map[string]*store.Job, len(d.Jobs))
	for i := range d.Jobs {
		j := &d.Jobs[i]
		if _, dup := r.jobs[j.SlurmID]; !dup && j.SlurmID != "" {
			r.jobs[j.SlurmID] = j
		}
	}
	if r.data.Generated.IsZero() {
		r.data.Generated = latestRunTime(r.runs)
	}
	r.configs = newConfigs(r.runs)
	r.figures = r.buildFigures()
	return r, nil
}

// Write lays out a report of d and writes it to w as a PDF.
func Write(w io.Writer, d Data, opts ...Option) error {
	r, err := New(d, opts...)
	if err != nil {
		return err
	}
	_, err = r.WriteTo(w)
	return err
}

// Notes returns what the report could not show and why (metrics it does not
// plot yet, units it does not know, samples of unknown runs).
func (r *Report) Notes() []string { return append([]string(nil), r.notes...) }

func (r *Report) notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// Figures returns the report's figures in the order the PDF shows them.
func (r *Report) Figures() []Figure { return append([]Figure(nil), r.figures...) }

// SaveFigures writes every figure to dir as NAME.FORMAT, each file
// atomically, at the size it has in the PDF.
func (r *Report) SaveFigures(dir, format string) error {
	if err := checkFigureFormat(format); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save figures: %w", err)
	}
	for _, f := range r.figures {
		wt, err := f.Plot.WriterTo(figureWidth, figureHeight, format)
		if err != nil {
			return fmt.Errorf("save figure %s: %w", f.Name, err)
		}
		var buf bytes.Buffer
		if _, err := wt.WriteTo(&buf); err != nil {
			return fmt.Errorf("save figure %s: %w", f.Name, err)
		}
		path := filepath.Join(dir, f.Name+"."+format)
		if err := results.WriteAtomic(path, buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("save figure %s: %w", f.Name, err)
		}
	}
	return nil
}

func checkFigureFormat(format string) error {
	switch format {
	case "png", "svg", "pdf", "eps", "jpg", "jpeg", "tif", "tiff":
		return nil
	}
	return fmt.Errorf("figure format %q: want png, svg, pdf, eps, jpg or tiff", format)
}

// WriteTo writes the report as a PDF.
func (r *Report) WriteTo(w io.Writer) (int64, error) {
	if r.opts.figureDir != "" {
		if err := r.SaveFigures(r.opts.figureDir, r.opts.figureFormat); err != nil {
			return 0, err
		}
	}
	doc := newDocument(r.data, r.opts)
	r.titlePage(doc)
	r.runsSection(doc)
	r.familySections(doc)
	r.failedSection(doc)
	r.notesSection(doc)
	r.replacementNote(doc)
	return doc.output(w)
}

// latestRunTime is the latest end (or start) of the runs, or the Unix epoch
// when none has a time.
func latestRunTime(runs []store.Run) time.Time {
	var t time.Time
	for _, run := range runs {
		for _, c := range []time.Time{run.Start, run.End} {
			if c.After(t) {
				t = c
			}
		}
	}
	if t.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return t
}

// campaigns returns the distinct campaign names of the runs, sorted.
func (r *Report) campaigns() []string {
	set := map[string]bool{}
	for _, run := range r.runs {
		if run.Campaign != "" {
			set[run.Campaign] = true
		}
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// title is the report's title, defaulted from its campaigns.
func (r *Report) title() string {
	if r.data.Title != "" {
		return r.data.Title
	}
	cs := r.campaigns()
	if len(cs) == 0 {
		return "sbench report"
	}
	return "sbench report — " + strings.Join(cs, ", ")
}

// jobOf returns the recorded Slurm job of a run, if any.
func (r *Report) jobOf(run *store.Run) *store.Job {
	if run.JobID == "" {
		return nil
	}
	if run.ArrayIndex != "" {
		if j, ok := r.jobs[run.JobID+"_"+run.ArrayIndex]; ok {
			return j
		}
	}
	return r.jobs[run.JobID]
}
