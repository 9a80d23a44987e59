package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// requireSlurm skips (or, in CI, fails) unless a test cluster is up:
// make test-slurm starts one and exports SLURM_CONF.
func requireSlurm(t *testing.T) {
	t.Helper()
	if os.Getenv("SLURM_CONF") == "" {
		testenv.Require(t, "SLURM_CONF is not set (run make test-slurm)")
	}
	testenv.LookPath(t, "sbatch", "slurm-client")
}

// slurmWorkDir skips (or, in CI, fails) unless a test cluster is up, builds
// the binaries and makes a fresh directory the current one, which it
// returns.
func slurmWorkDir(t *testing.T) string {
	t.Helper()
	requireSlurm(t)
	buildBinaries(t)
	dir := t.TempDir()
	t.Chdir(dir)
	// Ranks of the test cluster talk over loopback only.
	t.Setenv("SBENCH_BIND", "127.0.0.1")
	return dir
}

// TestSlurmQuickstart is the walking skeleton on a real Slurm: submit the
// quickstart, wait, ingest, report. The test cluster has fake nodes n1 and
// n2 on one host.
func TestSlurmQuickstart(t *testing.T) {
	requireSlurm(t)
	buildBinaries(t)
	root := repoRoot(t)
	campaign := filepath.Join(root, "examples/quickstart.toml")
	// Both variants are steps of one job.
	dir, db, ids, stdout := slurmRun(t, campaign, "quickstart", 1, 4)
	for _, id := range ids {
		if !strings.Contains(stdout, id) || !strings.Contains(stdout, "COMPLETED") {
			t.Errorf("status output lacks job %s COMPLETED:\n%s", id, stdout)
		}
	}

	// Every variant has samples; the inter-node one ran on n1 and n2.
	out, _, _ := sbench(t, "runs", "--db", db, "--json")
	for _, want := range []string{`"variant": "ntasks_per_node=1"`, `"variant": "ntasks_per_node=2"`, `"n1"`, `"n2"`} {
		if !strings.Contains(out, want) {
			t.Errorf("runs --json lacks %s:\n%s", want, out)
		}
	}
	checkInterNodeHosts(t, db)
	perVariant := map[string]int{}
	for _, r := range exportRows(t, db) {
		perVariant[r["variant"]]++
	}
	if perVariant["ntasks_per_node=1"] < 46 || perVariant["ntasks_per_node=2"] < 46 {
		t.Errorf("samples per variant %v, want ≥ 46 each", perVariant)
	}
	// The jobs table knows the final state and nodes.
	out, _, _ = sbench(t, "status", "--db", db, "--all")
	if strings.Count(out, "COMPLETED") != 1 || !strings.Contains(out, "n[1-2]") {
		t.Errorf("status --all:\n%s", out)
	}
	pdf := filepath.Join(dir, "r.pdf")
	if _, stderr, code := sbench(t, "report", "--db", db, "-o", pdf); code != 0 {
		t.Fatalf("report: %s", stderr)
	}
	checkPDF(t, pdf, []string{"bandwidth", "latency", "COMPLETED", "n[1-2]"})
}

