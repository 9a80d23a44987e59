package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
)

const installPrefix = "/usr/local"

// makeInstall runs "make install PREFIX=/usr/local DESTDIR=tmp" (which
// builds both binaries, here into a directory of the test's) and returns
// the installed tree's root, DESTDIR+PREFIX.
func makeInstall(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("make install builds sbench and sbench-runner")
	}
	testenv.LookPath(t, "make", "make")
	dir := t.TempDir()
	cmd := exec.Command("make", "-C", repoRoot(t), "install", "PREFIX="+installPrefix,
		"DESTDIR="+filepath.Join(dir, "dest"), "BIN="+filepath.Join(dir, "bin"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	return filepath.Join(dir, "dest", installPrefix)
}

// TestMakeInstall: make install PREFIX DESTDIR puts both binaries, a man
// page per command and the three shells' completion where they belong.
func TestMakeInstall(t *testing.T) {
	dest := makeInstall(t)
	for _, bin := range []string{"bin/sbench", "bin/sbench-runner"} {
		st, err := os.Stat(filepath.Join(dest, bin))
		if err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s: not an installed executable (%v)", bin, err)
		}
	}
	out, err := exec.Command(filepath.Join(dest, "bin/sbench"), "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "sbench ") {
		t.Errorf("installed sbench version: %v %s", err, out)
	}
	for file, mark := range map[string]string{
		"share/bash-completion/completions/sbench":    "__start_sbench",
		"share/zsh/site-functions/_sbench":            "#compdef sbench",
		"share/fish/vendor_completions.d/sbench.fish": "complete -c sbench",
	} {
		data, err := os.ReadFile(filepath.Join(dest, file))
		if err != nil || !bytes.Contains(data, []byte(mark)) {
			t.Errorf("%s: %v, or no %q in it", file, err, mark)
		}
	}
	for _, p := range visibleCommands(newTestRoot()) {
		page := filepath.Join(dest, "share/man/man1", strings.ReplaceAll(p, " ", "-")+".1")
		data, err := os.ReadFile(page)
		if err != nil {
			t.Errorf("no man page for %q: %v", p, err)
			continue
		}
		if !bytes.Contains(data, []byte(`.TH "`)) || bytes.Contains(data, []byte("Jan 1970")) {
			t.Errorf("%s: no header, or no commit date in it:\n%.200s", page, data)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, "share/man/man1/sbench-gen-docs.1")); err == nil {
		t.Error("the hidden gen-docs has a man page")
	}
	renderMan(t, filepath.Join(dest, "share/man/man1/sbench-report.1"))
	t.Run("bash completes", func(t *testing.T) { testBashCompletes(t, dest) })
}

// testBashCompletes: the installed bash script, loaded as bash-completion
// loads it, completes commands and archive values with the installed
// sbench.
func testBashCompletes(t *testing.T, dest string) {
	bash := testenv.LookPath(t, "bash", "bash")
	const lib = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(lib); err != nil {
		testenv.Require(t, "bash-completion is not installed (package bash-completion)")
	}
	db := filepath.Join(t.TempDir(), "a.db")
	mustSbench(t, 0, "ingest", "--db", db, "--label", "run=a", fixture(t, "002-osu_bw-v5.9-cent063-to-cent064.txt"),
		fixture(t, "000-hpl-infiniband.txt"))

	// complete types words... and TAB, and prints COMPREPLY one per line.
	script := `source ` + lib + `
source "$1"
complete_words() {
	COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
	__start_sbench sbench "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}" 2>/dev/null
	printf '%s\n' "${COMPREPLY[@]}"
	echo --
}
complete_words sbench rep
complete_words sbench baseline ''
complete_words sbench runs --db "$2" --benchmark ''
complete_words sbench report --db "$2" --label r
`
	cmd := exec.Command(bash, "--norc", "--noprofile", "-c", script, "bash",
		filepath.Join(dest, "share/bash-completion/completions/sbench"), db)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(dest, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "--\n"), "--\n")
	want := []string{"report\n", "list\nrm\nset\n", "hpl\nosu_bw\n", "run=a\n"}
	if len(got) != len(want) {
		t.Fatalf("bash completions:\n%s", out)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("completion %d: got %q, want %q", i, got[i], want[i])
		}
	}
}
