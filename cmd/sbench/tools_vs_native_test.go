package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/reports"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// buildOSUStandin compiles testdata/osu-standin — a STAND-IN for the OSU
// Micro-Benchmarks' osu_latency and osu_bw, which Debian does not package:
// a few lines of C on the machine's real Open MPI that print OSU 7.4's
// output format — into a fresh directory and puts it first in PATH. Runs
// of it say "OSU MPI Latency Test v7.4" but are not OSU's numbers.
func buildOSUStandin(t *testing.T) string {
	t.Helper()
	mpicc := testenv.LookPath(t, "mpicc", "libopenmpi-dev")
	testenv.LookPath(t, "mpirun", "openmpi-bin")
	src, err := filepath.Abs("testdata/osu-standin")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, prog := range []string{"osu_latency", "osu_bw"} {
		cmd := exec.Command(mpicc, "-O2", "-Wall", "-Werror", "-o", filepath.Join(dir, prog), filepath.Join(src, prog+".c"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mpicc %s: %v\n%s", prog, err, out)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// toolsVsNativeBench is what examples/tools-vs-native.toml must give: for each
// of its placements (the variants), latency and bandwidth against message
// size measured by osu_latency/osu_bw and by the native kernels, 3 runs
// each.
var toolsVsNativeBench = map[string]struct{ impl, kind, tool string }{
	"osu_latency": {"openmpi", reports.KindLatency, "osu_latency"},
	"osu_bw":      {"openmpi", reports.KindBandwidth, "osu_bw"},
	"latency":     {"native", reports.KindLatency, "sbench-runner"},
	"bw":          {"native", reports.KindBandwidth, "sbench-runner"},
}

// checkToolsVsNativeRuns checks the archive holds the example's 24 runs,
// all ok, each labelled by its tool (impl), plus extra
// labels; interNode is the labels an inter-node run has beyond those.
func checkToolsVsNativeRuns(t *testing.T, dbPath string, extra, interNode map[string]string) {
	t.Helper()
	runs := storedRuns(t, dbPath, store.Filter{Campaign: "tools-vs-native"})
	count := map[string]int{}
	for _, r := range runs {
		b, ok := toolsVsNativeBench[r.Benchmark]
		if !ok {
			t.Errorf("run %d: benchmark %q, not one of the example's", r.ID, r.Benchmark)
			continue
		}
		count[r.Benchmark+" "+r.Variant]++
		if r.Status != results.StatusOK {
			t.Errorf("run %d (%s %s): %s: %s", r.ID, r.Benchmark, r.Variant, r.Status, r.Error)
		}
		want := map[string]string{"impl": b.impl}
		for k, v := range extra {
			want[k] = v
		}
		if r.Variant == "inter-node" {
			for k, v := range interNode {
				want[k] = v
			}
		}
		for k, v := range want {
			if r.Labels[k] != v {
				t.Errorf("run %d (%s %s): label %s=%q, want %q (labels %v)", r.ID, r.Benchmark, r.Variant, k, r.Labels[k], v, r.Labels)
			}
		}
		if _, ok := r.Labels[localHostLabel]; ok && (r.Variant == "intra-node" || interNode[localHostLabel] == "") {
			t.Errorf("run %d (%s %s) is labelled %s=%s, though its ranks did not span nodes of this host", r.ID, r.Benchmark, r.Variant, localHostLabel, r.Labels[localHostLabel])
		}
		if b.impl == "openmpi" && (r.Tool != "osu-micro-benchmarks" || r.ToolBenchmark != b.tool || r.ToolVer != "7.4") {
			t.Errorf("run %d (%s): tool %q %q running %q, want osu-micro-benchmarks 7.4 (the stand-in's title) running %s", r.ID, r.Benchmark, r.Tool, r.ToolVer, r.ToolBenchmark, b.tool)
		}
		// The stand-in loads this machine's Open MPI, whose mpirun is the
		// one in PATH; the native kernels load no MPI.
		for _, h := range r.Hosts {
			lib := h.MPILibrary != "" || h.MPILibraryPath != ""
			if b.impl == "openmpi" && (!strings.HasPrefix(h.MPILibrary, "Open MPI ") || h.MPILibrary != h.MPI || !strings.Contains(h.MPILibraryPath, "libmpi.so")) ||
				b.impl == "native" && lib {
				t.Errorf("run %d (%s) on %s: MPI %q, library %q at %q", r.ID, r.Benchmark, h.NodeName, h.MPI, h.MPILibrary, h.MPILibraryPath)
			}
		}
	}
	for bench := range toolsVsNativeBench {
		for _, v := range []string{"intra-node", "inter-node"} {
			if count[bench+" "+v] != 3 {
				t.Errorf("%s %s: %d runs, want 3 repeats", bench, v, count[bench+" "+v])
			}
		}
	}
}

// checkToolsVsNativeReport checks that the report's family view draws,
// for each placement, ONE latency figure whose two lines are osu_latency
// and the latency kernel (and one bandwidth figure with osu_bw and the bw
// kernel), each line the median of 3 runs; and that the PDF says so.
func checkToolsVsNativeReport(t *testing.T, dbPath, pdf string) {
	t.Helper()
	db, err := store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	d, src, err := reportData(ctx, db, store.Filter{Campaign: "tools-vs-native"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := reports.NewFrom(ctx, d, src, reports.WithGroupBy("family"))
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ kind, placement string }
	figs := map[key][]reports.Figure{}
	for _, f := range r.Figures() {
		if f.Kind != reports.KindLatency && f.Kind != reports.KindBandwidth {
			continue
		}
		for _, p := range []string{"intra-node", "inter-node"} {
			if strings.Contains(f.Split, "variant="+p) {
				figs[key{f.Kind, p}] = append(figs[key{f.Kind, p}], f)
			}
		}
	}
	for _, kind := range []string{reports.KindLatency, reports.KindBandwidth} {
		for _, p := range []string{"intra-node", "inter-node"} {
			fs := figs[key{kind, p}]
			if len(fs) != 1 {
				t.Errorf("%s %s: %d figures, want ONE with both tools", p, kind, len(fs))
				continue
			}
			f := fs[0]
			if f.Family != "point-to-point" {
				t.Errorf("%s %s: figure %q of family %q, want point-to-point", p, kind, f.Name, f.Family)
			}
			var lines []string
			for _, s := range f.Series {
				lines = append(lines, s.Config)
				if len(s.Runs) != 3 || len(s.Points) != 21 {
					t.Errorf("%s %s: line %q from runs %v with %d points, want 3 runs (the repeats) and 21 sizes", p, kind, s.Config, s.Runs, len(s.Points))
				}
			}
			tool, kernel := "osu_latency", "latency"
			if kind == reports.KindBandwidth {
				tool, kernel = "osu_bw", "bw"
			}
			if len(lines) != 2 ||
				!slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, tool) && strings.Contains(l, "7.4") }) ||
				!slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "sbench-runner") && strings.HasSuffix(l, " "+kernel) }) {
				t.Errorf("%s %s: lines %q, want %s 7.4 and sbench-runner's %s kernel", p, kind, lines, tool, kernel)
			}
		}
	}
	out, errs, code := sbench(t, "report", "--db", dbPath, "--campaign", "tools-vs-native", "--group-by", "family", "-o", pdf)
	if code != 0 || !strings.Contains(out, "24 runs") {
		t.Fatalf("report --group-by family: exit %d\n%s%s", code, out, errs)
	}
	checkPDF(t, pdf, []string{"point-to-point", "osu-micro-benchmarks 7.4 (osu_latency)", "osu-micro-benchmarks 7.4 (osu_bw)", "sbench-runner", "variant=inter-node"})
}

