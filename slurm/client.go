package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Client drives Slurm through its commands (sbatch, squeue, scontrol,
// sacct, scancel). It needs no slurmdbd and no REST daemon: what a user with
// a login shell can do, it can do. The zero value runs the real commands.
type Client struct {
	// R runs the commands; nil means Exec{}.
	R Runner
	// JobCompLoc is the jobcomp/filetxt log, if any. "" asks
	// `scontrol show config` once and uses its JobCompLoc when
	// JobCompType=jobcomp/filetxt.
	JobCompLoc string
	// Env is added to every command's environment, after this process's
	// (for example "SLURM_CONF=/tmp/lab/etc/slurm.conf").
	Env []string

	mu         sync.Mutex
	configRead bool   // scontrol show config answered
	configLoc  string // its JobCompLoc, "" if jobcomp is not filetxt
}

// SubmitOptions are how sbatch is run.
type SubmitOptions struct {
	Dir string // sbatch's working directory, which becomes the job's
	// Env is added to this process's environment for sbatch; the job
	// inherits it (SLURM_CONF, SBENCH_TOKEN…) since sbatch exports it by
	// default — an --export=NONE in Args would drop it.
	Env  []string
	Args []string // sbatch options, one per element, before the script
}

func (c *Client) runner() Runner {
	if c.R == nil {
		return Exec{}
	}
	return c.R
}

func (c *Client) run(ctx context.Context, argv, env []string, dir string) ([]byte, []byte, error) {
	var full []string
	if len(c.Env)+len(env) > 0 {
		// os/exec keeps the last of duplicate keys, so ours win.
		full = append(append(os.Environ(), c.Env...), env...)
	}
	return c.runner().Run(ctx, argv, full, dir)
}

// Submit submits script with `sbatch --parsable [o.Args...] script` and
// returns the job id. An sbatch failure becomes an error quoting sbatch's
// message ("sbatch: error: Batch job submission failed: …").
func (c *Client) Submit(ctx context.Context, script string, o SubmitOptions) (string, error) {
	if script == "" {
		return "", errors.New("submit: no script")
	}
	arg := script
	if strings.HasPrefix(arg, "-") {
		arg = "./" + arg // a file, not an option
	}
	argv := append(append([]string{"sbatch", "--parsable"}, o.Args...), arg)
	stdout, stderr, err := c.run(ctx, argv, o.Env, o.Dir)
	if err != nil {
		return "", cmdError(ctx, "submit "+script, stdout, stderr, err)
	}
	id, err := parseParsable(stdout)
	if err != nil {
		return "", fmt.Errorf("submit %s: %w", script, err)
	}
	return id, nil
}

// parseParsable reads sbatch --parsable's "1234" or "1234;cluster".
func parseParsable(stdout []byte) (string, error) {
	var last string
	for _, l := range strings.Split(string(stdout), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			last = l
		}
	}
	id, _, _ := strings.Cut(last, ";")
	if !validJobID(id) {
		return "", fmt.Errorf("sbatch --parsable printed %q, not a job id", clip(last, 80))
	}
	return id, nil
}

// Cancel cancels jobs with one `scancel -v IDS…`. Jobs that already ended
// are not an error (cancelling is idempotent); ids Slurm does not know are.
// scancel exits 0 for both, so its verbose messages are what tell them apart.
func (c *Client) Cancel(ctx context.Context, ids []string) error {
	ids, err := cleanIDs(ids)
	if err != nil || len(ids) == 0 {
		return err
	}
	argv := append([]string{"scancel", "-v"}, ids...)
	stdout, stderr, err := c.run(ctx, argv, nil, "")
	if err != nil {
		return cmdError(ctx, "cancel "+strings.Join(ids, ","), stdout, stderr, err)
	}
	var problems []string
	for _, l := range strings.Split(string(stderr), "\n") {
		// scancel: error: Kill job error on job id 999: Invalid job id specified
		_, rest, ok := strings.Cut(l, "error on job id ")
		if !ok {
			continue
		}
		id, msg, _ := strings.Cut(rest, ":")
		msg = strings.TrimSpace(msg)
		if strings.Contains(msg, "already completing or completed") {
			continue
		}
		problems = append(problems, fmt.Sprintf("job %s: %s", id, msg))
	}
	if len(problems) > 0 {
		return fmt.Errorf("cancel %s: %s", strings.Join(ids, ","), strings.Join(problems, "; "))
	}
	return nil
}

// cmdError is the error of Slurm command what that failed: what it said,
// unless ctx ended it.
func cmdError(ctx context.Context, what string, stdout, stderr []byte, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %s (%w)", what, errorText(stderr, stdout), err)
}

// errorText picks what a failed Slurm command said: its lines mentioning
// an error, else all it printed, in one line.
func errorText(stderr, stdout []byte) string {
	text := stderr
	if len(bytes.TrimSpace(text)) == 0 {
		text = stdout
	}
	var all, errs []string
	for _, l := range strings.Split(string(text), "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		all = append(all, l)
		if strings.Contains(strings.ToLower(l), "error") {
			errs = append(errs, l)
		}
	}
	if len(errs) > 0 {
		all = errs
	}
	if len(all) == 0 {
		return "no message"
	}
	return clip(strings.Join(all, "; "), 500)
}

// validJobID accepts what sbatch prints and what squeue shows for array and
// heterogeneous job components: 1234, 1234_7, 1234+1. It keeps anything
// that could be read as an option or a list out of argv.
func validJobID(id string) bool {
	digits := func(s string) bool { return s != "" && len(s) <= 20 && strings.Trim(s, "0123456789") == "" }
	if base, idx, ok := strings.Cut(id, "_"); ok {
		return digits(base) && digits(idx)
	}
	if base, comp, ok := strings.Cut(id, "+"); ok {
		return digits(base) && digits(comp)
	}
	return digits(id)
}

// cleanIDs trims, checks and de-duplicates ids, keeping their order.
func cleanIDs(ids []string) ([]string, error) {
	out := make([]string, 0, len(ids))
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if !validJobID(id) {
			return nil, fmt.Errorf("job id %q: not a Slurm job id", clip(id, 40))
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}
