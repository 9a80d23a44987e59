package slurm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Attempt is how one attempt of a job ended: Slurm runs a requeued job
// again under the same id, and each run is an attempt, numbered by Slurm's
// restart count (SLURM_RESTART_COUNT: 0 for the first).
type Attempt struct {
	Restart int
	// State is the attempt's end in Slurm's words: NODE_FAIL, PREEMPTED,
	// TIMEOUT, CANCELLED, REQUEUED, COMPLETED…; Reason keeps sacct's
	// "CANCELLED by 1000" whole.
	State, Reason, ExitCode string
	NodeList                string
	Start, End              time.Time
	// Steps are the attempt's steps by step id ("0", "1", "batch"), when
	// accounting knows them (sacct); nil otherwise.
	Steps map[string]StepEnd
	// Source is SourceSacct or SourceJobComp.
	Source string
}

// attempt is the attempt j ended.
func (j JobInfo) attempt() Attempt {
	return Attempt{State: j.State, Reason: j.Reason, ExitCode: j.ExitCode, NodeList: j.NodeList, Start: j.Start, End: j.End, Source: j.Source}
}

// StepEnd is how one step of an attempt ended, as sacct says.
type StepEnd struct {
	State, Reason, ExitCode, NodeList string
}

// Attempts returns how each attempt of job id that ended is known to have
// ended, oldest first, at most restarts+1 of them (the job's attempts are
// the last ones Slurm recorded under its id: an id Slurm gave before, to
// another job, comes first). It asks accounting (sacct --duplicates, which
// lists every attempt and its steps), else the jobcomp/filetxt log (a line
// per end, the requeued ones included). note says why neither answered, if
// neither did; it is no error, as a job's attempts are a help, not a need.
func (c *Client) Attempts(ctx context.Context, id string, restarts int) ([]Attempt, string) {
	if !validJobID(id) {
		return nil, fmt.Sprintf("%q is not a job id", id)
	}
	argv := []string{"sacct", "-P", "-n", "--duplicates", "-j", id, "-o", sacctFields}
	stdout, stderr, err := c.run(ctx, argv, nil, "")
	var notes []string
	if err == nil {
		if as := parseSacctAttempts(stdout, id); len(as) > 0 {
			return lastAttempts(as, restarts), ""
		}
		notes = append(notes, "sacct: no record")
	} else {
		notes = append(notes, "sacct: "+errorText(stderr, stdout))
	}
	as, note := c.jobCompAttempts(ctx, id)
	if len(as) > 0 {
		return lastAttempts(as, restarts), ""
	}
	return nil, strings.Join(append(notes, "jobcomp: "+note), "; ")
}

// lastAttempts keeps the last restarts+1 attempts and numbers them from
// the last, which is attempt restarts: of a settled job every attempt has
// ended, and those a log lost are the oldest.
func lastAttempts(as []Attempt, restarts int) []Attempt {
	if len(as) > restarts+1 {
		as = as[len(as)-restarts-1:]
	}
	for i := range as {
		as[i].Restart = restarts - (len(as) - 1 - i)
	}
	return as
}

// parseSacctAttempts reads `sacct -P -n --duplicates -o sacctFields`: a
// job line (JobID without a dot) starts an attempt, its steps' lines
// (ID.0, ID.batch, ID.extern) follow it.
func parseSacctAttempts(out []byte, id string) []Attempt {
	var as []Attempt
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.SplitN(strings.TrimRight(l, "\r"), "|", 7)
		if len(f) != 7 {
			continue
		}
		job, step, isStep := strings.Cut(f[0], ".")
		if job != id {
			continue
		}
		j := JobInfo{State: f[1], ExitCode: f[2], NodeList: f[5], Start: parseTime(f[3]), End: parseTime(f[4]), Source: SourceSacct}.normal()
		if !isStep {
			as = append(as, j.attempt())
			continue
		}
		if len(as) == 0 {
			continue // a step before any job line: not sacct's order
		}
		a := &as[len(as)-1]
		if a.Steps == nil {
			a.Steps = map[string]StepEnd{}
		}
		a.Steps[step] = StepEnd{State: j.State, Reason: j.Reason, ExitCode: j.ExitCode, NodeList: j.NodeList}
	}
	return as
}

// jobCompAttempts reads every line the jobcomp/filetxt log has for id, in
// order: Slurm writes one each time an attempt ends.
func (c *Client) jobCompAttempts(ctx context.Context, id string) ([]Attempt, string) {
	loc, note := c.jobCompLoc(ctx)
	if loc == "" {
		return nil, note
	}
	f, err := os.Open(loc)
	if err != nil {
		return nil, err.Error()
	}
	defer f.Close()
	prefix := []byte("JobId=" + id + " ")
	var as []Attempt
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), MaxRecordLine)
	for sc.Scan() {
		if !bytes.HasPrefix(sc.Bytes(), prefix) {
			continue
		}
		rec, err := ParseRecord(sc.Text())
		if err != nil {
			continue
		}
		as = append(as, jobFromRecord(rec, SourceJobComp).attempt())
	}
	if err := sc.Err(); err != nil {
		return as, fmt.Sprintf("read %s: %v", loc, err)
	}
	if len(as) == 0 {
		return nil, "not in " + loc
	}
	return as, ""
}
