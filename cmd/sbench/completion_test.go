package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/store"
)

// complete runs "sbench __complete args..." in-process, as the shells'
// scripts do, and returns the suggestions (the lines before cobra's
// ":directive" line).
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out, stderr := mustSbench(t, 0, append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("sbench __complete %q: no directive line in %q (stderr %q)", args, out, stderr)
	}
	var got []string
	for _, l := range lines[:len(lines)-1] {
		name, _, _ := strings.Cut(l, "\t") // a description follows a tab
		got = append(got, name)
	}
	return got
}

// visibleCommands lists the path of every command help shows, depth first.
func visibleCommands(c *cobra.Command) []string {
	out := []string{c.CommandPath()}
	for _, sub := range c.Commands() {
		if !sub.Hidden && sub.Name() != "help" {
			out = append(out, visibleCommands(sub)...)
		}
	}
	return out
}

func newTestRoot() *cobra.Command {
	return newRootCmd(&env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}, getenv: os.Getenv})
}

// TestCompletionScripts: each shell's script is written, is the script of
// that shell, and the subcommands complete (the scripts ask sbench
// __complete for them); gen-docs stays hidden.
func TestCompletionScripts(t *testing.T) {
	for shell, marks := range map[string][]string{
		"bash": {"__start_sbench", "complete -o default -F __start_sbench sbench", "__complete"},
		"zsh":  {"#compdef sbench", "compdef _sbench sbench", "__complete"},
		"fish": {"complete -c sbench", "__complete"},
	} {
		out, _ := mustSbench(t, 0, "completion", shell)
		for _, m := range marks {
			if !strings.Contains(out, m) {
				t.Errorf("sbench completion %s: no %q in the script", shell, m)
			}
		}
	}
	mustSbench(t, exitUsage, "completion", "tcsh")
	mustSbench(t, exitUsage, "completion")

	got := complete(t, "")
	for _, want := range []string{"report", "runs", "compare", "baseline", "ingest", "completion", "version"} {
		if !slices.Contains(got, want) {
			t.Errorf("sbench <TAB>: %q not in %q", want, got)
		}
	}
	if slices.Contains(got, "gen-docs") {
		t.Errorf("sbench <TAB> offers the hidden gen-docs: %q", got)
	}
	if got := complete(t, "rep"); !slices.Equal(got, []string{"report"}) {
		t.Errorf("sbench rep<TAB> = %q, want [report]", got)
	}
	if got := complete(t, "baseline", ""); !slices.Equal(got, []string{"list", "rm", "set"}) {
		t.Errorf("sbench baseline <TAB> = %q, want [list rm set]", got)
	}
	if got := complete(t, "completion", ""); !slices.Equal(got, []string{"bash", "fish", "zsh"}) {
		t.Errorf("sbench completion <TAB> = %q", got)
	}
	help, _ := mustSbench(t, 0, "--help")
	if strings.Contains(help, "gen-docs") || !strings.Contains(help, "completion") {
		t.Errorf("sbench --help should list completion and not gen-docs:\n%s", help)
	}
}

// TestCompleteFilterValues: the filter flags complete what the archive
// holds, and suggest nothing, quietly, without an archive.
func TestCompleteFilterValues(t *testing.T) {
	db := filepath.Join(t.TempDir(), "a.db")
	mustSbench(t, 0, "ingest", "--db", db, "--label", "run=a", "--label", "site=x",
		fixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt"), fixture(t, "000-hpl-infiniband.txt"))
	recordJobs(t, db, store.Job{SlurmID: "42", Campaign: "nightly"})

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"runs", "--db", db, "--benchmark", ""}, []string{"hpl", "osu_bw"}},
		{[]string{"report", "--db", db, "--benchmark", "h"}, []string{"hpl"}},
		{[]string{"export", "--db", db, "--benchmark", "hpl,"}, []string{"hpl,osu_bw"}},
		{[]string{"archive", "export", "--db", db, "--benchmark=o"}, []string{"osu_bw"}},
		{[]string{"compare", "--db", db, "--label", ""}, []string{"run=a", "site=x"}},
		{[]string{"history", "--db", db, "--label", "s"}, []string{"site=x"}},
		{[]string{"runs", "--db", db, "--campaign", ""}, []string{"nightly"}},
		{[]string{"status", "--db", db, "--campaign", "n"}, []string{"nightly"}},
		{[]string{"prune", "--db", db, "--status", "f"}, []string{"failed"}},
		{[]string{"runs", "--db", db, "--status", "ok,"}, []string{"ok,failed", "ok,invalid"}},
		{[]string{"runs", "--db", db, "--benchmark", "nope"}, nil},
	} {
		if got := complete(t, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("sbench __complete %q = %q, want %q", tc.args, got, tc.want)
		}
	}

	// No archive (or not an archive): nothing suggested, nothing created,
	// nothing said.
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.db")
	notDB := filepath.Join(dir, "junk.db")
	os.WriteFile(notDB, []byte("not sqlite"), 0o644)
	for _, path := range []string{missing, notDB, dir} {
		for _, flag := range []string{"--benchmark", "--campaign", "--label"} {
			out, stderr := mustSbench(t, 0, "__complete", "runs", "--db", path, flag, "")
			if strings.TrimSpace(strings.SplitN(out, ":", 2)[0]) != "" || strings.Contains(stderr, "rror") {
				t.Errorf("%s with --db %s: suggested %q, said %q", flag, path, out, stderr)
			}
		}
	}
	if _, err := os.Stat(missing); err == nil {
		t.Errorf("completion created %s", missing)
	}
}

