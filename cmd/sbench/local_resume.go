package main

// sbench local's interruptions and --resume: a Ctrl-C stops the running
// step in order and archives what finished; --resume archives what an
// interrupted (or killed) run left, and runs what did not run.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/jobs"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/runner"
	"github.com/sbench/sbench/store"
)

// interrupts follows SIGINT and SIGTERM while sbench local runs. The first
// ends the command's context (main's signal.NotifyContext): the running
// step is stopped in order and what finished is archived. The second
// cancels abortCtx: the step is killed at once and nothing more is
// archived. Then the signals' default action is back: a third ends sbench
// whatever it is doing.
type interrupts struct {
	abortCtx context.Context
	abort    context.CancelFunc
	ch       chan os.Signal
	done     chan struct{}
}

// watchInterrupts starts following the signals; ctx is the command's, which
// the first signal ends (it may have already).
func watchInterrupts(ctx context.Context) *interrupts {
	w := &interrupts{ch: make(chan os.Signal, 2), done: make(chan struct{})}
	w.abortCtx, w.abort = context.WithCancel(context.Background())
	signal.Notify(w.ch, os.Interrupt, syscall.SIGTERM)
	n := 0
	if ctx.Err() != nil {
		n = 1 // the first signal came before this handler
	}
	go func() {
		for {
			select {
			case <-w.ch:
				if n++; n >= 2 {
					signal.Stop(w.ch)
					w.abort()
					return
				}
			case <-w.done:
				return
			}
		}
	}()
	return w
}

func (w *interrupts) aborted() bool { return w.abortCtx.Err() != nil }

func (w *interrupts) close() {
	signal.Stop(w.ch)
	close(w.done)
	w.abort()
}

// lockedWriter lets the goroutine that follows the signals write beside
// the command's own messages and the ranks' output (--verbose).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// signalCause is the signal whose arrival ended a context of
// signal.NotifyContext, which says it only in words ("interrupt signal
// received"); 0 for any other cause.
func signalCause(cause error) syscall.Signal {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if cause != nil && cause.Error() == sig.String()+" signal received" {
			return sig
		}
	}
	return 0
}

// stepCause is the cause with which sbench local ends its steps' context
// when its own ends: the signal it got, which the ranks get in turn (a
// Ctrl-C as SIGINT, which the runner records as one).
func stepCause(cause error) error {
	if sig := signalCause(cause); sig != 0 {
		return runner.StopSignal{Signal: sig}
	}
	return cause
}

// interruptReason says why sbench local stopped, in the words of the
// job's reason and the message.
func interruptReason(cause error) string {
	switch signalCause(cause) {
	case syscall.SIGINT:
		return "interrupted by Ctrl-C (SIGINT)"
	case syscall.SIGTERM:
		return "interrupted by SIGTERM"
	}
	if cause == nil || errors.Is(cause, context.Canceled) && cause.Error() == context.Canceled.Error() {
		return "interrupted"
	}
	return "interrupted (" + cause.Error() + ")"
}

// resumeCommand is the command that resumes this run: the same campaign,
// archive, site profile, -n and labels, with --resume.
func resumeCommand(file, db string, site *campaign.Site, ranks int, labels []string) string {
	words := []string{"sbench", "local", campaign.Quote(file), "--db", campaign.Quote(db)}
	if site != nil {
		words = append(words, "--site", campaign.Quote(site.File))
	}
	if ranks > 0 {
		words = append(words, "-n", strconv.Itoa(ranks))
	}
	for _, l := range labels {
		words = append(words, "--label", campaign.Quote(l))
	}
	return strings.Join(append(words, "--resume"), " ")
}

// localNodes are the fake nodes of a job's allocation: local1, local2 …
func localNodes(j campaign.Job) []string {
	nodes := make([]string, j.Alloc.Nodes.Max)
	for i := range nodes {
		nodes[i] = "local" + strconv.Itoa(i+1)
	}
	return nodes
}

// jobTasks are the job's steps by array task: one list outside arrays.
func (l *localRun) jobTasks(j campaign.Job) [][]campaign.Step {
	if len(j.Tasks) > 0 {
		return j.Tasks
	}
	return [][]campaign.Step{j.Steps}
}

// plannedSteps is what a job records as its plan: every step of every task
// (plannedSteps), with the labels sbench local adds to their runs.
func (l *localRun) plannedSteps(j campaign.Job) []store.PlannedStep {
	steps := jobs.PlannedSteps(l.camp, j)
	for i := range steps {
		if ls := l.launchLabels(steps[i].Nodes); len(ls) > 0 {
			steps[i].Labels = mergedLabels(steps[i].Labels, ls)
		}
	}
	return steps
}

// planned reports whether a planned step is one of steps: all of them,
// but under --resume only those it runs again.
func (l *localRun) planned(steps []campaign.Step, ps store.PlannedStep) bool {
	return l.resume == nil || slices.ContainsFunc(steps, func(st campaign.Step) bool { return strconv.Itoa(st.Index) == ps.Step })
}

