package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/runner"
	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
	"github.com/sbench/sbench/templates"
)

// localRun is what sbench local needs to start a campaign's steps.
type localRun struct {
	e          *env
	camp       *templates.Campaign
	runnerPath string
	ranks      int // -n
	verbose    bool
	notes      map[string]bool
	// labels are --label's, added to every run (over the campaign's).
	labels map[string]string
	// host is this machine's name, for the label of runs whose nodes are
	// all this host.
	host string
	// mpirun starts the steps whose launcher is srun --mpi=PLUGIN
	// (mpirunArgs its options), as srun's MPI plugins need a slurmstepd.
	mpirun     string
	mpirunArgs []string
}

// localHostLabel labels the runs sbench local placed on several nodes,
// which were all this host: their "inter-node" results never crossed a
// network.
const localHostLabel = "local_host"

// mpiUnderSrun reports whether a step runs an MPI program that srun would
// start through one of its MPI plugins (launcher.mpi = "pmix", "pmi2" …):
// locally there is no slurmstepd to serve PMIx or PMI-2, so each rank's
// MPI_Init would abort; sbench local starts such a step with mpirun.
func mpiUnderSrun(st templates.Step) bool {
	l := st.Config.Launcher
	return (l.Type == "" || l.Type == "srun") && l.MPI != "" && l.MPI != "none" && st.Benchmark.Kernel == ""
}

// findLocalMPIRun finds the mpirun that starts the plan's steps whose
// launcher is srun with an MPI plugin, and the options that let it start
// them here: "" when no step needs one, an error saying what to do when
// one does and there is none.
func findLocalMPIRun(plan *templates.Plan) (string, []string, error) {
	var need []string
	for _, j := range plan.Jobs {
		for _, st := range j.AllSteps() {
			if mpiUnderSrun(st) {
				need = append(need, fmt.Sprintf("%s (srun --mpi=%s)", st.Benchmark.Name, st.Config.Launcher.MPI))
			}
		}
	}
	if len(need) == 0 {
		return "", nil, nil
	}
	slices.Sort(need)
	need = slices.Compact(need)
	path, err := exec.LookPath("mpirun")
	if err != nil {
		return "", nil, fmt.Errorf("local: %s launch MPI programs through srun's MPI plugin, which needs Slurm; sbench local starts them with mpirun, and there is no mpirun in PATH: install the MPI they were built with (Debian: openmpi-bin), or run the campaign under Slurm (sbench submit)", strings.Join(need, ", "))
	}
	out, _ := exec.Command(path, "--version").CombinedOutput()
	var args []string
	if v := string(out); strings.Contains(v, "Open MPI") || strings.Contains(v, "OpenRTE") || strings.Contains(v, "Open RTE") {
		// Every rank on this host, however many cores it has, unbound so
		// that ranks can share a core.
		args = []string{"--oversubscribe", "--bind-to", "none"}
		if os.Geteuid() == 0 {
			args = append(args, "--allow-run-as-root")
		}
	}
	return path, args, nil
}

// localMPIRunArgv is the mpirun command line that starts a step meant for
// srun --mpi=PLUGIN with ranks ranks on this host.
func (l *localRun) localMPIRunArgv(ranks int) []string {
	argv := []string{l.mpirun, "-np", strconv.Itoa(ranks)}
	if len(l.mpirunArgs) > 0 { // Open MPI
		argv = append(argv, "--host", "localhost:"+strconv.Itoa(ranks))
	}
	return append(argv, l.mpirunArgs...)
}

// withLabels returns runner arguments with labels set: a --label of the
// same key already there is replaced (the runner refuses a key twice).
func withLabels(args []string, labels map[string]string) []string {
	if len(labels) == 0 {
		return args
	}
	out := make([]string, 0, len(args)+2*len(labels))
	for i := 0; i < len(args); i++ {
		if args[i] == "--label" && i+1 < len(args) {
			k, _, _ := strings.Cut(args[i+1], "=")
			if _, ok := labels[k]; ok {
				i++
				continue
			}
		}
		out = append(out, args[i])
	}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, "--label", k+"="+labels[k])
	}
	return out
}

// mergedLabels is a copy of a with b's labels over it.
func mergedLabels(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	m := maps.Clone(a)
	if m == nil {
		m = map[string]string{}
	}
	maps.Copy(m, b)
	return m
}

// launchLabels are the labels sbench local adds to a launch's run: --label's,
// and local_host for a launch over several (local, fake) nodes.
func (l *localRun) launchLabels(nodes int) map[string]string {
	if nodes <= 1 {
		return l.labels
	}
	return mergedLabels(l.labels, map[string]string{localHostLabel: l.host})
}

func (l *localRun) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !l.notes[msg] {
		l.notes[msg] = true
		fmt.Fprintln(l.e.stderr, "note: "+msg)
	}
}

