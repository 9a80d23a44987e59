package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/jobs"
	"github.com/sbench/sbench/runner"
	"github.com/sbench/sbench/slurm"
	"github.com/sbench/sbench/store"
)

// localRun is what sbench local needs to start a campaign's steps.
type localRun struct {
	e          *env
	camp       *campaign.Campaign
	campFile   string
	runnerPath string
	ranks      int // -n
	verbose    bool
	notes      map[string]bool
	// labels are --label's, added to every run (over the campaign's).
	labels map[string]string
	// host is this machine's name, for the label of runs whose nodes are
	// all this host.
	host string
	// mpirun starts the steps whose launcher is srun --mpi=PLUGIN, as
	// srun's MPI plugins need a slurmstepd.
	mpirun string
	// resultsDir is the campaign's results directory, absolute; the
	// ranks' rendezvous files are in its .rendezvous.
	resultsDir string
	// openMPI says, by launcher command, whether it is Open MPI's (its
	// --version), for launchers whose flavor does not say.
	openMPI map[string]bool
	// cores is how many cores Open MPI's mpirun gives slots to here (0:
	// not known).
	cores int
	// abort is closed by a second Ctrl-C: the running step is killed at
	// once, and nothing more is archived.
	abort <-chan struct{}
	// resume is what --resume found of the run it resumes; nil otherwise.
	resume *resumeState
	// stopped names the launch a signal stopped.
	stopped string

	// What a run holds while it runs the plan (runLocal).
	db   *store.DB
	arch *jobs.Archiver
	sigs *interrupts
	// keep archives what finished whatever the first signal interrupted;
	// stepCtx ends the steps with the signal's cause.
	keep, stepCtx context.Context
	stamp         string
	jobOK         []bool // by job of the plan: it ran, and every step succeeded
	failedSteps   []string
	// lost counts the launches that left no bundle; the others count
	// the plan's jobs and steps run, and those to run.
	lost, jobsRun, stepsRun, toRun int
}

// localHostLabel labels the runs sbench local placed on several nodes,
// which were all this host: their "inter-node" results never crossed a
// network.
const localHostLabel = "local_host"

// localKillWait is how long the ranks of a step sbench local stops (a
// Ctrl-C, the step's limit) have before SIGKILL: a rank stops its tool
// within 4 s (runner/exec.go), then rank 0 writes the run's bundle.
const localKillWait = 10 * time.Second

// mpiUnderSrun reports whether a step runs an MPI program that srun would
// start through one of its MPI plugins (launcher.mpi = "pmix", "pmi2" …):
// locally there is no slurmstepd to serve PMIx or PMI-2, so each rank's
// MPI_Init would abort; sbench local starts such a step with mpirun.
func mpiUnderSrun(st campaign.Step) bool {
	l := st.Config.Launcher
	return (l.Type == "" || l.Type == "srun") && l.MPI != "" && l.MPI != "none" && st.Benchmark.Kernel == ""
}

// mpiLauncher reports whether sbench local starts a step through an MPI
// launcher, once for all its ranks: its own mpirun or mpiexec, or mpirun
// for srun --mpi.
func mpiLauncher(st campaign.Step) bool {
	typ := st.Config.Launcher.Type
	return mpiUnderSrun(st) || typ != "" && typ != "srun"
}

// findLocalMPIRun finds the mpirun that starts the plan's steps whose
// launcher is srun with an MPI plugin: "" when no step needs one, an error
// saying what to do when one does and there is none.
func findLocalMPIRun(plan *campaign.Plan) (string, error) {
	var need []string
	for _, j := range plan.Jobs {
		for _, st := range j.AllSteps() {
			if mpiUnderSrun(st) {
				need = append(need, fmt.Sprintf("%s (srun --mpi=%s)", st.Benchmark.Name, st.Config.Launcher.MPI))
			}
		}
	}
	if len(need) == 0 {
		return "", nil
	}
	slices.Sort(need)
	need = slices.Compact(need)
	path, err := exec.LookPath("mpirun")
	if err != nil {
		return "", fmt.Errorf("local: %s launch MPI programs through srun's MPI plugin, which needs Slurm; sbench local starts them with mpirun, and there is no mpirun in PATH: install the MPI they were built with (Debian: openmpi-bin), or run the campaign under Slurm (sbench submit)", strings.Join(need, ", "))
	}
	return path, nil
}

