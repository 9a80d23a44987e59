package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/internal/testenv"
)

// TestProgressOnTerminalOnly: report and archive import, which take tens
// of seconds on a site's archive, draw a progress bar when stderr is a
// terminal (script(1) gives them one), and nothing into a file, where it
// would only be noise in a log.
func TestProgressOnTerminalOnly(t *testing.T) {
	script := testenv.LookPath(t, "script", "bsdutils")
	bin := buildSbench(t)
	src := manyRuns(t, 600, 170) // 102,000 samples: a report worth a bar
	dir := t.TempDir()
	archive := filepath.Join(dir, "all.sbench.gz")
	mustSbench(t, 0, "archive", "export", "--db", src, "-o", archive)
	for _, c := range []struct {
		name string
		args func(run string) []string
		bar  string
	}{
		{"archive import", func(run string) []string {
			return []string{"archive", "import", "--db", filepath.Join(dir, run+".db"), archive}
		}, "import " + archive},
		{"report", func(run string) []string {
			return []string{"report", "--db", src, "--appendix", "none", "-o", filepath.Join(dir, run+".pdf")}
		}, "report"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// What the terminal got: stderr (and script's own words).
			line := campaign.QuoteArgs(append([]string{bin}, c.args("tty")...)) + " >/dev/null"
			tty, err := exec.Command(script, "-qec", line, "/dev/null").CombinedOutput()
			if err != nil {
				t.Fatalf("%s on a terminal: %v\n%s", c.name, err, tty)
			}
			if !strings.Contains(string(tty), c.bar) || !strings.Contains(string(tty), "%") {
				t.Errorf("%s on a terminal drew no bar %q:\n%q", c.name, c.bar, tty)
			}
			cmd := exec.Command(bin, c.args("file")...)
			logPath := filepath.Join(dir, "stderr.log")
			logFile, err := os.Create(logPath)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = logFile
			err = cmd.Run()
			logFile.Close()
			log, _ := os.ReadFile(logPath)
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, log)
			}
			if strings.Contains(string(log), "%") || strings.Contains(string(log), "\r") {
				t.Errorf("%s drew a bar into a file:\n%q", c.name, log)
			}
		})
	}
}