// runStep starts one step's launches; it returns the launches that failed
// and what became of each launch, by launch id. Every launch is bounded
// by the step's limit and its grace, as the scripts bound it.
func (l *localRun) runStep(ctx context.Context, jobID, jobName string, nodes []string, st templates.Step) ([]string, map[string]*stepOutcome) {
	if st.Ranks > 0 && l.ranks > 0 && st.Benchmark.Pairs == "" {
		st.Ranks = l.ranks
		st.PerNode = (l.ranks + st.Nodes - 1) / st.Nodes
		st.Nodes = (st.Ranks + st.PerNode - 1) / st.PerNode
	}
	if len(st.Config.Modules) > 0 {
		l.note("modules are not loaded by sbench local (%s)", strings.Join(st.Config.Modules, " "))
	}
	if len(st.Config.Setup) > 0 {
		l.note("setup lines are not run by sbench local")
	}
	var failed []string
	outs := map[string]*stepOutcome{}
	limit := st.Limit
	if limit == 0 {
		limit = templates.DefaultStepLimit
	}
	viaMPIRun := mpiUnderSrun(st)
	if viaMPIRun {
		l.note("%s: srun --mpi=%s runs here as mpirun -np N on this host (srun's MPI plugins need Slurm)", st.Benchmark.Name, st.Config.Launcher.MPI)
	}
	for _, ln := range st.Launches(nodes) {
		// The plan the runner holds the run to: the launch's fake nodes,
		// or for an MPI launcher, which starts every rank on this host,
		// one node.
		plan := templates.PlanArgs(len(ln.Nodes), ln.TasksPerNode)
		typ := st.Config.Launcher.Type
		mpiLauncher := viaMPIRun || typ != "" && typ != "srun"
		if mpiLauncher {
			plan = templates.PlanArgs(1, ln.Ranks)
		}
		args := append(append(append(append([]string(nil), st.RunnerArgs...), ln.Args...), plan...), "--step", ln.ID, "--session", jobID+"."+ln.ID)
		args = withLabels(args, l.launchLabels(len(ln.Nodes)))
		if len(ln.Nodes) > 1 && !l.notes["one-host "+st.Variant.Name] {
			l.notes["one-host "+st.Variant.Name] = true
			fmt.Fprintf(l.e.stderr, "warning: variant %s places ranks on %d nodes, but sbench local runs them all on this host (%s): its \"inter-node\" results never cross a network (labelled %s=%s)\n",
				st.Variant.Name, len(ln.Nodes), l.host, localHostLabel, l.host)
		}
		fmt.Fprintf(l.e.stderr, "job %s step %s %s (%s): %d rank(s) on %s\n", jobID, ln.ID, st.Benchmark.Name, st.Name, ln.Ranks, strings.Join(ln.Nodes, ","))
		log := runner.NewTailWriter(64 << 10)
		var out io.Writer = log
		if l.verbose {
			out = io.MultiWriter(log, l.e.stderr)
		}
		env := []string{"SBENCH_TOKEN=" + mustToken()}
		if l.camp.Runner.Bind == "" {
			env = append(env, "SBENCH_BIND=127.0.0.1")
		}
		for _, k := range sortedEnvKeys(st.Config.Env) {
			env = append(env, k+"="+st.Config.Env[k])
		}
		o := &stepOutcome{begin: time.Now().UTC()}
		outs[ln.ID] = o
		lctx, cancel := context.WithTimeout(ctx, limit+templates.GraceFor(limit))
		var err error
		var argv []string
		switch {
		case viaMPIRun:
			argv = l.localMPIRunArgv(ln.Ranks)
		case !mpiLauncher:
			err = runner.LocalStep{
				Runner: l.runnerPath, Args: args, Nodes: ln.Nodes, TasksPerNode: ln.TasksPerNode, Ranks: ln.Ranks,
				JobID: jobID, StepID: ln.ID, JobName: jobName, Env: env, Stdout: out, Stderr: out,
			}.Run(lctx)
		default:
			// An MPI launcher starts the ranks itself, all of them here on
			// this machine.
			argv = st.LauncherArgv(ln.Ranks, 1, ln.Ranks)
			env = append(env, st.LauncherEnv()...)
		}
		if argv != nil {
			argv = append(append(argv, l.runnerPath), args...)
			cmd := exec.CommandContext(lctx, argv[0], argv[1:]...)
			cmd.Env = append(append(os.Environ(), env...), "SLURM_JOB_ID="+jobID)
			cmd.Stdout, cmd.Stderr = out, out
			cmd.WaitDelay = 5 * time.Second
			err = cmd.Run()
		}
		timedOut := lctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		cancel()
		o.end, o.ended, o.tail = time.Now().UTC(), true, tail(log.String(), tailLines)
		switch {
		case timedOut:
			o.rc = 124
		case err != nil:
			o.rc = exitStatus(err)
		}
		if err != nil {
			if ctx.Err() != nil {
				return append(failed, ln.ID), outs
			}
			failed = append(failed, fmt.Sprintf("%s step %s (%s)", jobID, ln.ID, st.Benchmark.Name))
			if timedOut {
				err = fmt.Errorf("timed out after the step's limit of %s", limit)
			}
			fmt.Fprintf(l.e.stderr, "  failed: %v\n%s", err, indent(tail(log.String(), 8)))
		}
	}
	return failed, outs
}