// checkToolsVsNativeCompare checks that compare --group-by family pairs
// the native kernels' rows with the OSU programs', per placement, and
// that without it compare says to use it.
func checkToolsVsNativeCompare(t *testing.T, dbPath string) {
	t.Helper()
	out, errs, code := sbench(t, "compare", "--db", dbPath, "--json", "--group-by", "family", "impl=native", "impl=openmpi")
	if code != 0 && code != exitGate {
		t.Fatalf("compare --group-by family: exit %d\n%s", code, errs)
	}
	var res struct {
		Tables []struct {
			Benchmark, Metric string
			Config            []string
			Old               []string `json:"old_tools"`
			New               []string `json:"new_tools"`
			Rows              []struct {
				X        *float64
				Old, New *struct{ N int }
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, tb := range res.Tables {
		placement := ""
		for _, c := range tb.Config {
			if p, ok := strings.CutPrefix(c, "variant="); ok {
				placement = p
			}
		}
		k := tb.Benchmark + " " + tb.Metric + " " + placement
		got[k] = strings.Join(tb.Old, ",") + " vs " + strings.Join(tb.New, ",")
		for _, row := range tb.Rows {
			if row.Old == nil || row.New == nil || row.Old.N != 3 || row.New.N != 3 {
				t.Errorf("%s: row %+v, want 3 runs on each side", k, row)
				break
			}
		}
		if len(tb.Rows) != 21 {
			t.Errorf("%s: %d rows, want one per size (21)", k, len(tb.Rows))
		}
	}
	for _, p := range []string{"intra-node", "inter-node"} {
		for metric, tools := range map[string][2]string{"latency": {"latency", "osu_latency"}, "bandwidth": {"bw", "osu_bw"}} {
			k := "point-to-point " + metric + " " + p
			old, nw, _ := strings.Cut(got[k], " vs ")
			if !strings.HasPrefix(old, "sbench-runner") || !strings.HasSuffix(old, " "+tools[0]) || nw != "osu-micro-benchmarks 7.4 ("+tools[1]+")" {
				t.Errorf("%s: %q, want sbench-runner's %s kernel vs osu-micro-benchmarks 7.4 (%s) (tables %v)", k, got[k], tools[0], tools[1], got)
			}
		}
	}
	if len(got) != 4 {
		t.Errorf("tables %v, want latency and bandwidth for each placement", got)
	}
	// By benchmark, nothing meets: compare says how to match them.
	_, errs, code = sbench(t, "compare", "--db", dbPath, "impl=native", "impl=openmpi")
	if code != exitUsage || !strings.Contains(errs, "--group-by family") {
		t.Errorf("compare by benchmark: exit %d, want 2 pointing at --group-by family\n%s", code, errs)
	}
}

// TestLocalToolsVsNative runs examples/tools-vs-native.toml with sbench
// local, its OSU steps (srun --mpi=pmix) under mpirun with the OSU
// stand-in, and checks the archive, the report's family view and compare.
func TestLocalToolsVsNative(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs a 24-run campaign (about a minute)")
	}
	// 90-400 s on two busy cores: make test-long's.
	testenv.Long(t)
	root := repoRoot(t)
	buildOSUStandin(t)
	buildBinaries(t)
	dir := t.TempDir()
	t.Chdir(dir)
	db := filepath.Join(dir, "tools.db")
	host, _ := os.Hostname()
	out, errs, code := sbench(t, "local", filepath.Join(root, "examples/tools-vs-native.toml"), "--db", db, "--label", "trial=one")
	if code != 0 {
		t.Fatalf("local: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "24 run(s) from 1 job(s)") {
		t.Errorf("local archived:\n%s", out)
	}
	warn := `warning: variant inter-node places ranks on 2 nodes, but sbench local runs them all on this host (` + host + `)`
	if n := strings.Count(errs, warn); n != 1 {
		t.Errorf("the one-host warning appears %d times, want once:\n%s", n, errs)
	}
	if strings.Contains(errs, "variant intra-node places") {
		t.Errorf("a warning about the intra-node variant:\n%s", errs)
	}
	for _, p := range []string{"osu_latency", "osu_bw"} {
		if !strings.Contains(errs, "note: "+p+": srun --mpi=pmix runs here as mpirun") {
			t.Errorf("no note that %s runs under mpirun:\n%s", p, errs)
		}
	}
	checkToolsVsNativeRuns(t, db, map[string]string{"trial": "one"}, map[string]string{localHostLabel: host})
	checkToolsVsNativeReport(t, db, filepath.Join(dir, "tools.pdf"))
	checkToolsVsNativeCompare(t, db)
}

// TestLocalLabel: --label labels every run sbench local archives, over a
// campaign label of the same key — the run that fails before the runner
// wrote a bundle too.
func TestLocalLabel(t *testing.T) {
	dir := endToEndDir(t, "runs a campaign")
	os.WriteFile("small.toml", []byte(strings.Replace(smallCampaign, `name = "small"`, `name = "small"
labels = { fabric = "tcp", site = "a" }`, 1)+`
[[benchmark]]
name = "broken"
kernel = "latency"
params = { sizes = "1", iterations = 10 }
launcher = { type = "mpirun", command = "/nonexistent/mpirun" }
`), 0o644)
	db := filepath.Join(dir, "a.db")
	out, errs, code := sbench(t, "local", "small.toml", "--db", db, "--label", "fabric=lo", "--label", "trial=7")
	if code != exitGate {
		t.Fatalf("local: exit %d, want 1 (the broken step)\n%s\n%s", code, out, errs)
	}
	runs := storedRuns(t, db, store.Filter{})
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		want := map[string]string{"fabric": "lo", "site": "a", "trial": "7"}
		for k, v := range want {
			if r.Labels[k] != v {
				t.Errorf("run %d (%s, %s): labels %v, want %v", r.ID, r.Benchmark, r.Status, r.Labels, want)
				break
			}
		}
	}
	if _, errs, code := sbench(t, "local", "small.toml", "--db", db, "--label", "nokey"); code != exitUsage || !strings.Contains(errs, "KEY=VALUE") {
		t.Errorf("--label nokey: exit %d, want 2\n%s", code, errs)
	}
}

// TestLocalMPIPluginWithoutMPIRun: a step launched by srun --mpi=pmix
// needs mpirun locally; without one, sbench local refuses before running
// anything, saying what to do.
func TestLocalMPIPluginWithoutMPIRun(t *testing.T) {
	binDir := buildBinaries(t)
	dir := t.TempDir()
	t.Chdir(dir)
	// Only the runner in PATH: no mpirun.
	t.Setenv("PATH", binDir)
	os.WriteFile("c.toml", []byte(`
[campaign]
name = "mpi"
[slurm]
nodes = 1
ntasks_per_node = 2
[[benchmark]]
name = "osu_latency"
command = ["osu_latency"]
parser = "osu"
launcher = { type = "srun", mpi = "pmi2" }
`), 0o644)
	db := filepath.Join(dir, "a.db")
	_, errs, code := sbench(t, "local", "c.toml", "--db", db)
	if code == 0 || !strings.Contains(errs, "osu_latency (srun --mpi=pmi2)") || !strings.Contains(errs, "no mpirun in PATH") || !strings.Contains(errs, "sbench submit") {
		t.Errorf("exit %d, want a refusal naming the step, mpirun and Slurm:\n%s", code, errs)
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("the refusal created the archive %s", db)
	}
}

// TestLocalMPIRunArgv: which steps sbench local runs with mpirun for
// srun --mpi (TestLocalMPILaunch: how).
func TestLocalMPIRunArgv(t *testing.T) {
	step := func(typ, mpi, kernel string) campaign.Step {
		var st campaign.Step
		st.Benchmark = &campaign.Benchmark{Name: "b", Kernel: kernel}
		st.Config.Launcher.Type, st.Config.Launcher.MPI = typ, mpi
		return st
	}
	for _, tt := range []struct {
		st   campaign.Step
		want bool
	}{
		{step("", "pmix", ""), true},
		{step("srun", "pmi2", ""), true},
		{step("srun", "none", ""), false},
		{step("srun", "", ""), false},
		{step("srun", "pmix", "latency"), false}, // a native kernel needs no MPI
		{step("mpirun", "", ""), false},
	} {
		if got := mpiUnderSrun(tt.st); got != tt.want {
			t.Errorf("launcher %q mpi %q kernel %q: %v, want %v", tt.st.Config.Launcher.Type, tt.st.Config.Launcher.MPI, tt.st.Benchmark.Kernel, got, tt.want)
		}
	}
	args := withLabels([]string{"run", "--label", "a=1", "--label", "b=2", "--step", "0"}, map[string]string{"b": "3", "c": "4"})
	if got := strings.Join(args, " "); got != "run --label a=1 --step 0 --label b=3 --label c=4" {
		t.Errorf("withLabels: %q", got)
	}
}

// TestCompareGroupByWantsFamily: compare groups rows by metric family or
// by benchmark; any other --group-by is bad usage, said before the archive
// is opened.
func TestCompareGroupByWantsFamily(t *testing.T) {
	_, errs, code := sbench(t, "compare", "--db", filepath.Join(t.TempDir(), "none.db"), "--group-by", "fabric", "a=1", "a=2")
	if code != exitUsage || !strings.Contains(errs, `--group-by "fabric": want family`) {
		t.Errorf("exit %d, want 2 asking for family:\n%s", code, errs)
	}
}
