package compare

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// SelectorKind says how a Selector picks runs.
type SelectorKind int

const (
	// SelectLabels picks the runs carrying every one of a set of labels.
	SelectLabels SelectorKind = iota + 1
	// SelectRuns picks runs by archive id.
	SelectRuns
	// SelectCampaign picks the runs of a campaign, optionally of one day
	// or one submission.
	SelectCampaign
	// SelectBaseline picks the runs recorded under a baseline's name.
	SelectBaseline
	// SelectJob picks the runs of Slurm (or local) jobs.
	SelectJob
	// SelectSince picks the runs that started after the newest run of
	// another selector, less that selector's runs.
	SelectSince
)

// Selector is one side of a comparison, as the user wrote it:
//
//	fabric=ib,mpi=openmpi    runs with all these labels
//	run:12,14-16             runs 12, 14, 15 and 16
//	campaign:acceptance      every run of a campaign
//	campaign:acceptance@2024-06-01   those that started that day (UTC)
//	campaign:acceptance@latest       those of its newest submission
//	campaign:acceptance@2            … of the one before it (@1 is @latest)
//	baseline:pre-upgrade     the runs a baseline was set to
//	job:4242,4250            the runs of these Slurm or local jobs
//	job:4242.3,4242.3r1      step 3 of job 4242, every attempt; its
//	                         attempt r1 only (store.JobRef)
//	since:baseline:pre-upgrade       runs that started after the baseline's
//	                                 newest run, the baseline's own left out
type Selector struct {
	Kind     SelectorKind
	Labels   map[string]string
	RunIDs   []int64
	Campaign string
	Day      time.Time // midnight UTC of the day, or zero for any day
	// Submission picks the campaign's Nth newest submission (1 is the
	// latest); 0 picks every run of the campaign.
	Submission int
	Baseline   string
	JobIDs     []string
	// Since is the selector a since: selector follows.
	Since *Selector
}

// selectorForms is what ParseSelector reads, for its errors.
const selectorForms = "KEY=VALUE[,…], run:ID[,…], campaign:NAME[@YYYY-MM-DD|@latest|@N], baseline:NAME, job:ID[.STEP][rN][,…] or since:SELECTOR"

// ParseSelector reads a selector. Errors say what was expected.
func ParseSelector(s string) (Selector, error) {
	if strings.TrimSpace(s) == "" {
		return Selector{}, errors.New("empty selector: want " + selectorForms)
	}
	kind, rest, hasKind := strings.Cut(s, ":")
	if hasKind {
		switch kind {
		case "run", "runs":
			ids, err := store.ParseRunIDs(rest)
			if err != nil {
				return Selector{}, fmt.Errorf("selector %q: %w", s, err)
			}
			return Selector{Kind: SelectRuns, RunIDs: ids}, nil
		case "campaign":
			return parseCampaign(s, rest)
		case "baseline":
			if rest == "" {
				return Selector{}, fmt.Errorf("selector %q: baseline name is empty", s)
			}
			return Selector{Kind: SelectBaseline, Baseline: rest}, nil
		case "job", "jobs":
			var ids []string
			for _, id := range strings.Split(rest, ",") {
				id = strings.TrimSpace(id)
				if !jobIDRE.MatchString(id) {
					return Selector{}, fmt.Errorf("selector %q: job id %q: want a Slurm job id (4242, 4242_7) or a local one (local-…), a step (4242.3) or an attempt (4242.3r1)", s, id)
				}
				if _, err := store.ParseJobRef(id); err != nil {
					return Selector{}, fmt.Errorf("selector %q: %w", s, err)
				}
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			return Selector{Kind: SelectJob, JobIDs: ids}, nil
		case "since":
			inner, err := ParseSelector(rest)
			if err != nil {
				return Selector{}, fmt.Errorf("selector %q: %w", s, err)
			}
			if inner.Kind == SelectSince {
				return Selector{}, fmt.Errorf("selector %q: since: of a since: selector: write since: once", s)
			}
			return Selector{Kind: SelectSince, Since: &inner}, nil
		}
		if !strings.Contains(s, "=") {
			return Selector{}, fmt.Errorf("selector %q: unknown kind %q: want run:, campaign:, baseline:, job:, since: or KEY=VALUE labels", s, kind)
		}
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return Selector{}, fmt.Errorf("selector %q: %q is not KEY=VALUE", s, kv)
		}
		if old, dup := labels[k]; dup && old != v {
			return Selector{}, fmt.Errorf("selector %q: label %q given twice", s, k)
		}
		labels[k] = v
	}
	return Selector{Kind: SelectLabels, Labels: labels}, nil
}