// exitStatus is a launcher's exit status, or 1 when it has none (it could
// not start).
func exitStatus(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	var re interface{ ExitCode() int }
	if errors.As(err, &re) && re.ExitCode() > 0 {
		return re.ExitCode()
	}
	return 1
}

func mustToken() string {
	t, err := newToken()
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return t
}

func sortedEnvKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func newLocalCmd(e *env) *cobra.Command {
	var ranks int
	var verbose bool
	var labelFlags []string
	c := &cobra.Command{
		Use:   "local CAMPAIGN.toml [-n RANKS] [--label KEY=VALUE]...",
		Short: "Run a campaign on this machine, without Slurm",
		Long: `Local runs every job of a campaign on this machine, in the order sbench
submit would (a job waiting for another runs after it, and not at all if
that one failed). Each step's ranks start as local processes with the
SLURM_* variables srun would set: fake nodes local1, local2 … (as many as
the job allocates), block distribution, ranks talking over 127.0.0.1. A
step whose launcher is mpirun or mpiexec runs that launcher here instead,
every rank on this one host (its flavor's per-node option says so), and
the runner holds the run to that placement.
The bundles are then ingested, so "sbench report" can run at once. Jobs are
recorded in the archive like submitted ones, with ids local-TIMESTAMP-N.

A step whose launcher is srun with an MPI plugin (launcher.mpi = "pmix",
"pmi2") runs an MPI program that needs Slurm's PMI server; sbench local
starts it with mpirun -np RANKS on this host instead (Open MPI's mpirun with
--oversubscribe --bind-to none, and --allow-run-as-root as root), and
refuses at once when there is no mpirun.

All the fake nodes are this host: a step placed on several nodes (an
"inter-node" variant) prints a warning, and its runs carry the label
local_host=HOSTNAME, so that reports and compare never take them for
runs that crossed a network.

Modules and setup lines are not run locally; the environment is.
-n sets the number of ranks of every step, spread over its nodes.
--label KEY=VALUE (repeatable) labels every run, over the campaign's
labels of the same key, as sbench ingest --label does.`,
		Example: `  sbench local examples/quickstart.toml
  sbench local examples/quickstart.toml -n 4 --db /tmp/try.db && sbench report --db /tmp/try.db -o try.pdf
  sbench local --label host=laptop --label kernel=6.8 examples/quickstart.toml
  sbench local examples/tools-vs-native.toml && sbench report --group-by family -o tools.pdf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ranks < 0 {
				return usagef("local: -n %d: want a positive rank count", ranks)
			}
			labels, err := parseLabels("local: --label", labelFlags)
			if err != nil {
				return err
			}
			camp, err := loadCampaign(args[0])
			if err != nil {
				return err
			}
			runnerPath, err := findRunner(camp.RunnerPath())
			if err != nil {
				return err
			}
			plan, err := camp.Plan()
			if err != nil {
				return err
			}
			mpirun, mpirunArgs, err := findLocalMPIRun(plan)
			if err != nil {
				return err
			}
			host, _ := os.Hostname()
			if host == "" {
				host = "localhost"
			}
			db, err := openDB(e)
			if err != nil {
				return err
			}
			defer db.Close()
			ctx := cmd.Context()
			resultsDir, err := filepath.Abs(camp.ResultsDir())
			if err != nil {
				return err
			}
			if err := os.MkdirAll(resultsDir, 0o755); err != nil {
				return err
			}
			l := &localRun{e: e, camp: camp, runnerPath: runnerPath, ranks: ranks, verbose: verbose, notes: map[string]bool{},
				labels: labels, host: host, mpirun: mpirun, mpirunArgs: mpirunArgs}
			var total ingestSummary
			var failedSteps []string
			lost := 0
			jobOK := make([]bool, len(plan.Jobs))
			stamp, err := localStamp(resultsDir)
			if err != nil {
				return err
			}
			for ji, j := range plan.Jobs {
				tasks := [][]templates.Step{j.Steps}
				if len(j.Tasks) > 0 {
					tasks = j.Tasks
				}
				blocked := ""
				for _, d := range j.DependsOn {
					if !jobOK[d] {
						blocked = plan.Jobs[d].File
					}
				}
				nodes := make([]string, j.Alloc.Nodes.Max)
				for i := range nodes {
					nodes[i] = "local" + strconv.Itoa(i+1)
				}
				jobOK[ji] = true
				steps := plannedSteps(camp, j)
				for i := range steps {
					if ls := l.launchLabels(steps[i].Nodes); len(ls) > 0 {
						steps[i].Labels = mergedLabels(steps[i].Labels, ls)
					}
				}
				for ti, taskSteps := range tasks {
					jobID := fmt.Sprintf("local-%s-%d", stamp, j.Index+1)
					task := ""
					if len(j.Tasks) > 0 {
						task = strconv.Itoa(ti)
						jobID += "_" + task
					}
					variants := j.Variants
					if len(j.Tasks) > 0 && len(taskSteps) > 0 {
						variants = []string{taskSteps[0].Variant.Name}
					}
					var planned []store.PlannedStep
					for _, ps := range steps {
						if ps.Task == task {
							ps.Task = ""
							planned = append(planned, ps)
						}
					}
					job := store.Job{SlurmID: jobID, Campaign: camp.Campaign.Name, Variants: variants, Name: j.JobName,
						ResultsDir: resultsDir, Submitted: time.Now(), State: "RUNNING", Start: time.Now(), NodeList: strings.Join(nodes, ","),
						Plan: planned}
					if job.ID, err = db.RecordJob(ctx, job); err != nil {
						return err
					}
					job.State, job.ExitCode = "COMPLETED", "0:0"
					if blocked != "" {
						job.State, job.Reason = "CANCELLED", slurm.ReasonDependencyNeverSatisfied
						job.Start = time.Time{}
						fmt.Fprintf(e.stderr, "job %s skipped: it waits for %s, which failed\n", jobID, blocked)
						jobOK[ji] = false
					}
					outs := map[string]*stepOutcome{}
					for _, st := range taskSteps {
						if blocked != "" {
							break
						}
						failed, stepOuts := l.runStep(ctx, jobID, j.JobName, nodes, st)
						maps.Copy(outs, stepOuts)
						if ctx.Err() != nil {
							job.State, job.Reason, job.End = "CANCELLED", "interrupted", time.Now()
							db.UpdateJob(context.WithoutCancel(ctx), job)
							return ctx.Err()
						}
						if len(failed) > 0 {
							job.State, job.ExitCode, job.Reason = "FAILED", "1:0", "NonZeroExitCode"
							failedSteps = append(failedSteps, failed...)
							jobOK[ji] = false
						}
					}
					job.End = time.Now()
					if err := db.UpdateJob(ctx, job); err != nil {
						return err
					}
					// Every planned step ends as a run: those whose launcher
					// failed before the runner wrote a bundle (or that never
					// ran) are archived as failed, with what they printed.
					n, err := archiveJob(ctx, e, db, job, map[string]map[string]*stepOutcome{"": outs}, &total)
					if err != nil {
						return err
					}
					total.added += n
					lost += n
				}
			}
			fmt.Fprintf(e.stdout, "%d run(s) from %d job(s) archived in %s (results in %s)\n", total.added, len(plan.Jobs), e.db, camp.ResultsDir())
			if lost > 0 {
				fmt.Fprintf(e.stdout, "%d of them failed before sbench-runner wrote a bundle: archived as failed runs with their launcher's output\n", lost)
			}
			if len(failedSteps) > 0 {
				return exitError{code: exitGate, msg: fmt.Sprintf("local: %d step(s) failed: %s (archived as failed runs: sbench runs --status failed)", len(failedSteps), strings.Join(failedSteps, ", "))}
			}
			fmt.Fprintf(e.stdout, "next: sbench report --db %s -o report.pdf\n", e.db)
			return nil
		},
	}
	c.Flags().IntVarP(&ranks, "ranks", "n", 0, "ranks per step (default: the variant's nodes × tasks per node)")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "show the runner's output")
	c.Flags().StringArrayVar(&labelFlags, "label", nil, "label every run KEY=VALUE (repeatable)")
	return c
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}

// localStamp names one sbench local run: the time to the millisecond and
// random hex, so that two runs started in the same second (or on two
// machines sharing a results directory) never share a job id, whose
// bundles would overwrite each other's.
func localStamp(resultsDir string) (string, error) {
	for range 8 {
		var b [3]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("local job id: %w", err)
		}
		stamp := time.Now().UTC().Format("20060102T150405.000") + "-" + hex.EncodeToString(b[:])
		stamp = strings.Replace(stamp, ".", "", 1)
		if m, _ := filepath.Glob(filepath.Join(resultsDir, "local-"+stamp+"-*")); len(m) == 0 {
			return stamp, nil
		}
	}
	return "", errors.New("local job id: no unused id after 8 tries")
}