// checkInterNodeHosts checks that in the one-task-per-node variant rank 0 ran
// on n1 and rank 1 on n2, and in the two-per-node variant both on n1.
func checkInterNodeHosts(t *testing.T, dbPath string) {
	t.Helper()
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs(context.Background(), store.Filter{Campaign: "quickstart"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[int]string{
		"ntasks_per_node=1": {0: "n1", 1: "n2"},
		"ntasks_per_node=2": {0: "n1", 1: "n1"},
	}
	for _, r := range runs {
		if r.Status != results.StatusOK {
			t.Errorf("run %d (%s %s): status %s: %s", r.ID, r.Variant, r.Benchmark, r.Status, r.Error)
		}
		node := rankNodes(r)
		for rank, n := range want[r.Variant] {
			if node[rank] != n {
				t.Errorf("run %d (%s %s): rank %d on %q, want %q (hosts %+v)", r.ID, r.Variant, r.Benchmark, rank, node[rank], n, r.Hosts)
			}
		}
		if r.JobID == "" || r.Step == "" {
			t.Errorf("run %d has no Slurm job/step: %q.%q", r.ID, r.JobID, r.Step)
		}
		// The runner records the cluster (SLURM_CLUSTER_NAME): the run's
		// system, with nothing given at ingest.
		if r.System != "sbenchlab" || r.Labels["system"] != "sbenchlab" {
			t.Errorf("run %d: system %q (label %q), want the test cluster's name sbenchlab", r.ID, r.System, r.Labels["system"])
		}
	}
	if n, err := db.CountRuns(context.Background(), store.Filter{Systems: []string{"sbenchlab"}}); err != nil || n != len(runs) {
		t.Errorf("--system sbenchlab selects %d of %d runs: %v", n, len(runs), err)
	}
}

// rankNodes maps each rank of a run to the node it ran on.
func rankNodes(r store.Run) map[int]string {
	node := map[int]string{}
	for _, h := range r.Hosts {
		for _, rank := range h.Ranks {
			node[rank] = h.NodeName
		}
	}
	return node
}

// osuLike prints a small table in OSU's format, so that a shell command can
// stand for a real tool in tests.
const osuLike = `printf '# OSU MPI Latency Test v7.5\n# Size          Avg Latency(us)\n1                       2.50\n2                       2.60\n'`

// osuLikeTOML is osuLike in a TOML basic string.
var osuLikeTOML = strings.ReplaceAll(osuLike, `\`, `\\`)

// slurmCampaign writes a campaign for the test cluster's two nodes.
func slurmCampaign(t *testing.T, dir, mode string) string {
	t.Helper()
	text := `
[campaign]
name = "modes-` + mode + `"
mode = "` + mode + `"
[slurm]
nodes = 2
ntasks_per_node = 1
time = "5"
[[variant]]
name = "ok-a"
params = { script = "` + osuLikeTOML + `" }
[[variant]]
name = "ok-b"
params = { script = "` + osuLikeTOML + `" }
[[variant]]
name = "ok-c"
params = { script = "` + osuLikeTOML + `" }
[[variant]]
name = "fails"
params = { script = "echo broken >&2; exit 1" }
[[benchmark]]
name = "tool"
per_rank = { "0" = ["sh", "-c", "{param:script}"] }
parser = "osu"
`
	p := filepath.Join(dir, mode+".toml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSlurmPackingModes runs the same 4-variant campaign in steps, jobs and
// array mode on the real cluster: steps mode is ONE job with 4 steps; every
// mode archives one bundle per run, the failing variant as failed and the
// others ok.
func TestSlurmPackingModes(t *testing.T) {
	dir := slurmWorkDir(t)
	for _, tt := range []struct {
		mode string
		jobs int
	}{{"steps", 1}, {"jobs", 4}, {"array", 1}} {
		t.Run(tt.mode, func(t *testing.T) {
			db := filepath.Join(dir, tt.mode+".db")
			stdout, stderr, code := sbench(t, "submit", slurmCampaign(t, dir, tt.mode), "--db", db)
			if code != 0 {
				t.Fatalf("submit: %s", stderr)
			}
			if ids := strings.Fields(stdout); len(ids) != tt.jobs {
				t.Fatalf("submitted %d job(s) %q, want %d", len(ids), ids, tt.jobs)
			}
			// The failing variant makes its job (or task) FAILED: exit 1.
			_, _, code = slurmWait(t, slurmWaitLimit, db)
			if code != exitGate {
				t.Errorf("status --wait: exit %d, want 1 (one variant fails)", code)
			}
			s, err := store.Open(db)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			runs, err := s.Runs(context.Background(), store.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			status := map[string]results.Status{}
			for _, r := range runs {
				status[r.Variant] = r.Status
				if r.JobID == "" || r.Benchmark != "tool" {
					t.Errorf("run %+v", r)
				}
			}
			want := map[string]results.Status{"ok-a": "ok", "ok-b": "ok", "ok-c": "ok", "fails": "failed"}
			if len(runs) != 4 || !reflect.DeepEqual(status, want) {
				t.Errorf("%d runs with statuses %v, want %v", len(runs), status, want)
			}
			samples, _ := s.Samples(context.Background(), store.Filter{})
			if len(samples) != 6 {
				t.Errorf("%d samples, want 2 for each of the 3 good runs", len(samples))
			}
			if tt.mode == "steps" {
				jobs, _ := s.Jobs(context.Background(), "")
				if len(jobs) != 1 || len(jobs[0].Variants) != 4 {
					t.Errorf("steps mode: jobs %+v", jobs)
				}
				steps := map[string]bool{}
				for _, r := range runs {
					steps[r.Step] = true
				}
				if len(steps) != 4 {
					t.Errorf("steps mode: runs came from steps %v, want 4 different", steps)
				}
			}
		})
	}
}

// TestSlurmPairsBothDirections places ranks 0 and 1 on n1→n2 and n2→n1
// with srun --distribution=arbitrary.
func TestSlurmPairsBothDirections(t *testing.T) {
	db := submitAndIngest(t, `
[campaign]
name = "pairs"
[slurm]
nodes = 2
time = "5"
[[benchmark]]
name = "lat"
kernel = "latency"
pairs = "both-directions"
params = { sizes = "1-64" }
`)
	got := map[string]string{}
	for _, r := range storedRuns(t, db, store.Filter{}) {
		got[r.Labels["pair"]] = rankNodes(r)[0]
	}
	want := map[string]string{"n1->n2": "n1", "n2->n1": "n2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pairs → rank 0's node: %v, want %v", got, want)
	}
}

// TestSlurmPairsAndMatrix runs the pairs and matrix kernels across the
// fake nodes n1 and n2, two ranks on each, through submit, status --ingest
// and the archive: the pairs kernel's inter-node pairs (placement=inter
// streams n1 to n2) and the matrix kernel's node pairs, both directions.
func TestSlurmPairsAndMatrix(t *testing.T) {
	db := submitAndIngest(t, `
[campaign]
name = "fabric"
[slurm]
nodes = 2
ntasks_per_node = 2
time = "5"
[[benchmark]]
name = "pairs-inter"
kernel = "pairs"
params = { sizes = "1,65536", placement = "inter" }
[[benchmark]]
name = "pairs-intra"
kernel = "pairs"
params = { sizes = "65536", placement = "intra" }
[[benchmark]]
name = "matrix"
kernel = "matrix"
`)
	s, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	runs, _ := s.Runs(ctx, store.Filter{})
	byName := map[string]int64{}
	for _, r := range runs {
		if r.Status != results.StatusOK || r.Tasks != 4 {
			t.Errorf("run %s: status %s (%s), %d tasks, want ok with 4", r.Benchmark, r.Status, r.Error, r.Tasks)
		}
		byName[r.Benchmark] = r.ID
	}
	if len(byName) != 3 {
		t.Fatalf("runs %v, want pairs-inter, pairs-intra and matrix", byName)
	}
	samples, _ := s.Samples(ctx, store.Filter{})
	perPair := map[string]map[string]int{} // benchmark -> "placement from->to" -> samples
	matrix := map[string]string{}          // "metric from->to" -> unit
	retested := map[string]string{}        // the same, of re-test samples
	for _, sm := range samples {
		switch sm.RunID {
		case byName["pairs-inter"], byName["pairs-intra"]:
			if sm.Metric != "bandwidth" {
				continue
			}
			name := map[int64]string{byName["pairs-inter"]: "inter", byName["pairs-intra"]: "intra"}[sm.RunID]
			if perPair[name] == nil {
				perPair[name] = map[string]int{}
			}
			if sm.Value <= 0 {
				t.Errorf("%s: %s at %v: %v MB/s", name, sm.Metric, *sm.X, sm.Value)
			}
			perPair[name][sm.Tags["placement"]+" "+sm.Tags["from"]+"->"+sm.Tags["to"]]++
		case byName["matrix"]:
			if sm.Value <= 0 || len(sm.Pair) != 2 {
				t.Errorf("matrix sample %+v", sm.Sample)
			}
			link := sm.Tags["from"] + "->" + sm.Tags["to"]
			if strings.HasPrefix(sm.Metric, "matrix_retest_") {
				// A link the first pass judged suspect (on loopback, noise
				// can make one): re-tested, tagged with its pass.
				if p, err := strconv.Atoi(sm.Tags["pass"]); err != nil || p < 1 {
					t.Errorf("re-test sample %s %s: pass tag %q, want 1 or more", sm.Metric, link, sm.Tags["pass"])
				}
				retested[strings.TrimPrefix(sm.Metric, "matrix_retest_")+" "+link] = sm.Unit
				continue
			}
			matrix[sm.Metric+" "+link] = sm.Unit
		}
	}
	// Block distribution: ranks 0,1 on n1 and 2,3 on n2. Inter pairs 0->2
	// and 1->3 both stream n1 to n2 at 2 sizes; intra pairs 0->1 and 2->3.
	wantPairs := map[string]map[string]int{
		"inter": {"inter-node n1->n2": 4},
		"intra": {"intra-node n1->n1": 1, "intra-node n2->n2": 1},
	}
	if !reflect.DeepEqual(perPair, wantPairs) {
		t.Errorf("pairs samples %v, want %v", perPair, wantPairs)
	}
	wantMatrix := map[string]string{
		"matrix_latency n1->n2": "us", "matrix_bandwidth n1->n2": "MB/s",
		"matrix_latency n2->n1": "us", "matrix_bandwidth n2->n1": "MB/s",
	}
	if !reflect.DeepEqual(matrix, wantMatrix) {
		t.Errorf("matrix samples %v, want %v", matrix, wantMatrix)
	}
	for k, unit := range retested {
		if wantMatrix["matrix_"+k] != unit {
			t.Errorf("re-test samples of %s in %s, not a link and unit the matrix measured (%v)", k, unit, wantMatrix)
		}
	}
}

// submitAndIngest writes campaign into a fresh directory (the test's cwd),
// submits it to the test cluster, waits for its jobs and ingests them, and
// returns the archive's path.
func submitAndIngest(t *testing.T, campaign string) string {
	t.Helper()
	dir := t.TempDir()
	camp := filepath.Join(dir, "campaign.toml")
	if err := os.WriteFile(camp, []byte(campaign), 0o644); err != nil {
		t.Fatal(err)
	}
	_, db, _, _ := slurmRun(t, camp, "", 0, 0)
	return db
}

// slurmRun submits a campaign file to the test cluster from a new working
// directory, waits for its jobs and ingests them: it returns that
// directory, the archive, the job ids submit printed and what status
// printed. jobs and runs, when not 0, are how many job ids submit must
// print and how many runs status --ingest must add; a job that did not
// complete fails the test with the tail of the jobs' output.
func slurmRun(t *testing.T, campaign, name string, jobs, runs int) (dir, db string, ids []string, status string) {
	t.Helper()
	dir = slurmWorkDir(t)
	db = filepath.Join(dir, "archive.db")
	stdout, stderr, code := sbench(t, "submit", campaign, "--db", db)
	if code != 0 {
		t.Fatalf("submit: exit %d: %s", code, stderr)
	}
	ids = strings.Fields(stdout)
	if jobs > 0 && len(ids) != jobs {
		t.Fatalf("submit printed %q, want %d job id(s)", stdout, jobs)
	}
	var args []string
	if name != "" {
		args = []string{"--campaign", name}
	}
	status, stderr, code = slurmWait(t, slurmWaitLimit, db, args...)
	if code != 0 || runs > 0 && !strings.Contains(status, fmt.Sprintf("%d run(s) added", runs)) {
		logs, _ := filepath.Glob("sbench-runs/*/*.out")
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, tail(string(data), 60))
		}
		t.Fatalf("status --wait --ingest: exit %d, want every job COMPLETED and %d run(s) added\n%s\n%s", code, runs, status, stderr)
	}
	return dir, db, ids, status
}

// slurmWaitLimit bounds how long a status --wait on the test cluster may
// go without progress: no job changing state and no step starting or
// ending. Every step of a test job has a time limit of at most 5 minutes,
// after which Slurm ends it, so a wait that sees nothing happen for longer
// is a hang. A busy machine makes steps slow, not a job silent: the bound
// is on the silence, not on the whole wait (a job of 24 steps ran 8 minutes
// at load 17 and was still making progress).
const slurmWaitLimit = 8 * time.Minute

// slurmWait runs status --wait --ingest on the archive db, with the
// further args, and gives up when the test cluster shows no progress for
// limit (see slurmWaitLimit), or when testenv.Context ends (a minute
// before go test's own deadline):
// a job that never settles fails the test with what Slurm says of the
// jobs, the nodes and its logs, instead of hanging the package until go
// test's timeout hides which job it was. It reports with t.Errorf, so a
// test may call it from another goroutine; on a give-up code is -1.
func slurmWait(t *testing.T, limit time.Duration, db string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithCancel(testenv.Context(t))
	defer cancel()
	silent := make(chan string, 1)
	go watchSlurmProgress(ctx, limit, cancel, silent)
	args = append([]string{"status", "--db", db, "--wait", "--interval", "300ms", "--ingest"}, args...)
	stdout, stderr, code = testenv.CLI(ctx, run, exitCode, args...)
	if ctx.Err() != nil {
		why := "go test's deadline is a minute away"
		select {
		case why = <-silent:
		default:
		}
		t.Errorf("sbench %s: %s\n%s", strings.Join(args, " "), why, stderr)
		logSlurmState(t)
		return stdout, stderr, -1
	}
	return stdout, stderr, code
}

// watchSlurmProgress cancels when squeue's view of the cluster's jobs and
// steps has not changed for limit, and says so in silent.
func watchSlurmProgress(ctx context.Context, limit time.Duration, cancel func(), silent chan<- string) {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	last, since := slurmActivity(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if now := slurmActivity(); now != last {
			last, since = now, time.Now()
		} else if time.Since(since) > limit {
			silent <- fmt.Sprintf("no job or step of the test cluster changed for %s", limit)
			cancel()
			return
		}
	}
}

// slurmActivity is squeue's view of the jobs (id, state) and of the
// running steps: what changes while a job makes progress.
func slurmActivity() string {
	jobs, _ := exec.Command("squeue", "-h", "-a", "-o", "%i %T").Output()
	steps, _ := exec.Command("squeue", "-h", "-a", "-s", "-o", "%i").Output()
	return string(jobs) + "\x00" + string(steps)
}

// logSlurmState logs what the test cluster says of its jobs and nodes, the
// tails of its daemons' logs and of the jobs' output in the current
// directory: what is needed to tell a hung job from a down node.
func logSlurmState(t *testing.T) {
	t.Helper()
	for _, c := range [][]string{
		{"squeue", "-a", "-o", "%i %T %r %M %l %N"},
		{"scontrol", "show", "job"},
		{"sinfo", "-N", "-o", "%N %T %E"},
	} {
		out, err := exec.Command(c[0], c[1:]...).CombinedOutput()
		t.Logf("$ %s (%v)\n%s", strings.Join(c, " "), err, out)
	}
	logs, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(os.Getenv("SLURM_CONF"))), "log", "*.log"))
	outs, _ := filepath.Glob("sbench-runs/*/*.out")
	for _, l := range append(logs, outs...) {
		data, _ := os.ReadFile(l)
		t.Logf("%s:\n%s", l, tail(string(data), 40))
	}
}