// jobIDRE is what Slurm and sbench local name jobs with (the runner's
// check on SLURM_JOB_ID): letters, digits, '_', '+', '-' and the step's
// '.'.
var jobIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_+.-]*$`)

func parseCampaign(s, rest string) (Selector, error) {
	name, at, hasAt := strings.Cut(rest, "@")
	if name == "" {
		return Selector{}, fmt.Errorf("selector %q: campaign name is empty", s)
	}
	sel := Selector{Kind: SelectCampaign, Campaign: name}
	if !hasAt {
		return sel, nil
	}
	if at == "latest" {
		sel.Submission = 1
		return sel, nil
	}
	if n, err := strconv.Atoi(at); err == nil {
		if n < 1 {
			return Selector{}, fmt.Errorf("selector %q: submission @%s: @1 (or @latest) is the newest, @2 the one before", s, at)
		}
		sel.Submission = n
		return sel, nil
	}
	t, err := time.Parse(time.DateOnly, at)
	if err != nil {
		return Selector{}, fmt.Errorf("selector %q: %q after @: want a date YYYY-MM-DD, latest, or N for the Nth newest submission", s, at)
	}
	sel.Day = t
	return sel, nil
}

// String returns the selector in its canonical form, which ParseSelector
// reads back to the same selector.
func (s Selector) String() string {
	switch s.Kind {
	case SelectLabels:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
			parts = append(parts, k+"="+s.Labels[k])
		}
		return strings.Join(parts, ",")
	case SelectRuns:
		return "run:" + store.FormatRunIDs(s.RunIDs)
	case SelectCampaign:
		switch {
		case s.Submission == 1:
			return "campaign:" + s.Campaign + "@latest"
		case s.Submission > 1:
			return "campaign:" + s.Campaign + "@" + strconv.Itoa(s.Submission)
		case !s.Day.IsZero():
			return "campaign:" + s.Campaign + "@" + s.Day.Format(time.DateOnly)
		}
		return "campaign:" + s.Campaign
	case SelectBaseline:
		return "baseline:" + s.Baseline
	case SelectJob:
		return "job:" + strings.Join(s.JobIDs, ",")
	case SelectSince:
		if s.Since == nil {
			return "since:"
		}
		return "since:" + s.Since.String()
	}
	return ""
}

// Filter returns the archive filter selecting the selector's runs. Labels,
// run ids, a campaign and a campaign's day need no archive (a may be nil);
// the other kinds look up baselines, jobs or runs in it. A baseline that
// does not exist, a submission or job the archive does not know, and a
// since: whose selector finds no runs give an *EmptySelectionError that
// names what there is instead.
func (s Selector) Filter(ctx context.Context, a Archive) (store.Filter, error) {
	if a == nil && (s.Kind == SelectCampaign && s.Submission > 0 || s.Kind == SelectBaseline || s.Kind == SelectJob || s.Kind == SelectSince) {
		return store.Filter{}, fmt.Errorf("selector %s: no archive to resolve it in", s)
	}
	switch s.Kind {
	case SelectLabels:
		return store.Filter{Labels: s.Labels}, nil
	case SelectRuns:
		return store.Filter{RunIDs: s.RunIDs}, nil
	case SelectCampaign:
		f := store.Filter{Campaign: s.Campaign}
		if !s.Day.IsZero() {
			f.Since, f.Until = s.Day, s.Day.AddDate(0, 0, 1)
		}
		if s.Submission > 0 {
			return s.submissionFilter(ctx, a)
		}
		return f, nil
	case SelectBaseline:
		b, err := a.Baseline(ctx, s.Baseline)
		if errors.Is(err, store.ErrNotFound) {
			return store.Filter{}, s.unknownBaseline(ctx, a, err)
		}
		if err != nil {
			return store.Filter{}, err
		}
		if len(b.RunIDs) == 0 {
			return store.Filter{}, &EmptySelectionError{Selection: "selector " + s.String(), Exists: []string{"the baseline holds no runs"}}
		}
		return store.Filter{RunIDs: b.RunIDs}, nil
	case SelectJob:
		return s.jobFilter(ctx, a)
	case SelectSince:
		if s.Since == nil {
			return store.Filter{}, errors.New("since: selector without its selector")
		}
		return s.sinceFilter(ctx, a)
	}
	return store.Filter{}, errors.New("selector is empty")
}

func (s Selector) unknownBaseline(ctx context.Context, a Archive, cause error) error {
	e := &EmptySelectionError{Selection: "selector " + s.String(), Err: cause}
	all, err := a.Baselines(ctx)
	if err != nil {
		return err
	}
	names := make([]string, len(all))
	for i, b := range all {
		names[i] = b.Name
	}
	c := "no baseline " + s.Baseline + " in the archive"
	if sug := Suggest(s.Baseline, names); len(sug) > 0 {
		c += " (did you mean " + orList(sug) + "?)"
	}
	e.Exists = append(e.Exists, c, listClause("baselines", names, ""))
	if len(names) == 0 {
		e.Exists[len(e.Exists)-1] = "no baseline is set (sbench baseline set NAME SELECTION)"
	}
	return e
}

// jobFilter selects the runs of the selector's jobs. A run names its job
// as Slurm does, an array task by its array's id and its own index: job:4242
// is every task of array 4242, job:4242_7 one of them.
func (s Selector) jobFilter(ctx context.Context, a Archive) (store.Filter, error) {
	var whole, tasks []string
	var launches []store.JobRef
	for _, id := range s.JobIDs {
		if ref, err := store.ParseJobRef(id); err == nil && !ref.Plain() {
			launches = append(launches, ref) // a step or an attempt: job:4242.3r1
			continue
		}
		if arrayOf(id) != id {
			tasks = append(tasks, id)
		} else {
			whole = append(whole, id)
		}
	}
	if len(launches) > 0 {
		for _, id := range tasks {
			ref, _ := store.ParseJobRef(id)
			launches = append(launches, ref)
		}
		return store.Filter{JobIDs: whole, Launches: launches}, nil
	}
	if len(tasks) == 0 {
		return store.Filter{JobIDs: whole}, nil
	}
	// An array task's runs cannot be told by job id alone: find them.
	query := slices.Clone(s.JobIDs)
	for _, id := range tasks {
		query = append(query, arrayOf(id))
	}
	runs, err := a.Runs(ctx, store.Filter{JobIDs: query})
	if err != nil {
		return store.Filter{}, err
	}
	var ids []int64
	for _, r := range runs {
		if slices.Contains(whole, r.JobID) || slices.Contains(tasks, r.JobID) || slices.Contains(tasks, r.JobID+"_"+r.ArrayIndex) {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		// The job ids themselves select nothing, and say so.
		return store.Filter{JobIDs: s.JobIDs}, nil
	}
	return store.Filter{RunIDs: ids}, nil
}

// submissionGap is the longest pause between two jobs of one submission
// recorded before submissions were (store.Job.Submission "") whose
// scripts do not say which submission they belong to: sbench submit calls
// sbatch once per job, seconds apart even on a busy controller; a
// campaign submitted again (after a fix, the next day) is minutes or more
// later.
const submissionGap = 2 * time.Minute

// localJobRE names the jobs of one sbench local invocation: they share
// its time stamp (local-STAMP-N, local-STAMP-N_TASK) however long each job
// ran, and so do those of sbench local --resume, which runs the rest of
// it (local-STAMP-N-resumeK).
var localJobRE = regexp.MustCompile(`^local-(.+?)-\d+(?:-resume\d+)?(?:_\d+)?$`)

// Submissions groups a campaign's jobs (in submission order, as
// store.DB.Jobs returns them) into submissions, newest first (by their
// first job). A submission is the jobs recorded with one submission id:
// one sbench submit, one sbench local with its resumes (local-STAMP, the
// prefix of its jobs' ids). Two submits seconds apart are two
// submissions.
//
// Jobs recorded before submissions were (no id) are grouped as they were
// then: an sbench local's by the stamp in their ids (as local-STAMP, so
// that a later resume continues them), an sbench submit's by the one
// directory it wrote their scripts to (scripts/TIMESTAMP), jobs recorded
// without a script each within submissionGap of the one before.
func Submissions(jobs []store.Job) [][]store.Job {
	var subs [][]store.Job
	index := map[string]int{} // a submission's id: its place in subs
	for i, j := range jobs {
		if key := submissionOf(j); key != "" {
			if k, ok := index[key]; ok {
				subs[k] = append(subs[k], j)
				continue
			}
			index[key] = len(subs)
			subs = append(subs, []store.Job{j})
			continue
		}
		// Inferred: the job before it (then the last of the last
		// submission) was submitted with it.
		if i > 0 && submissionOf(jobs[i-1]) == "" && together(jobs[i-1], j) {
			subs[len(subs)-1] = append(subs[len(subs)-1], j)
			continue
		}
		subs = append(subs, []store.Job{j})
	}
	slices.Reverse(subs)
	return subs
}

// submissionOf is the submission a job was recorded with, or for an
// sbench local job recorded before submissions were, the one its id
// names (local-STAMP); "" for other jobs recorded before.
func submissionOf(j store.Job) string {
	if j.Submission != "" {
		return j.Submission
	}
	if m := localJobRE.FindStringSubmatch(j.SlurmID); m != nil {
		return "local-" + m[1]
	}
	return ""
}

func together(prev, next store.Job) bool {
	if prev.Script != "" && next.Script != "" {
		return filepath.Dir(prev.Script) == filepath.Dir(next.Script)
	}
	return next.Submitted.Sub(prev.Submitted) <= submissionGap
}

// submissionFilter selects the runs of the campaign's Nth newest
// submission.
func (s Selector) submissionFilter(ctx context.Context, a Archive) (store.Filter, error) {
	jobs, err := a.Jobs(ctx, s.Campaign)
	if err != nil {
		return store.Filter{}, err
	}
	subs := Submissions(jobs)
	if s.Submission > len(subs) {
		e := &EmptySelectionError{Selection: "selector " + s.String()}
		switch {
		case len(subs) > 0:
			newest := subs[0][0].Submitted.UTC().Format("2006-01-02 15:04")
			e.Exists = append(e.Exists, fmt.Sprintf("campaign %s has %d submission%s (the newest on %s)", s.Campaign, len(subs), results.Plural(len(subs)), newest))
		default:
			e.Exists = append(e.Exists, "campaign "+s.Campaign+" has no recorded jobs (submissions are what sbench submit and sbench local record)")
			all, err := a.Jobs(ctx, "")
			if err != nil {
				return store.Filter{}, err
			}
			set := map[string]bool{}
			for _, j := range all {
				set[j.Campaign] = true
			}
			e.Exists = append(e.Exists, listClause("campaigns with jobs", slices.Sorted(maps.Keys(set)), s.Campaign))
		}
		return store.Filter{}, e
	}
	var ids []string
	for _, j := range subs[s.Submission-1] {
		// The runs of an array name it by the array's id.
		for _, id := range []string{j.SlurmID, arrayOf(j.SlurmID)} {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return store.Filter{Campaign: s.Campaign, JobIDs: ids}, nil
}

// sinceFilter selects the runs that started after the newest run of the
// inner selector, its own runs left out: "what ran since the baseline".
func (s Selector) sinceFilter(ctx context.Context, a Archive) (store.Filter, error) {
	f, err := s.Since.Filter(ctx, a)
	if err != nil {
		return store.Filter{}, err
	}
	runs, err := a.Runs(ctx, f)
	if err != nil {
		return store.Filter{}, err
	}
	if len(runs) == 0 {
		return store.Filter{}, ExplainEmpty(ctx, a, "selector "+s.Since.String()+" (of "+s.String()+")", f)
	}
	var newest time.Time
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
		if r.Start.After(newest) {
			newest = r.Start
		}
	}
	if newest.IsZero() {
		return store.Filter{}, fmt.Errorf("selector %s: the runs of %s have no start time to follow", s, s.Since)
	}
	// Since is inclusive: a run that started with the newest one but is
	// not among them is after it too.
	return store.Filter{Since: newest, ExcludeRunIDs: ids}, nil
}
