package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/fleet"
	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
)

// screeningArchive writes a synthetic screening's bundles as the runner
// would and ingests them with sbench ingest.
func screeningArchive(t *testing.T, specs ...fleet.Spec) string {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "s.db")
	for i, s := range specs {
		bdir := filepath.Join(dir, "runs", string(rune('a'+i)))
		if err := os.MkdirAll(bdir, 0o755); err != nil {
			t.Fatal(err)
		}
		for j, b := range fleet.Bundles(s) {
			data, err := results.Marshal(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(bdir, b.Job.ID+"."+b.Job.Step+"."+string(rune('a'+j%26))+".json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		mustSbench(t, 0, "ingest", "--db", db, bdir)
	}
	return db
}

// The verdict on a 16-node screening with a slow node, a node slow one
// way, a bad link, a transient link and a low STREAM node, as the
// terminal shows it; --drain's lines; the exit status says it is flagged.
func TestScreenGolden(t *testing.T) {
	db := screeningArchive(t, fleet.Spec{Nodes: 16, SlowNodes: []string{"n5"}, SlowSenders: []string{"n9"},
		BadLinks: [][2]string{{"n2", "n12"}}, Transient: [][2]string{{"n3", "n4"}}, LowStream: []string{"n14"}, HalfRate: []string{"n16"}})
	out, stderr := mustSbench(t, exitGate, "screen", "--db", db)
	golden.Check(t, filepath.Join("testdata", "screen-faults.stdout"), out)
	if want := "sbench: screen: 3 bad nodes (n5, n14, n16), 1 one-way node link (n9→*), 1 bad link (n2→n12); drain n[5,14,16]\n"; stderr != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	out, _ = mustSbench(t, exitGate, "screen", "--db", db, "--drain")
	golden.Check(t, filepath.Join("testdata", "screen-faults.drain"), out)

	var v struct {
		Findings []struct {
			Kind, Subject string
			Drain         bool
			Links         []string
			Evidence      []struct{ Check, Metric, Text string }
		}
		Drain []struct{ Node, Command string }
	}
	out, _ = mustSbench(t, exitGate, "screen", "--db", db, "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(v.Findings) != 5 || v.Findings[0].Subject != "n5" || !v.Findings[0].Drain || len(v.Drain) != 3 {
		t.Errorf("--json findings %+v, drain %+v", v.Findings, v.Drain)
	}

	// Tolerances: at 50% of the maximum the bad link (60%) and the one-way
	// node (50%) pass; the slow node (33%) does not.
	out, _ = mustSbench(t, exitGate, "screen", "--db", db, "--bandwidth-tolerance", "0.4", "--node-tolerance", "0.6", "--json")
	v.Findings = nil
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, f := range v.Findings {
		subjects = append(subjects, f.Kind+" "+f.Subject)
	}
	if got := strings.Join(subjects, ", "); got != "node n5, node n16" {
		t.Errorf("at 40%%/60%%: %s", got)
	}
}

// Nothing flagged: exit status 0 and a verdict that says so.
func TestScreenClean(t *testing.T) {
	db := screeningArchive(t, fleet.Spec{Nodes: 8})
	out, _ := mustSbench(t, exitOK, "screen", "--db", db)
	golden.Check(t, filepath.Join("testdata", "screen-clean.stdout"), out)
	if out, _ := mustSbench(t, exitOK, "screen", "--db", db, "--drain"); out != "" {
		t.Errorf("--drain with nothing to drain printed %q", out)
	}
}

// The default is the newest screening; a selector picks another. (Runs
// ingested by hand have no recorded submission: the newest matrix run's
// job is the screening.)
func TestScreenSelection(t *testing.T) {
	db := screeningArchive(t, fleet.Spec{Nodes: 8, SlowNodes: []string{"n3"}},
		fleet.Spec{Nodes: 8, Seed: 2, Job: "4300", Start: fleetDay(2)})
	out, _ := mustSbench(t, exitOK, "screen", "--db", db)
	if !strings.Contains(out, "screening of job:4300 (run 32, the newest matrix run)") || !strings.Contains(out, "nothing flagged") {
		t.Errorf("default selection:\n%s", out)
	}
	for _, args := range [][]string{{"job:4242"}, {"--job", "4242"}, {"--until", "2026-12-02"}} {
		out, _ = mustSbench(t, exitGate, append([]string{"screen", "--db", db}, args...)...)
		if !strings.Contains(out, "NODE n3 (drain)") || !strings.Contains(out, "runs 1-31") {
			t.Errorf("screen %q:\n%s", args, out)
		}
	}
}

func TestScreenUsage(t *testing.T) {
	db := screeningArchive(t, fleet.Spec{Nodes: 4})
	usageErrors{
		{[]string{"--json", "--drain"}, "give --json or --drain"},
		{[]string{"--latency-tolerance", "0.5"}, "latency tolerance 0.5"},
		{[]string{"--bandwidth-tolerance", "93"}, "bandwidth tolerance 93"},
		{[]string{"--node-tolerance", "0"}, "node tolerance 0"},
		{[]string{"campaign:nope"}, "selects no runs"},
		{[]string{"--campaign", "nope"}, "selects no runs"},
		{[]string{"bogus:x"}, "unknown kind"},
		{[]string{"a", "b"}, "accepts at most 1 arg"},
	}.check(t, []string{"screen", "--db", db})
	// An archive with runs but nothing to screen.
	other := acceptanceArchive(t)
	if _, stderr, code := sbench(t, "screen", "--db", other); code != exitUsage || !strings.Contains(stderr, "no ok matrix, reference, stream or hpl run") {
		t.Errorf("no screening: exit %d, %q", code, stderr)
	}
	if _, stderr, code := sbench(t, "screen", "--db", filepath.Join(t.TempDir(), "none.db")); code != exitUsage || !strings.Contains(stderr, "no archive at") {
		t.Errorf("no archive: exit %d, %q", code, stderr)
	}
}

// fleetDay is the fleet's default start, days later.
func fleetDay(days int) time.Time {
	return time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC).AddDate(0, 0, days)
}
