package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestBaselineSetListCompareRm(t *testing.T) {
	db := acceptanceArchive(t)
	out, _ := mustSbench(t, 0, "baseline", "set", "--db", db, "--note", "before the upgrade", "pre-upgrade", "run=a")
	if out != "baseline pre-upgrade set: 1 run(s) (run:1) from run=a\n" {
		t.Errorf("set: %q", out)
	}
	// The baseline is frozen: a run labelled run=a later does not join it.
	// (One run a side: judged by the change alone.)
	mustSbench(t, 1, "compare", "--db", db, "--threshold-only", "baseline:pre-upgrade", "run=b")
	mustSbench(t, 0, "compare", "--db", db, "--threshold-only", "baseline:pre-upgrade", "run=a2")

	out, _ = mustSbench(t, 0, "baseline", "set", "--db", db, "pre-upgrade", "run:1-2")
	if !strings.HasPrefix(out, "baseline pre-upgrade replaced: 2 run(s) (run:1-2)") {
		t.Errorf("set again: %q", out)
	}
	out, _ = mustSbench(t, 0, "baseline", "list", "--db", db)
	if !strings.Contains(out, "pre-upgrade") || !strings.Contains(out, "run:1-2") {
		t.Errorf("list:\n%s", out)
	}
	out, _ = mustSbench(t, 0, "baseline", "list", "--db", db, "--json")
	var list []struct {
		Name string  `json:"name"`
		Runs []int64 `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || len(list[0].Runs) != 2 {
		t.Errorf("list --json: %v\n%s", err, out)
	}
	// Two runs of identical numbers on the baseline side are repeats.
	out, _ = mustSbench(t, 1, "compare", "--db", db, "--threshold-only", "baseline:pre-upgrade", "run=b")
	if !strings.Contains(out, "(n=2+1)") {
		t.Errorf("baseline of two runs:\n%s", out)
	}

	// A baseline's runs are not pruned.
	out, _ = mustSbench(t, 0, "prune", "--db", db, "--label", "run=a", "--yes")
	if !strings.Contains(out, "keep (baseline pre-upgrade)") || !strings.Contains(out, "nothing to delete") {
		t.Errorf("prune of a baseline's run:\n%s", out)
	}

	mustSbench(t, 0, "baseline", "rm", "--db", db, "pre-upgrade")
	_, stderr := mustSbench(t, 2, "baseline", "rm", "--db", db, "pre-upgrade")
	if !strings.Contains(stderr, "not found") {
		t.Errorf("rm twice: %q", stderr)
	}
	_, stderr = mustSbench(t, 2, "compare", "--db", db, "baseline:pre-upgrade", "run=b")
	if !strings.Contains(stderr, "baseline pre-upgrade") {
		t.Errorf("compare with a removed baseline: %q", stderr)
	}
}

func TestBaselineUsage(t *testing.T) {
	db := acceptanceArchive(t)
	usageErrors{
		{[]string{"set", "only-name"}, "accepts 2 arg(s)"},
		{[]string{"set", "two words", "run=a"}, "no spaces"},
		{[]string{"set", "x", "nope"}, "is not KEY=VALUE"},
		{[]string{"set", "x", "run=zzz"}, "finds no ok run"},
		{[]string{"set", "x", "baseline:none"}, "no baseline none in the archive"},
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{}, "want a subcommand: list, rm, set"},
	}.check(t, []string{"baseline"}, "--db", db)
}

func TestPruneListsFirstAndNeedsYes(t *testing.T) {
	db := acceptanceArchive(t)
	out, _ := mustSbench(t, 0, "prune", "--db", db, "--label", "run=b")
	if !strings.Contains(out, "delete  3") || !strings.Contains(out, "1 run(s) would be deleted; nothing deleted") {
		t.Errorf("prune without --yes:\n%s", out)
	}
	out, _ = mustSbench(t, 0, "runs", "--db", db)
	if strings.Count(out, "\n") != 4 {
		t.Errorf("prune without --yes deleted something:\n%s", out)
	}
	out, _ = mustSbench(t, 0, "prune", "--db", db, "--label", "run=b", "--yes")
	if !strings.Contains(out, "delete  3") || !strings.Contains(out, "deleted 1 run(s)") {
		t.Errorf("prune --yes:\n%s", out)
	}
	out, _ = mustSbench(t, 0, "runs", "--db", db)
	if strings.Count(out, "\n") != 3 || strings.Contains(out, "run=b") {
		t.Errorf("after prune --yes:\n%s", out)
	}
	_, stderr := mustSbench(t, 2, "prune", "--db", db, "--status", "failed,invalid", "--yes")
	if !strings.Contains(stderr, "selects no runs") {
		t.Errorf("prune --status failed:\n%s", stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--yes"}, "give at least one filter"},
		{[]string{"--before", "June"}, `--before "June": want a date (2006-01-02)`},
		{[]string{"--until", "June"}, `--until "June": want a date (2006-01-02)`},
		{[]string{"--run", "1-x"}, `--run "1-x"`},
		{[]string{"--status", "bad"}, `--status "bad"`},
	} {
		_, stderr := mustSbench(t, 2, append([]string{"prune", "--db", db}, c.args...)...)
		if !strings.Contains(stderr, c.want) {
			t.Errorf("prune %q: stderr %q, want %q", c.args, stderr, c.want)
		}
	}
}

// TestReportBaselineSection: sbench report --baseline adds a comparison
// of the report's runs with the baseline's, judged as sbench compare
// judges: one run a side is no evidence either way; with four a side the
// 20% bandwidth drop is in the section's table and named in the verdict.
func TestReportBaselineSection(t *testing.T) {
	db := acceptanceArchive(t)
	mustSbench(t, 0, "baseline", "set", "--db", db, "before", "run=a")
	pdf := filepath.Join(t.TempDir(), "r.pdf")
	out, _ := mustSbench(t, 0, "report", "--db", db, "--label", "run=b", "--baseline", "before", "-o", pdf)
	if !strings.Contains(out, "No evidence either way against baseline before (1 run), the report's 1 run: 23 points compared, each with too few runs to judge (it takes 4 a side).") ||
		strings.Contains(out, "regressed") {
		t.Errorf("one run a side:\n%s", out)
	}
	checkPDF(t, pdf, []string{"Compared with baseline before", "No evidence either way", "~ n=1+1: too few runs to"})
	// The report's runs are all the baseline's: nothing to compare.
	_, stderr := mustSbench(t, 2, "report", "--db", db, "--label", "run=a", "--baseline", "before", "-o", pdf)
	if !strings.Contains(stderr, "every run of the report is in the baseline") {
		t.Errorf("baseline only: %q", stderr)
	}
	_, stderr = mustSbench(t, 2, "report", "--db", db, "--baseline", "nope", "-o", pdf)
	if !strings.Contains(stderr, "nope") {
		t.Errorf("unknown baseline: %q", stderr)
	}

	osu := fixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt")
	ingestCopies(t, db, "run=a", osu, 3)
	mustSbench(t, 0, "baseline", "set", "--db", db, "before4", "run=a")
	ingestCopies(t, db, "run=b4", filepath.Join(filepath.Dir(db), "slow.txt"), 4)
	out, _ = mustSbench(t, 0, "report", "--db", db, "--label", "run=b4", "--baseline", "before4", "-o", pdf)
	if !strings.Contains(out, "regressed in 23 of 23 compared points (beyond 5%, significant at 0.05 over 23 tested)") {
		t.Errorf("stdout lacks the regression in the verdict:\n%s", out)
	}
	checkPDF(t, pdf, []string{"Compared with baseline before4", "-20.00%", "REGRESSION", "Warning: against baseline before4 (4 runs)"})
	// Against identical runs: no regression.
	ingestCopies(t, db, "run=a4", osu, 4)
	out, _ = mustSbench(t, 0, "report", "--db", db, "--label", "run=a4", "--baseline", "before4", "-o", pdf)
	if !strings.Contains(out, "No regression against baseline before4: 23 points compared, 0 improved beyond 5%.") {
		t.Errorf("identical runs:\n%s", out)
	}
}