// checkMPIUnderPlainSrun refuses a plan whose steps start an MPI program
// (one that loads an MPI library) under srun without an MPI plugin. Here
// each rank would start its copy alone, with the SLURM_* variables of a
// step srun started but no PMI server, and MPI_Init aborts ("Local abort
// before MPI_INIT"); under Slurm it works only where the site's default
// plugin (MpiDefault) serves it. The message says which launcher to use.
func checkMPIUnderPlainSrun(plan *campaign.Plan) error {
	var bad []string
	seen := map[[2]string]bool{} // benchmark, program
	for _, j := range plan.Jobs {
		for _, st := range j.AllSteps() {
			b := st.Benchmark
			if mpiLauncher(st) || b.Kernel != "" {
				continue
			}
			argvs := [][]string{b.Command}
			for _, r := range slices.Sorted(maps.Keys(b.PerRank)) {
				argvs = append(argvs, b.PerRank[r])
			}
			for _, argv := range argvs {
				if len(argv) == 0 || seen[[2]string{b.Name, argv[0]}] {
					continue
				}
				seen[[2]string{b.Name, argv[0]}] = true
				if lib, _, _ := runner.ToolMPILibrary(argv[0], "", os.Getenv); lib != "" {
					bad = append(bad, fmt.Sprintf("%s (%s loads %s)", b.Name, argv[0], filepath.Base(lib)))
				}
			}
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return usagef("local: %s: an MPI program launched by srun without an MPI plugin: here each rank would start it alone, and MPI_Init aborts (\"Local abort before MPI_INIT\"). "+
		"Give the benchmark (or [launcher]) an MPI launcher, which sbench local starts once per step with all its ranks, as the job script does: "+
		"launcher = { type = \"mpirun\", flavor = \"openmpi\" } (mpiexec with flavor mpich or intelmpi for those MPIs); "+
		"or srun's MPI plugin, launcher = { type = \"srun\", mpi = \"pmix\" }, which sbench local starts with mpirun", strings.Join(bad, ", "))
}

// mpiLaunch is the command line (up to the runner), and what it adds to
// the environment, that starts a launch of ranks ranks of st through an
// MPI launcher on this host, as the job script's launch line does: the
// step's mpirun or mpiexec (the mpirun in PATH for srun --mpi) with -np,
// adapted to one host (campaign.Step.LocalLauncherArgv). Open MPI's
// mpirun gives each core one slot, and refuses to run as root: it gets
// what it needs for the launch to start here, and a note says so.
func (l *localRun) mpiLaunch(st campaign.Step, ranks int) (argv, env []string) {
	flavor := st.Config.Launcher.Flavor
	if mpiUnderSrun(st) {
		argv, flavor = []string{l.mpirun, "-np", strconv.Itoa(ranks)}, ""
	} else {
		var dropped []string
		argv, dropped = st.LocalLauncherArgv(ranks)
		env = st.LauncherEnv()
		if len(dropped) > 0 {
			l.note("%s: launcher args %s place ranks on the cluster's nodes, which cannot hold on this one host: sbench local leaves them out", st.Benchmark.Name, strings.Join(dropped, " "))
		}
	}
	if !l.isOpenMPI(argv[0], flavor) {
		return argv, env
	}
	if l.cores == 0 || ranks > l.cores {
		// Open MPI drops its default binding when oversubscribed, but not
		// a --bind-to of the user's: the last --bind-to is the one it takes.
		argv = append(argv, "--oversubscribe", "--bind-to", "none")
		cores := "an unknown number of"
		if l.cores > 0 {
			cores = strconv.Itoa(l.cores)
		}
		l.note("%s: %d ranks on %s cores: Open MPI's mpirun starts one rank per core unless told, so sbench local passes it --oversubscribe --bind-to none: the ranks share cores, unbound, and their results show it", st.Benchmark.Name, ranks, cores)
	}
	if os.Geteuid() == 0 && !slices.Contains(argv, "--allow-run-as-root") && !rootAllowed(st.Config.Env) {
		argv = append(argv, "--allow-run-as-root")
		l.note("running as root: Open MPI's mpirun refuses to start ranks as root unless told, so sbench local passes it --allow-run-as-root")
	}
	return argv, env
}

// rootAllowed reports whether the launch's environment (the step's env
// over sbench's) already lets Open MPI run as root.
func rootAllowed(stepEnv map[string]string) bool {
	get := func(k string) string {
		if v, ok := stepEnv[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	return get("OMPI_ALLOW_RUN_AS_ROOT") == "1" && get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM") == "1"
}

// isOpenMPI reports whether launcher is Open MPI's: as its flavor says,
// else as its --version does (asked once per launcher).
func (l *localRun) isOpenMPI(launcher, flavor string) bool {
	switch flavor {
	case campaign.FlavorOpenMPI:
		return true
	case campaign.FlavorMPICH, campaign.FlavorIntelMPI:
		return false
	}
	if v, ok := l.openMPI[launcher]; ok {
		return v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, launcher, "--version")
	cmd.WaitDelay = time.Second // a wrapper's child holding the pipe
	out, _ := cmd.CombinedOutput()
	v := string(out)
	l.openMPI[launcher] = strings.Contains(v, "Open MPI") || strings.Contains(v, "OpenRTE") || strings.Contains(v, "Open RTE")
	return l.openMPI[launcher]
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
	m := make(map[string]string, len(a)+len(b))
	maps.Copy(m, a)
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
// by the step's limit and its grace, as the scripts bound it. When ctx
// ends (a Ctrl-C), the running launch is stopped, its ranks told with the
// signal ctx's cause names (runner.StopSignal), and no other starts.
func (l *localRun) runStep(ctx context.Context, jobID, jobName string, nodes []string, st campaign.Step) ([]string, map[string]*jobs.Outcome) {
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
	outs := map[string]*jobs.Outcome{}
	limit := cmp.Or(st.Limit, campaign.DefaultStepLimit)
	if mpiUnderSrun(st) {
		l.note("%s: srun --mpi=%s runs here as mpirun -np N on this host (srun's MPI plugins need Slurm)", st.Benchmark.Name, st.Config.Launcher.MPI)
	}
	for _, ln := range st.Launches(nodes) {
		if ctx.Err() != nil {
			break
		}
		// The plan the runner holds the run to: the launch's fake nodes,
		// or for an MPI launcher, which starts every rank on this host,
		// one node.
		plan := campaign.PlanArgs(len(ln.Nodes), ln.TasksPerNode)
		if mpiLauncher(st) {
			plan = campaign.PlanArgs(1, ln.Ranks)
		}
		args := slices.Concat(st.RunnerArgs, ln.Args, plan, []string{"--step", ln.ID, "--session", jobID + "." + ln.ID})
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
		env := []string{"SBENCH_TOKEN=" + newToken()}
		if l.camp.Runner.Bind == "" && l.camp.Runner.Interface == "" {
			env = append(env, "SBENCH_BIND=127.0.0.1")
		}
		for _, k := range slices.Sorted(maps.Keys(st.Config.Env)) {
			env = append(env, k+"="+st.Config.Env[k])
		}
		o := &jobs.Outcome{Begin: time.Now().UTC()}
		outs[ln.ID] = o
		lctx, cancel := context.WithTimeout(ctx, limit+campaign.GraceFor(limit))
		var err error
		if mpiLauncher(st) {
			// An MPI launcher starts the ranks itself, all of them here on
			// this machine.
			argv, lenv := l.mpiLaunch(st, ln.Ranks)
			err = runner.LauncherStep{
				Argv: append(append(argv, l.runnerPath), args...), Runner: l.runnerPath,
				Env:    runner.LocalEnv(append(append(env, lenv...), "SLURM_JOB_ID="+jobID)...),
				Stdout: out, Stderr: out, KillWait: localKillWait, Abort: l.abort,
			}.Run(lctx)
		} else {
			err = runner.LocalStep{
				Runner: l.runnerPath, Args: args, Nodes: ln.Nodes, TasksPerNode: ln.TasksPerNode, Ranks: ln.Ranks,
				JobID: jobID, StepID: ln.ID, JobName: jobName, Env: env, Stdout: out, Stderr: out,
				KillWait: localKillWait, Abort: l.abort,
			}.Run(lctx)
		}
		timedOut := lctx.Err() == context.DeadlineExceeded && ctx.Err() == nil
		cancel()
		l.clearLaunch(jobID, ln.ID)
		o.End, o.Ended, o.Tail = time.Now().UTC(), true, tail(log.String(), jobs.TailLines)
		switch {
		case timedOut:
			o.RC = 124
		case err != nil:
			o.RC = exitStatus(err)
		}
		if ctx.Err() != nil {
			// Stopped under way: a launch that left no bundle is archived
			// as one that did not end, the job's reason saying why.
			o.Ended = false
			l.stopped = fmt.Sprintf("job %s step %s (%s)", jobID, ln.ID, st.Benchmark.Name)
			return append(failed, ln.ID), outs
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s step %s (%s)", jobID, ln.ID, st.Benchmark.Name))
			if timedOut {
				err = fmt.Errorf("timed out after the step's limit of %s", limit)
			}
			fmt.Fprintf(l.e.stderr, "  failed: %v\n%s", err, indent(tail(log.String(), 8)))
		}
	}
	return failed, outs
}

// clearLaunch removes what a launch's ranks leave behind when they are
// killed: rank 0's rendezvous file, which it removes itself when it ends
// (its session is JOB.LAUNCH, and the runner's run directory the results
// directory's .rendezvous), and a bundle it had not finished writing.
func (l *localRun) clearLaunch(jobID, launch string) {
	os.Remove(filepath.Join(l.resultsDir, ".rendezvous", jobID+"."+launch+".addr"))
	tmps, _ := filepath.Glob(filepath.Join(l.resultsDir, "."+jobs.GlobEscape(jobID+"."+launch)+".*.tmp*"))
	for _, f := range tmps {
		os.Remove(f)
	}
}

// exitStatus is a launcher's exit status, or 1 when it has none (it could
// not start).
func exitStatus(err error) int {
	var re interface{ ExitCode() int }
	if errors.As(err, &re) && re.ExitCode() > 0 {
		return re.ExitCode()
	}
	return 1
}

// localOptions are local's flags.
type localOptions struct {
	ranks   int
	verbose bool
	labels  []string
	resume  bool
	site    string
}

func newLocalCmd(e *env) *cobra.Command {
	var o localOptions
	c := &cobra.Command{
		Use:   "local CAMPAIGN.toml [-n RANKS] [--label KEY=VALUE]... [--resume]",
		Short: "Run a campaign on this machine, without Slurm",
		Long: `Local runs every job of a campaign on this machine, in the order sbench
submit would (a job waiting for another runs after it, and not at all if
that one failed). Each step's ranks start as local processes with the
SLURM_* variables srun would set: fake nodes local1, local2 … (as many as
the job allocates), block distribution, ranks talking over 127.0.0.1.
The bundles are then ingested, so "sbench report" can run at once. Jobs are
recorded in the archive like submitted ones, with ids local-TIMESTAMP-N.

A step whose launcher is mpirun or mpiexec (an MPI tool such as IMB-MPI1)
runs that launcher here once, with -np RANKS, as the job script does,
every rank on this one host (its flavor's per-node option says so), and
the runner holds the run to that placement. Launcher args that place
ranks on the cluster's nodes (a host list or file, -ppn, --map-by …)
cannot hold on one host and are left out, with a note. Open MPI's mpirun
gets --oversubscribe --bind-to none when the ranks outnumber this host's
cores, and --allow-run-as-root as root, each with a note. A step whose
launcher is srun with an MPI plugin (launcher.mpi = "pmix", "pmi2") needs
Slurm's PMI server; sbench local starts it with the mpirun in PATH instead,
and refuses at once when there is none. An MPI program under srun without
a plugin is refused: each rank would start it alone.

Ctrl-C (SIGINT) or SIGTERM stops the running step in order: its ranks are
told (a Ctrl-C as SIGINT), stop their tools and write the run's bundle,
which is archived as failed ("interrupted by Ctrl-C"); everything that
finished before is archived, the rendezvous files are removed, and the
command that runs the rest is printed: sbench local CAMPAIGN.toml --resume
(with the same --db, -n and --label). A second Ctrl-C kills the step at
once and archives nothing more; --resume archives what finished then.
--resume continues the campaign's last local run in the archive: it
archives what that run left unarchived (a run killed outright), then runs,
as new jobs (ids local-TIMESTAMP-N-resumeK), every step that has no run,
or whose runs all failed. It refuses when the campaign no longer plans
what that run did.

All the fake nodes are this host: a step placed on several nodes (an
"inter-node" variant) prints a warning, and its runs carry the label
local_host=HOSTNAME, so that reports and compare never take them for
runs that crossed a network.

Modules and setup lines are not run locally; the environment is.
-n sets the number of ranks of every step, spread over its nodes.
--label KEY=VALUE (repeatable) labels every run, over the campaign's
labels of the same key, as sbench ingest --label does.

A site profile (--site FILE, $SBENCH_SITE or ~/.config/sbench/site.toml;
see docs/site-profile.md) gives the campaign its defaults as for submit,
and its runs the labels site_profile (name and hash), system, link_rate
and rpeak.`,
		Example: `  sbench local examples/quickstart.toml
  sbench local examples/quickstart.toml --site site-b.toml
  sbench local examples/quickstart.toml -n 4 --db /tmp/try.db && sbench report --db /tmp/try.db -o try.pdf
  sbench local --label host=laptop --label kernel=6.8 examples/quickstart.toml
  sbench local examples/tools-vs-native.toml && sbench report --group-by family -o tools.pdf
  sbench local examples/quickstart.toml --resume     # after a Ctrl-C: run what did not run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLocal(cmd.Context(), e, o, args)
		},
	}
	c.Flags().IntVarP(&o.ranks, "ranks", "n", 0, "ranks per step (default: the variant's nodes × tasks per node)")
	c.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "show the runner's output")
	c.Flags().StringArrayVar(&o.labels, "label", nil, "label every run KEY=VALUE (repeatable)")
	c.Flags().StringVar(&o.site, "site", "", siteFlagUsage)
	c.Flags().BoolVar(&o.resume, "resume", false, "continue the campaign's last local run: archive what it left, run what did not run or failed")
	return c
}

// runLocal runs the campaign of args[0] on this machine and archives its
// runs; an interrupted run says what it archived and how to run the rest.
func runLocal(ctx context.Context, e *env, o localOptions, args []string) (err error) {
	l, plan, err := newLocalRun(e, o, args[0])
	if err != nil {
		return err
	}
	// sbench must not exit before the step it stops has ended
	// and what finished is archived: main waits for critical.
	if ctx.Err() == nil {
		critical.Add(1)
		defer critical.Done()
	}
	sigs := watchInterrupts(ctx)
	defer sigs.close()
	le := *e
	le.stderr = &lockedWriter{w: e.stderr}
	e = &le
	l.e, l.sigs, l.abort = e, sigs, sigs.abortCtx.Done()
	if l.db, err = openDB(e); err != nil {
		return err
	}
	defer l.db.Close()
	if err := recordExpectations(ctx, l.db, l.camp); err != nil {
		return err
	}
	// What finished is archived whatever the first signal
	// interrupted; a second one stops that too.
	keep, cancelKeep := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelKeep()
	defer context.AfterFunc(sigs.abortCtx, cancelKeep)()
	// The steps end with the signal that ended ctx as their cause,
	// which their ranks get in turn (runner.StopSignal).
	stepCtx, cancelSteps := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelSteps(nil)
	defer context.AfterFunc(ctx, func() {
		fmt.Fprintf(e.stderr, "%s: stopping the running step, then archiving what finished (a second Ctrl-C kills the step at once)\n", interruptReason(context.Cause(ctx)))
		cancelSteps(stepCause(context.Cause(ctx)))
	})()
	l.keep, l.stepCtx = keep, stepCtx
	if l.resultsDir, err = filepath.Abs(l.camp.ResultsDir()); err != nil {
		return err
	}
	if err := os.MkdirAll(l.resultsDir, 0o755); err != nil {
		return err
	}
	l.arch = &jobs.Archiver{DB: l.db, Slurm: slurmClient(), Ingest: ingestPipeline(e, "bundle")}
	resumeCmd := resumeCommand(args[0], e.db, l.camp.Site(), o.ranks, o.labels)
	// Whatever stopped the run (a step, a job's record, an ingest),
	// an interrupted run says what it archived, and how to run
	// what did not run.
	defer func() { err = l.interrupted(ctx, err, resumeCmd) }()
	return l.runPlan(ctx, plan, o.resume)
}

// newLocalRun checks local's options and the campaign of campFile, and
// finds what runs its steps here.
func newLocalRun(e *env, o localOptions, campFile string) (*localRun, *campaign.Plan, error) {
	if o.ranks < 0 {
		return nil, nil, usagef("local: -n %d: want a positive rank count", o.ranks)
	}
	labels, err := parseLabels("local: --label", o.labels)
	if err != nil {
		return nil, nil, err
	}
	camp, err := loadCampaignSite(e, campFile, o.site)
	if err != nil {
		return nil, nil, err
	}
	runnerPath, err := findRunner(camp.RunnerPath())
	if err != nil {
		return nil, nil, err
	}
	plan, err := camp.Plan()
	if err != nil {
		return nil, nil, err
	}
	mpirun, err := findLocalMPIRun(plan)
	if err != nil {
		return nil, nil, err
	}
	if err := checkMPIUnderPlainSrun(plan); err != nil {
		return nil, nil, err
	}
	host, _ := os.Hostname()
	host = cmp.Or(host, "localhost")
	return &localRun{e: e, camp: camp, campFile: campFile, runnerPath: runnerPath, ranks: o.ranks, verbose: o.verbose, notes: map[string]bool{},
		labels: labels, host: host, mpirun: mpirun, openMPI: map[string]bool{}, cores: runner.UsableCores()}, plan, nil
}

// interrupted is what a run ctx's signal ended returns, err being what
// stopped it: what it archived, and the command that runs the rest.
func (l *localRun) interrupted(ctx context.Context, err error, resumeCmd string) error {
	if ctx.Err() == nil {
		return err
	}
	reason := interruptReason(context.Cause(ctx))
	if l.sigs.aborted() {
		return fmt.Errorf("local: aborted by a second signal: %s killed, nothing more archived (the bundles of what finished are in %s); %s archives them and runs the rest: %w",
			cmp.Or(l.stopped, "the running step"), l.camp.ResultsDir(), resumeCmd, context.Canceled)
	}
	fmt.Fprintf(l.e.stdout, "%d run(s) from %d job(s) archived in %s (results in %s)\n", l.arch.Total.Added, l.jobsRun, l.e.db, l.camp.ResultsDir())
	what := ""
	if l.stopped != "" {
		what = ", " + l.stopped + " stopped (archived as failed)"
	}
	left := l.toRun - l.stepsRun
	if err != nil && !errors.Is(err, context.Canceled) {
		// Something failed under the signal: say it, and how to
		// run what is left.
		return fmt.Errorf("local: %s%s; then: %w; %s runs the %d step(s) not run", reason, what, err, resumeCmd, left)
	}
	return fmt.Errorf("local: %s%s; %d of %d step(s) not run: %s runs them: %w", reason, what, left, l.toRun, resumeCmd, context.Canceled)
}

// runPlan runs the jobs of plan in order (with --resume, the steps the
// run it resumes did not run) and says what it archived.
func (l *localRun) runPlan(ctx context.Context, plan *campaign.Plan, resume bool) error {
	l.jobOK = make([]bool, len(plan.Jobs))
	var err error
	if resume {
		if l.resume, err = l.loadResume(l.keep, plan); err != nil {
			return err
		}
		l.stamp = l.resume.stamp
	} else if l.stamp, err = localStamp(l.resultsDir); err != nil {
		return err
	}
	for _, j := range plan.Jobs {
		for ti, taskSteps := range l.jobTasks(j) {
			l.toRun += len(l.stepsToRun(j, ti, taskSteps))
		}
	}
	if resume && l.toRun == 0 {
		fmt.Fprintf(l.e.stdout, "%d run(s) archived; every planned step of local run %s has a run that did not fail: nothing to resume\n", l.arch.Total.Added, l.stamp)
		return nil
	}
	for ji, j := range plan.Jobs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := l.runJob(ctx, plan, ji, j); err != nil {
			return err
		}
	}
	e := l.e
	fmt.Fprintf(e.stdout, "%d run(s) from %d job(s) archived in %s (results in %s)\n", l.arch.Total.Added, l.jobsRun, e.db, l.camp.ResultsDir())
	if l.lost > 0 {
		fmt.Fprintf(e.stdout, "%d of them failed before sbench-runner wrote a bundle: archived as failed runs with their launcher's output\n", l.lost)
	}
	if len(l.failedSteps) > 0 {
		return exitError{code: exitGate, msg: fmt.Sprintf("local: %d step(s) failed: %s (archived as failed runs: sbench runs --status failed)", len(l.failedSteps), strings.Join(l.failedSteps, ", "))}
	}
	fmt.Fprintf(e.stdout, "next: sbench report --db %s -o report.pdf\n", e.db)
	return nil
}

// localTask is one task of a job of the plan (the job itself when it is
// no array) as sbench local runs it.
type localTask struct {
	index int // the job's, in the plan
	job   campaign.Job
	// id is its job id, task its array index ("" for no array).
	id, task string
	steps    []campaign.Step
	planned  []store.PlannedStep
	nodes    []string
	// blocked names the job it waits for that failed; "" if none.
	blocked string
}

// runJob runs every task of job j (the ji-th of plan), unless a job it
// waits for failed.
func (l *localRun) runJob(ctx context.Context, plan *campaign.Plan, ji int, j campaign.Job) error {
	t := localTask{index: ji, job: j, nodes: localNodes(j)}
	for _, d := range j.DependsOn {
		if !l.jobOK[d] {
			t.blocked = plan.Jobs[d].File
		}
	}
	l.jobOK[ji] = true
	steps := l.plannedSteps(j)
	ran := false
	for ti, taskSteps := range l.jobTasks(j) {
		t.id, t.task = fmt.Sprintf("local-%s-%d", l.stamp, j.Index+1)+l.resume.suffix(), ""
		if len(j.Tasks) > 0 {
			t.task = strconv.Itoa(ti)
			t.id += "_" + t.task
		}
		if t.steps = l.stepsToRun(j, ti, taskSteps); len(t.steps) == 0 {
			continue // --resume: every step has its run
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		ran = true
		t.planned = nil
		for _, ps := range steps {
			if ps.Task == t.task && l.planned(t.steps, ps) {
				ps.Task = ""
				t.planned = append(t.planned, ps)
			}
		}
		if err := l.runTask(ctx, t); err != nil {
			return err
		}
	}
	if ran || l.resume == nil {
		l.jobsRun++
	}
	return nil
}

// runTask records t as a job, runs its steps and archives its runs.
func (l *localRun) runTask(ctx context.Context, t localTask) error {
	variants := t.job.Variants
	if len(t.job.Tasks) > 0 && len(t.steps) > 0 {
		variants = []string{t.steps[0].Variant.Name}
	}
	job := store.Job{SlurmID: t.id, Campaign: l.camp.Campaign.Name, Variants: variants, Name: t.job.JobName,
		ResultsDir: l.resultsDir, Submitted: time.Now(), State: "RUNNING", Start: time.Now(), NodeList: strings.Join(t.nodes, ","),
		Plan: t.planned, Submission: localSubmission(l.stamp)}
	var err error
	if job.ID, err = l.db.RecordJob(ctx, job); err != nil {
		return err
	}
	job.State, job.ExitCode = "COMPLETED", "0:0"
	if t.blocked != "" {
		job.State, job.Reason = "CANCELLED", slurm.ReasonDependencyNeverSatisfied
		job.Start = time.Time{}
		fmt.Fprintf(l.e.stderr, "job %s skipped: it waits for %s, which failed\n", t.id, t.blocked)
		l.jobOK[t.index] = false
		l.stepsRun += len(t.steps)
	}
	outs := map[string]*jobs.Outcome{}
	for _, st := range t.steps {
		if t.blocked != "" {
			break
		}
		failed, stepOuts := l.runStep(l.stepCtx, t.id, t.job.JobName, t.nodes, st)
		maps.Copy(outs, stepOuts)
		if l.stepCtx.Err() != nil {
			job.State, job.ExitCode, job.Reason = "CANCELLED", "", interruptReason(context.Cause(ctx))
			l.jobOK[t.index] = false
			break
		}
		l.stepsRun++
		if len(failed) > 0 {
			job.State, job.ExitCode, job.Reason = "FAILED", "1:0", "NonZeroExitCode"
			l.failedSteps = append(l.failedSteps, failed...)
			l.jobOK[t.index] = false
		}
	}
	if l.sigs.aborted() {
		return ctx.Err()
	}
	job.End = time.Now()
	if err := l.db.UpdateJob(l.keep, job); err != nil {
		return err
	}
	// Every planned step ends as a run: those whose launcher
	// failed before the runner wrote a bundle (or that never
	// ran) are archived as failed, with what they printed.
	n, err := l.arch.Archive(l.keep, job, jobs.Outcomes{"": outs})
	if err != nil {
		return err
	}
	l.arch.Total.Added += n
	l.lost += n
	if ctx.Err() != nil {
		l.jobsRun++
		return ctx.Err()
	}
	return nil
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
		stamp := strings.Replace(time.Now().UTC().Format("20060102T150405.000"), ".", "", 1) + "-" + randomHex(3)
		if m, _ := filepath.Glob(filepath.Join(resultsDir, "local-"+stamp+"-*")); len(m) == 0 {
			return stamp, nil
		}
	}
	return "", errors.New("local job id: no unused id after 8 tries")
}