// renderMan formats a man page as man(1) shows it, and fails on any
// warning of the formatter.
func renderMan(t *testing.T, page string) string {
	t.Helper()
	var cmd *exec.Cmd
	if _, err := exec.LookPath("man"); err == nil {
		cmd = exec.Command("man", "--warnings", "-l", page)
	} else if _, err := exec.LookPath("groff"); err == nil {
		cmd = exec.Command("groff", "-k", "-man", "-Tutf8", "-ww", page)
	} else {
		testenv.LookPath(t, "man", "man-db")
	}
	cmd.Env = append(os.Environ(), "MANWIDTH=80", "PAGER=cat", "MANPAGER=cat")
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("%s %s: %v\n%s", cmd.Path, filepath.Base(page), err, stderr.String())
	}
	// Justified lines have runs of spaces: one is enough to check words.
	return strings.Join(strings.Fields(out.String()), " ")
}

// TestManPages: gen-docs writes one page per command help lists, with the
// header the issue asks for, the same bytes every time, and each page
// renders with no warning.
func TestManPages(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1710000000") // 2024-03-09
	t.Setenv("SBENCH_DB", "/somewhere/else.db")
	dir := t.TempDir()
	mustSbench(t, 0, "gen-docs", "--man", dir)

	var want []string
	for _, p := range visibleCommands(newTestRoot()) {
		want = append(want, strings.ReplaceAll(p, " ", "-")+".1")
	}
	slices.Sort(want)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages %q, want one per command: %q", got, want)
	}
	for _, must := range []string{"sbench.1", "sbench-report.1", "sbench-baseline-set.1", "sbench-completion-bash.1"} {
		if !slices.Contains(got, must) {
			t.Errorf("no %s", must)
		}
	}

	again := t.TempDir()
	mustSbench(t, 0, "gen-docs", "--man", again)
	for _, name := range got {
		page := filepath.Join(dir, name)
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if other, _ := os.ReadFile(filepath.Join(again, name)); !bytes.Equal(data, other) {
			t.Errorf("%s differs between two runs", name)
		}
		title := strings.ToUpper(strings.TrimSuffix(name, ".1"))
		th := `.TH "` + title + `" "1" "Mar 2024" "sbench ` + version + `" "sbench manual"`
		if !strings.Contains(string(data), th+"\n") {
			t.Errorf("%s: no %s header in\n%.300s", name, th, data)
		}
		if strings.Contains(string(data), "somewhere") || strings.Contains(string(data), "Auto generated") {
			t.Errorf("%s holds the maker's $SBENCH_DB or cobra's dated tag", name)
		}
		text := renderMan(t, page)
		cmdName := strings.TrimSuffix(name, ".1")
		if !strings.Contains(text, "NAME") || !strings.Contains(text, cmdName+" - ") || !strings.Contains(text, "SYNOPSIS") {
			t.Errorf("%s renders without its NAME (%s) or SYNOPSIS:\n%.500s", name, cmdName, text)
		}
	}
	if text := renderMan(t, filepath.Join(dir, "sbench-runs.1")); !strings.Contains(text, "--benchmark") || !strings.Contains(text, "Exit status") {
		t.Errorf("sbench-runs(1) lacks the filter flags or the exit statuses:\n%s", text)
	}

	mustSbench(t, 0, "gen-docs", "--man", t.TempDir(), "--date", "2025-01-02")
	mustSbench(t, exitUsage, "gen-docs", "--man", t.TempDir(), "--date", "yesterday")
	mustSbench(t, exitUsage, "gen-docs")
	t.Setenv("SOURCE_DATE_EPOCH", "soon")
	mustSbench(t, exitUsage, "gen-docs", "--man", t.TempDir())
}