// stepsToRun are the steps of task ti of job j to run: all of them, but
// under --resume those that have no run that did not fail.
func (l *localRun) stepsToRun(j campaign.Job, ti int, steps []campaign.Step) []campaign.Step {
	if l.resume == nil {
		return steps
	}
	done := l.resume.done[l.resume.origID(j, ti)]
	nodes := localNodes(j)
	return slices.DeleteFunc(slices.Clone(steps), func(st campaign.Step) bool {
		ids := campaign.LaunchIDs(strconv.Itoa(st.Index), st.Benchmark.Pairs, nodes)
		return len(ids) > 0 && !slices.ContainsFunc(ids, func(id string) bool { return !done[id] })
	})
}

// resumeState is what --resume found of the local run it continues.
type resumeState struct {
	stamp string
	// round numbers this resume of the run: its jobs are
	// local-STAMP-N-resumeROUND.
	round int
	// done holds, by job id without a resume's suffix (local-STAMP-N,
	// local-STAMP-N_TASK), the launches that have a run that did not
	// fail, in any of the run's jobs.
	done map[string]map[string]bool
}

// localJobRE is a local job's id: its run's stamp (the start's time to the
// millisecond, and random hex), the job's index in the plan, the resume
// that ran it and its array task.
var localJobRE = regexp.MustCompile(`^local-(\d{8}T\d{9}-[0-9a-f]{6})-(\d+)(?:-resume(\d+))?(_\d+)?$`)

// suffix is what a resumed job's id adds to the original's: "" when not
// resuming.
func (r *resumeState) suffix() string {
	if r == nil {
		return ""
	}
	return "-resume" + strconv.Itoa(r.round)
}

// origID is the id the run first gave task ti of job j.
func (r *resumeState) origID(j campaign.Job, ti int) string {
	id := fmt.Sprintf("local-%s-%d", r.stamp, j.Index+1)
	if len(j.Tasks) > 0 {
		id += "_" + strconv.Itoa(ti)
	}
	return id
}

// loadResume finds the campaign's last local run in the archive, archives
// what its jobs left unarchived (a run killed outright, or aborted by a
// second Ctrl-C, left its last job RUNNING and its bundles on disk), and
// says which launches have their runs. It refuses when the campaign's
// plan is no longer the one that run recorded.
func (l *localRun) loadResume(ctx context.Context, plan *campaign.Plan) (*resumeState, error) {
	db := l.db
	name := l.camp.Campaign.Name
	recorded, err := db.Jobs(ctx, name)
	if err != nil {
		return nil, err
	}
	r := &resumeState{done: map[string]map[string]bool{}}
	for _, j := range recorded {
		if m := localJobRE.FindStringSubmatch(j.SlurmID); m != nil && m[3] == "" && m[1] > r.stamp {
			r.stamp = m[1]
		}
	}
	if r.stamp == "" {
		return nil, usagef("local --resume: no local run of campaign %s in %s to resume: run it without --resume", name, l.e.db)
	}
	for _, j := range recorded {
		m := localJobRE.FindStringSubmatch(j.SlurmID)
		if m == nil || m[1] != r.stamp {
			continue
		}
		if m[3] != "" {
			round, _ := strconv.Atoi(m[3])
			r.round = max(r.round, round)
		} else if err := l.samePlan(plan, j, m); err != nil {
			return nil, err
		}
		if j.State == "RUNNING" {
			// sbench ended under it: what finished is on disk.
			j.State, j.Reason, j.End = "CANCELLED", "interrupted: sbench local ended before the job did", time.Now()
			if err := db.UpdateJob(ctx, j); err != nil {
				return nil, err
			}
			n, err := l.arch.Archive(ctx, j, nil)
			if err != nil {
				return nil, err
			}
			l.arch.Total.Added += n
			fmt.Fprintf(l.e.stderr, "job %s: archived what it left (sbench local ended before it did)\n", j.SlurmID)
		}
		runs, err := db.JobRuns(ctx, name, j.SlurmID)
		if err != nil {
			return nil, err
		}
		orig := "local-" + m[1] + "-" + m[2] + m[4]
		for _, run := range runs {
			if run.Status != results.StatusFailed {
				if r.done[orig] == nil {
					r.done[orig] = map[string]bool{}
				}
				r.done[orig][run.Step] = true
			}
		}
	}
	r.round++
	return r, nil
}

// samePlan checks that a job of the run being resumed (m its id's parts)
// recorded the plan the campaign makes now.
func (l *localRun) samePlan(plan *campaign.Plan, j store.Job, m []string) error {
	changed := fmt.Errorf("local --resume: %s no longer plans what local run %s ran (job %s): run it without --resume, or resume with the campaign, -n and --label of that run",
		l.campFile, m[1], j.SlurmID)
	index, _ := strconv.Atoi(m[2])
	if index < 1 || index > len(plan.Jobs) {
		return usageError{changed}
	}
	pj := plan.Jobs[index-1]
	task := strings.TrimPrefix(m[4], "_")
	var want []store.PlannedStep
	for _, ps := range l.plannedSteps(pj) {
		if ps.Task == task {
			ps.Task = ""
			want = append(want, ps)
		}
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(j.Plan)
	if string(a) != string(b) {
		return usageError{changed}
	}
	return nil
}
