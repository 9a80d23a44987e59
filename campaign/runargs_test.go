package campaign

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/sbench/sbench/runargs"
)

// TestRunnerArgsParse holds the planner to the runner's command line: the
// runner's arguments of every step of every example campaign parse as
// sbench-runner reads them (package runargs), and write back the same.
func TestRunnerArgsParse(t *testing.T) {
	examples, _ := filepath.Glob("../examples/*.toml")
	more, _ := filepath.Glob("testdata/campaigns/*.toml")
	steps := 0
	for _, ex := range append(examples, more...) {
		c, err := Load(ex)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := c.Plan()
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range plan.Jobs {
			for _, st := range j.Steps {
				steps++
				args := st.RunnerArgs
				a, err := runargs.Parse(args[1:], runargs.Args{})
				if args[0] != "run" || err != nil {
					t.Errorf("%s step %d: %q: %v", ex, st.Index, args, err)
					continue
				}
				if again := a.Argv(); !slices.Equal(again, args) {
					t.Errorf("%s step %d:\nplanned %q\nwritten %q", ex, st.Index, args, again)
				}
			}
		}
	}
	if steps < 20 {
		t.Errorf("only %d steps planned", steps)
	}
}
