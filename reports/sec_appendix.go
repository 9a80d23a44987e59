package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sbench/sbench/reports/typeset"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// How much of a tool's output and of a job script the appendix quotes:
// an OSU or NetPIPE table whole, the head and tail of a longer log, where
// tools print their parameters and their results.
const (
	rawHead    = 40
	rawTail    = 12
	scriptHead = 60
	// maxErrorLines bounds one run's error text: a tool that dumped a
	// stack trace per rank must not push the rest of the report off by
	// fifty pages.
	maxErrorLines = 30
)

// How many runs a large report lists and quotes: the runs section lists
// every run of a report of at most maxListed, the appendix quotes every
// run of one of at most maxAppendix; beyond, both take the newest failed
// and invalid runs, at most that many, and say how to get the others.
const (
	maxListed   = 60
	maxAppendix = 50
)

// chooseQuoted picks the runs the runs section lists and the appendix
// quotes, and reads the outputs and job scripts the appendix quotes: only
// those, however many runs the report has.
func (r *Report) chooseQuoted() error {
	all := make([]int, len(r.runs))
	var failed []int
	for i := range r.runs {
		all[i] = i
		if bad(&r.runs[i]) {
			failed = append(failed, i)
		}
	}
	newest := func(idx []int, n int) []int { return idx[max(0, len(idx)-n):] }
	r.listedRuns = all
	if len(all) > maxListed {
		r.listedRuns = newest(failed, maxListed)
	}
	switch r.opts.appendix {
	case AppendixAll:
		r.appendixRuns = all
	case AppendixFailed:
		r.appendixRuns = failed
	case AppendixNone:
	default:
		r.appendixRuns = all
		if len(all) > maxAppendix {
			r.appendixRuns = newest(failed, maxAppendix)
		}
	}
	r.raw, r.scripts = map[int64]quote{}, map[string]string{}
	for _, i := range r.appendixRuns {
		run := &r.runs[i]
		raw, err := r.src.Raw(r.ctx, run.ID)
		if err != nil {
			return fmt.Errorf("output of run %d: %w", run.ID, err)
		}
		if strings.TrimSpace(raw) != "" {
			// What the appendix quotes of it, not the whole output.
			lines := typeset.TrimBlank(splitLines(raw))
			r.raw[run.ID] = quote{lines: typeset.CutLines(lines, rawHead, rawTail), total: len(lines)}
		}
		if run.JobID == "" {
			continue
		}
		if _, ok := r.scripts[run.JobID]; ok {
			continue
		}
		script, err := r.src.Script(r.ctx, run.JobID)
		if err != nil {
			return fmt.Errorf("script of job %s: %w", run.JobID, err)
		}
		r.scripts[run.JobID] = script
	}
	return nil
}

// quote is what the appendix quotes of a tool's output: mono's cut of its
// lines, and how many it had.
type quote struct {
	lines []string
	total int
}

// appendix lists the runs chooseQuoted picked with what makes their
// numbers traceable: the job, its state, the command and launcher, the
// script that was submitted, the hosts, and an excerpt of the tool's own
// output; and how many it left out, and how to see them.
func (r *Report) appendix(d *content) {
	if len(r.runs) == 0 || r.opts.appendix == AppendixNone {
		return
	}
	d.newPage()
	d.heading("Appendix: runs", h1Size, 60)
	if len(r.appendixRuns) == len(r.runs) {
		d.para("Every run of the report with its job, command, hosts and the output the numbers were read from. "+
			"Excerpts keep the first and last lines of long outputs.", "I", smallSize, grey)
	} else {
		d.para(r.appendixNote(), "I", smallSize, grey)
	}
	d.space(4)
	shownScript := map[string]int64{}
	for _, i := range r.appendixRuns {
		run := &r.runs[i]
		head := fmt.Sprintf("Run %d — %s — %s — %s", run.ID, family(run), r.configs.ofRun[run.ID], orDash(string(run.Status)))
		c := redIf(bad(run))
		facts := RunFacts(run, r.jobOf(run))
		// The heading stays with its facts: no run title alone at a page's foot.
		d.need(2*bodySize*1.3 + 8 + float64(min(len(facts), 10))*smallSize*1.35)
		d.space(4)
		d.anchor(fmt.Sprintf("run-%d", run.ID))
		d.paraLines(head, "B", bodySize+0.5, c, 2)
		d.rule(1)
		d.space(4)
		for _, kv := range facts {
			d.fact(kv[0], kv[1], black)
		}
		if bad(run) {
			msg := r.failureText(run)
			if msg == "" {
				msg = "(no error text recorded)"
			}
			d.fact("Error", "", failedRed)
			d.mono(strings.Split(msg, "\n"), maxErrorLines, 0, failedRed)
		} else if run.Note != "" {
			d.fact("Note", "", grey)
			d.mono(strings.Split(run.Note, "\n"), maxErrorLines, 0, grey)
		}
		if run.JobID != "" {
			if script, ok := r.scripts[run.JobID]; ok && strings.TrimSpace(script) != "" {
				if first, done := shownScript[run.JobID]; done {
					d.fact("Script", fmt.Sprintf("the job's sbatch script is quoted under run %d", first), grey)
				} else {
					shownScript[run.JobID] = run.ID
					d.fact("Script", "the sbatch script of job "+run.JobID, black)
					d.mono(splitLines(script), scriptHead, 0, black)
				}
			}
		}
		if q, ok := r.raw[run.ID]; ok {
			d.fact("Output", fmt.Sprintf("%d line%s of the tool's output", q.total, results.Plural(q.total)), black)
			d.mono(q.lines, len(q.lines), 0, black)
		}
		d.space(6)
	}
}

