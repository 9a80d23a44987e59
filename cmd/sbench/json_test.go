package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/store"
)

// decodeJSON fails the test unless out is one JSON value, and decodes it.
func decodeJSON(t *testing.T, what, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: not the JSON promised: %v\n%s", what, err, out)
	}
	if dec.More() {
		t.Fatalf("%s: more than one JSON value:\n%s", what, out)
	}
}

// TestJSONEverywhere: validate, ingest, prune, archive export/import and
// status print what they print as tables as one JSON value instead.
func TestJSONEverywhere(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "a.db")

	// validate: the plan, and the problems of a bad campaign, file:line:col.
	out, _ := mustSbench(t, 0, "validate", "--json", "../../examples/quickstart.toml")
	var plan struct {
		OK        bool     `json:"ok"`
		Campaign  string   `json:"campaign"`
		Mode      string   `json:"mode"`
		Variants  int      `json:"variants"`
		NodeHours *float64 `json:"node_hours"`
		Jobs      []struct {
			File          string   `json:"file"`
			Nodes         string   `json:"nodes"`
			NtasksPerNode int      `json:"ntasks_per_node"`
			TimeSeconds   float64  `json:"time_seconds"`
			ArrayTasks    int      `json:"array_tasks"`
			After         []string `json:"after"`
			Steps         []struct {
				Task      *int   `json:"task"`
				Index     int    `json:"index"`
				Benchmark string `json:"benchmark"`
				Variant   string `json:"variant"`
				Ranks     int    `json:"ranks"`
				Nodes     int    `json:"nodes"`
				Placement string `json:"placement"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	decodeJSON(t, "validate --json", out, &plan)
	if !plan.OK || plan.Campaign != "quickstart" || len(plan.Jobs) == 0 || len(plan.Jobs[0].Steps) == 0 || plan.Jobs[0].Steps[0].Benchmark == "" {
		t.Errorf("validate --json plan: %+v", plan)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[campaign]\nname = \"x\"\n\n[[benchmark]]\nname = \"l\"\nkernal = \"latency\"\nrepeats = \"3\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _ = mustSbench(t, exitUsage, "validate", "--json", bad)
	var probs struct {
		OK       bool `json:"ok"`
		Problems []struct {
			File string `json:"file"`
			Line int    `json:"line"`
			Col  int    `json:"col"`
			Key  string `json:"key"`
			Msg  string `json:"msg"`
		} `json:"problems"`
	}
	decodeJSON(t, "validate --json (problems)", out, &probs)
	if probs.OK || len(probs.Problems) < 2 {
		t.Fatalf("validate --json: want ok=false and every problem: %+v", probs)
	}
	lines := map[int]bool{}
	for _, p := range probs.Problems {
		if p.File != bad || p.Line == 0 || p.Msg == "" {
			t.Errorf("problem without file:line: %+v", p)
		}
		lines[p.Line] = true
	}
	if !lines[6] || !lines[7] {
		t.Errorf("problems at lines %v, want 6 (kernal) and 7 (repeats)", lines)
	}

	// ingest: counts, run ids and per-file results.
	out, _ = mustSbench(t, 0, "ingest", "--db", db, "--json", "--label", "fabric=tcp",
		"../../examples/articles/testdata/004-erdma-vs-tcp-job11.out", "../../examples/articles/testdata/000-hpl-100mbit.txt")
	type perFile struct {
		Source  string  `json:"source"`
		Added   []int64 `json:"added"`
		Already []int64 `json:"already_archived"`
		Error   string  `json:"error"`
	}
	var ing struct {
		Archive         string    `json:"archive"`
		Files           int       `json:"files"`
		Added           int       `json:"added"`
		AlreadyArchived int       `json:"already_archived"`
		NotOutput       int       `json:"skipped_not_output"`
		Failed          int       `json:"failed"`
		RunIDs          string    `json:"run_ids"`
		PerFile         []perFile `json:"per_file"`
	}
	decodeJSON(t, "ingest --json", out, &ing)
	if ing.Archive != db || ing.Files != 2 || ing.Added == 0 || len(ing.PerFile) != 2 || ing.RunIDs != "1-"+strconv.Itoa(ing.Added) {
		t.Errorf("ingest --json: %+v", ing)
	}
	total := ing.Added
	out, _ = mustSbench(t, 0, "ingest", "--db", db, "--json", "--label", "fabric=tcp", "../../examples/articles/testdata/000-hpl-100mbit.txt")
	decodeJSON(t, "ingest --json (again)", out, &ing)
	if ing.Added != 0 || ing.AlreadyArchived == 0 || len(ing.PerFile[0].Already) == 0 || ing.PerFile[0].Added == nil {
		t.Errorf("ingest --json of a file already archived: %+v", ing)
	}

	// prune: the plan, then what was deleted.
	type runRow struct {
		ID        int64  `json:"id"`
		Start     string `json:"start"`
		Ingested  string `json:"ingested"`
		Campaign  string `json:"campaign"`
		Variant   string `json:"variant"`
		Benchmark string `json:"benchmark"`
		// The benchmark the run's tool ran (HPL's output: "hpl").
		ToolBenchmark string            `json:"tool_benchmark"`
		Job           string            `json:"job"`
		Step          string            `json:"step"`
		Source        string            `json:"source"`
		Nodes         []string          `json:"nodes"`
		Status        string            `json:"status"`
		Error         string            `json:"error"`
		Labels        map[string]string `json:"labels"`
	}
	var pr struct {
		Delete []runRow `json:"delete"`
		Kept   []struct {
			Run       runRow   `json:"run"`
			Baselines []string `json:"baselines"`
		} `json:"kept"`
		Deleted *struct {
			Runs   int   `json:"runs"`
			Hosts  int   `json:"hosts"`
			Before int64 `json:"bytes_before"`
			After  int64 `json:"bytes_after"`
		} `json:"deleted"`
	}
	out, _ = mustSbench(t, 0, "prune", "--db", db, "--json", "--run", "1")
	decodeJSON(t, "prune --json", out, &pr)
	if len(pr.Delete) != 1 || pr.Delete[0].ID != 1 || pr.Deleted != nil {
		t.Errorf("prune --json plan: %+v", pr)
	}
	out, _ = mustSbench(t, 0, "prune", "--db", db, "--json", "--run", "1", "--yes")
	decodeJSON(t, "prune --json --yes", out, &pr)
	if pr.Deleted == nil || pr.Deleted.Runs != 1 || pr.Deleted.Before <= pr.Deleted.After || pr.Deleted.After == 0 {
		t.Errorf("prune --json --yes: %+v", pr)
	}

	// archive export and import.
	arch := filepath.Join(dir, "a.sbench.gz")
	out, _ = mustSbench(t, 0, "archive", "export", "--db", db, "-o", arch, "--json")
	var ex struct {
		File         string   `json:"file"`
		Runs         int      `json:"runs"`
		Baselines    []string `json:"baselines"`
		Expectations []string `json:"expectations"`
	}
	decodeJSON(t, "archive export --json", out, &ex)
	if ex.File != arch || ex.Runs != total-1 {
		t.Errorf("archive export --json: %+v", ex)
	}
	mustSbench(t, exitUsage, "archive", "export", "--db", db, "--json")
	db2 := filepath.Join(dir, "b.db")
	out, _ = mustSbench(t, 0, "archive", "import", "--db", db2, "--json", arch)
	var im struct {
		Archive string    `json:"archive"`
		Files   []perFile `json:"files"`
		RunIDs  string    `json:"run_ids"`
	}
	decodeJSON(t, "archive import --json", out, &im)
	if im.Archive != db2 || len(im.Files) != 1 || len(im.Files[0].Added) != ex.Runs || im.RunIDs != "1-"+strconv.Itoa(ex.Runs) {
		t.Errorf("archive import --json: %+v (exported %d)", im, ex.Runs)
	}
}

// TestStatusJSON: status --json prints the jobs it would tabulate, and
// what --ingest archived, as one JSON object.
func TestStatusJSON(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "s.db")
	plan := []store.PlannedStep{{Step: "0", Benchmark: "latency", Kind: "native", Kernel: "latency", Variant: "v7"}}
	recordJobs(t, dbPath, store.Job{SlurmID: "7", Campaign: "c", Variants: []string{"v7"}, ResultsDir: dir, Submitted: time.Now(), State: "PENDING", Plan: plan})
	useSlurm(t, &fakeSlurm{jobs: map[string]string{
		"7": "JobId=7 JobName=c-v7 JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0 StartTime=2026-11-30T00:24:34 EndTime=2026-11-30T00:24:35 NodeList=n1",
	}})

	stdout, stderr, code := sbench(t, "status", "--db", dbPath, "--wait", "--ingest", "--interval", "10ms", "--json")
	if code != exitGate {
		t.Errorf("exit %d, want %d\n%s\n%s", code, exitGate, stdout, stderr)
	}
	var st struct {
		Jobs []struct {
			ID        string   `json:"id"`
			Campaign  string   `json:"campaign"`
			Variants  []string `json:"variants"`
			State     string   `json:"state"`
			Reason    string   `json:"reason"`
			ExitCode  string   `json:"exit_code"`
			Nodes     string   `json:"nodes"`
			Restarts  int      `json:"restarts"`
			Submitted string   `json:"submitted"`
			Start     string   `json:"start"`
			End       string   `json:"end"`
			Steps     int      `json:"planned_steps"`
		} `json:"jobs"`
		Ingest *struct {
			Added           int `json:"added"`
			AlreadyArchived int `json:"already_archived"`
			Bundles         int `json:"bundles"`
			Missing         int `json:"missing_archived_failed"`
		} `json:"ingest"`
	}
	decodeJSON(t, "status --json", stdout, &st)
	if len(st.Jobs) != 1 || st.Jobs[0].State != "FAILED" || st.Jobs[0].ExitCode != "3:0" || st.Jobs[0].Steps != 1 {
		t.Errorf("status --json jobs: %+v", st.Jobs)
	}
	if st.Ingest == nil || st.Ingest.Added != 1 || st.Ingest.Missing != 1 {
		t.Errorf("status --json ingest: %+v (the planned step left no bundle: one failed run)", st.Ingest)
	}

	// An archive with no jobs (status never creates one).
	empty := filepath.Join(dir, "empty.db")
	if db, err := store.Open(empty); err != nil {
		t.Fatal(err)
	} else {
		db.Close()
	}
	stdout, _, code = sbench(t, "status", "--db", empty, "--json")
	var none struct {
		Jobs []any `json:"jobs"`
	}
	decodeJSON(t, "status --json (no jobs)", stdout, &none)
	if code != 0 || none.Jobs == nil || len(none.Jobs) != 0 {
		t.Errorf("status --json with no jobs: exit %d, %q", code, stdout)
	}
}
