package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneFilterVocabulary: every command that selects runs takes the same
// filter flags, each meaning the same thing.
func TestOneFilterVocabulary(t *testing.T) {
	root := newRootCmd(&env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
	for _, path := range [][]string{{"runs"}, {"export"}, {"report"}, {"compare"}, {"history"}, {"prune"}, {"archive", "export"}} {
		c, _, err := root.Find(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"system", "campaign", "benchmark", "label", "run", "job", "status", "since", "until"} {
			f := c.Flags().Lookup(name)
			if f == nil {
				t.Errorf("%s has no --%s", strings.Join(path, " "), name)
				continue
			}
			if want := map[string]string{"system": "stringArray", "benchmark": "stringArray", "label": "stringArray", "run": "stringArray"}[name]; want != "" && f.Value.Type() != want {
				t.Errorf("%s --%s is %s, want %s (repeatable everywhere)", strings.Join(path, " "), name, f.Value.Type(), want)
			}
		}
	}
}

// TestFilterFlags: run ranges (export --run 1-24 used to fail in strconv),
// statuses, jobs and times select what they say.
func TestFilterFlags(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	for _, f := range []string{"002-osu_bw-v5.9-cent063-to-cent064.txt", "002-osu_bw-v5.9-cent064-to-cent063.txt", "003-osu_latency-v7.5-2node.txt", "000-hpl-infiniband.txt"} {
		mustSbench(t, 0, "ingest", "--db", db, fixture(t, f))
	}
	count := func(args ...string) int {
		out, _ := mustSbench(t, 0, append([]string{"runs", "--db", db}, args...)...)
		return strings.Count(out, "\n") - 1
	}
	all := count()
	if all != 4 {
		t.Fatalf("%d runs ingested", all)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"--run", "1-2"}, 2},
		{[]string{"--run", "1-2,4", "--run", "3"}, 4},
		{[]string{"--benchmark", "osu_bw,osu_latency"}, 3},
		{[]string{"--benchmark", "osu_bw", "--benchmark", "osu_latency"}, 3},
		{[]string{"--status", "invalid"}, 1},
		{[]string{"--status", "ok,invalid"}, all},
	} {
		if got := count(c.args...); got != c.want {
			t.Errorf("runs %q: %d runs, want %d", c.args, got, c.want)
		}
	}
	// A selection of nothing is an error naming what there is.
	_, stderr := mustSbench(t, 2, "runs", "--db", db, "--since", "1d")
	if !strings.Contains(stderr, "do not say when they started") {
		t.Errorf("runs --since 1d: %s", stderr)
	}
	_, stderr = mustSbench(t, 2, "runs", "--db", db, "--benchmark", "osu_lat")
	if !strings.Contains(stderr, "benchmarks: hpl, osu_bw, osu_latency") {
		t.Errorf("runs --benchmark osu_lat: %s", stderr)
	}
	// export takes the same ranges.
	out, _ := mustSbench(t, 0, "export", "--db", db, "--run", "1-2", "--format", "csv")
	if strings.Contains(out, "\n3,") {
		t.Errorf("export --run 1-2 exported run 3")
	}
	for _, bad := range [][]string{{"--run", "x"}, {"--status", "done"}, {"--since", "June"}, {"--since", "2025-02-01", "--until", "2025-01-01"}} {
		_, stderr := mustSbench(t, 2, append([]string{"runs", "--db", db}, bad...)...)
		if !strings.Contains(stderr, bad[0]) {
			t.Errorf("runs %q: %q does not name the flag", bad, stderr)
		}
	}
}