// appendixNote says which runs the appendix quotes, how many it leaves
// out, and how to get them.
func (r *Report) appendixNote() string {
	failed := r.badRuns()
	n, total := len(r.appendixRuns), len(r.runs)
	var what string
	switch {
	case r.opts.appendix == AppendixFailed:
		what = fmt.Sprintf("The appendix quotes the %d failed or invalid runs of the report's %d", n, total)
	case n == failed:
		what = fmt.Sprintf("The appendix quotes the report's %d failed or invalid runs, not its %d others", n, total-n)
	default:
		what = fmt.Sprintf("The appendix quotes the newest %d of the report's %d failed or invalid runs; %d runs are not quoted", n, failed, total-n)
	}
	return what + " (with their job, command, hosts and output). " +
		"sbench report --appendix all quotes every run, --appendix failed every failed or invalid one; " +
		"sbench runs and sbench export list them all."
}

// RunFacts are the key facts of a run as the report's appendix lists them
// — job (with its Slurm state when j is its record), campaign, variant,
// command, launcher, tool, hosts, time, labels, parameters, source, runner
// — as key and value, for other views of a run (the site's run pages).
func RunFacts(run *store.Run, j *store.Job) [][2]string {
	var out [][2]string
	add := func(k, v string) {
		if strings.TrimSpace(v) != "" {
			out = append(out, [2]string{k, v})
		}
	}
	if run.JobID != "" {
		job := jobLabel(run)
		if j != nil {
			var st []string
			if j.State != "" {
				st = append(st, j.State)
			}
			if j.ExitCode != "" {
				st = append(st, "exit "+j.ExitCode)
			}
			if j.Name != "" {
				st = append(st, "name "+j.Name)
			}
			if len(st) > 0 {
				job += " (" + strings.Join(st, ", ") + ")"
			}
		}
		add("Job", job)
	}
	add("Campaign", run.Campaign)
	add("Variant", run.Variant)
	add("Command", shellJoin(run.Command))
	add("Launcher", run.Launcher)
	tool := run.Tool
	if run.ToolVer != "" {
		tool += " " + run.ToolVer
	}
	add("Tool", strings.TrimSpace(tool))
	if nodes := compressHosts(runNodes(run)); nodes != "" {
		s := nodes
		if run.Tasks > 0 {
			s += fmt.Sprintf(", %d task%s", run.Tasks, results.Plural(run.Tasks))
			if run.TasksPerNode != "" {
				s += " (" + run.TasksPerNode + " per node)"
			}
		}
		add("Hosts", s)
	}
	var hostnames []string
	for _, h := range run.Hosts {
		if h.Hostname != "" && h.NodeName != "" && h.Hostname != h.NodeName {
			hostnames = append(hostnames, h.NodeName+": "+h.Hostname)
		}
	}
	add("Hostnames", strings.Join(hostnames, ", "))
	switch {
	case !run.Start.IsZero() && !run.End.IsZero():
		add("Time", fmt.Sprintf("%s to %s (%s)", run.Start.Format(dateLayout), run.End.Format(dateLayout), run.End.Sub(run.Start).Round(1e9)))
	case !run.Start.IsZero():
		add("Time", "from "+run.Start.Format(dateLayout))
	}
	add("Labels", keyValues(run.Labels))
	add("Parameters", keyValues(run.Params))
	src := run.Source
	if run.Origin != "" && run.Origin != run.Source {
		src += " (" + run.Origin + ")"
	}
	add("Source", src)
	if run.RunnerVersion != "" {
		add("Runner", "sbench-runner "+run.RunnerVersion)
	}
	return out
}

func splitLines(s string) []string {
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

// excerpt is what the appendix quotes of a text, for the font check.
func excerpt(s string, head, tail int) string {
	if s == "" {
		return ""
	}
	lines := typeset.TrimBlank(splitLines(s))
	if len(lines) > head+tail+1 {
		lines = append(append([]string(nil), lines[:head]...), lines[len(lines)-tail:]...)
	}
	return strings.Join(lines, "\n")
}

func keyValues(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

// shellJoin writes a command line so that it can be pasted into a shell.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'$`\\;&|<>()*?[]{}~!#") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
