package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/sbench/sbench/store"
)

// twoSystems is an archive of four runs from two systems, ingested as a
// site would: --system names where each file came from.
func twoSystems(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "a.db")
	for _, f := range []struct{ system, file string }{
		{"alpha", "002-osu_bw-v5.9-cent063-to-cent064.txt"},
		{"alpha", "003-osu_latency-v7.5-2node.txt"},
		{"beta", "002-osu_bw-v5.9-cent064-to-cent063.txt"},
		{"beta", "000-hpl-infiniband.txt"},
	} {
		mustSbench(t, 0, "ingest", "--db", db, "--system", f.system, fixture(t, f.file))
	}
	return db
}

// TestRunsTable: the table streams, one run at a time, yet is laid out as
// text/tabwriter lays out the whole of it.
func TestRunsTable(t *testing.T) {
	path := twoSystems(t)
	out, _ := mustSbench(t, 0, "runs", "--db", path)
	runs := storedRuns(t, path, store.Filter{})
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(runsRow(nil), "\t"))
	for i := range runs {
		fmt.Fprintln(tw, strings.Join(runsRow(&runs[i]), "\t"))
	}
	tw.Flush()
	if out != want.String() {
		t.Errorf("runs printed\n%s\nwant\n%s", out, want.String())
	}
	if !strings.Contains(out, "SYSTEM") || strings.Count(out, " alpha ") != 2 || strings.Count(out, " beta ") != 2 {
		t.Errorf("the table does not name each run's system:\n%s", out)
	}
}

// TestRunsSystemLimitGroupBy: --system and the system label select a
// system's runs; --limit keeps the newest and says how many it left out;
// --group-by counts per value.
func TestRunsSystemLimitGroupBy(t *testing.T) {
	db := twoSystems(t)
	ids := func(args ...string) (string, string) {
		out, errOut := mustSbench(t, 0, append([]string{"runs", "--db", db, "--json"}, args...)...)
		var runs []runJSON
		if err := json.Unmarshal([]byte(out), &runs); err != nil {
			t.Fatalf("runs --json %q: %v\n%s", args, err, out)
		}
		var got []string
		for _, r := range runs {
			got = append(got, fmt.Sprintf("%d:%s", r.ID, r.System))
		}
		return strings.Join(got, " "), errOut
	}
	for _, tt := range []struct {
		args       []string
		want, note string
	}{
		{nil, "1:alpha 2:alpha 3:beta 4:beta", ""},
		{[]string{"--system", "beta"}, "3:beta 4:beta", ""},
		{[]string{"--label", "system=alpha"}, "1:alpha 2:alpha", ""},
		{[]string{"--system", "alpha,beta", "--benchmark", "osu_bw"}, "1:alpha 3:beta", ""},
		{[]string{"--limit", "3"}, "2:alpha 3:beta 4:beta", "the newest 3 of 4 runs; --limit 0 lists them all\n"},
		{[]string{"--limit", "9"}, "1:alpha 2:alpha 3:beta 4:beta", ""},
	} {
		got, note := ids(tt.args...)
		if got != tt.want || note != tt.note {
			t.Errorf("runs %q: %q (stderr %q), want %q (%q)", tt.args, got, note, tt.want, tt.note)
		}
	}
	if out, _ := mustSbench(t, 0, "runs", "--db", db, "--json", "--system", "beta", "--limit", "0"); !strings.HasPrefix(out, "[\n  {\n    \"id\": 3,\n    \"system\": \"beta\",") {
		t.Errorf("runs --json is not laid out as writeJSON lays out a list:\n%s", out)
	}
	out, _ := mustSbench(t, 0, "runs", "--db", db, "--group-by", "system")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "SYSTEM  RUNS  OK  FAILED  INVALID") ||
		strings.Join(strings.Fields(lines[1])[:5], " ") != "alpha 2 2 0 0" || strings.Join(strings.Fields(lines[2])[:5], " ") != "beta 2 1 0 1" {
		t.Errorf("runs --group-by system:\n%s", out)
	}
	out, _ = mustSbench(t, 0, "runs", "--db", db, "--group-by", "benchmark", "--json")
	var groups []runsGroup
	if err := json.Unmarshal([]byte(out), &groups); err != nil || len(groups) != 3 || groups[0].Value != "hpl" || groups[0].Invalid != 1 {
		t.Errorf("runs --group-by benchmark --json: %v\n%s", err, out)
	}
	mustSbench(t, 2, "runs", "--db", db, "--limit", "-1")
	mustSbench(t, 2, "runs", "--db", db, "--group-by", "system", "--limit", "2")
	if _, errOut := mustSbench(t, 2, "runs", "--db", db, "--system", "gama"); !strings.Contains(errOut, "systems: alpha, beta") {
		t.Errorf("an unknown system: %s", errOut)
	}
}
