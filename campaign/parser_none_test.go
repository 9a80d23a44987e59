package campaign

import (
	"strings"
	"testing"
)

// A command with no figures to read (hostname, an application) says
// parser = "none", in a benchmark, a variant or a sweep: it validates,
// and its runs are launched with --parser none, judged by their exit
// status and timed, with checks on their wall time.
func TestParserNone(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "apps"
[slurm]
nodes = 2
[[benchmark]]
name = "hostname"
command = ["hostname"]
parser = "none"
checks = ["wall_time<=60"]
[[variant]]
name = "plain"
[[variant]]
name = "app"
command = ["./solver", "--steps", "100"]
parser = "none"
`)
	p := mustPlan(t, c)
	var args []string
	for _, j := range p.Jobs {
		for _, st := range j.Steps {
			args = append(args, strings.Join(st.RunnerArgs, " "))
		}
	}
	all := strings.Join(args, "\n")
	for _, want := range []string{
		`--exec ["hostname"] --parser none`,
		`--check wall_time<=60`,
		`--exec ["./solver","--steps","100"] --parser none`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("runner args lack %q:\n%s", want, all)
		}
	}

	_, err := Parse("c.toml", []byte(`
[campaign]
name = "apps"
[slurm]
nodes = 2
[[benchmark]]
name = "hostname"
command = ["hostname"]
parser = "nnoe"
`))
	if err == nil || !strings.Contains(err.Error(), `benchmark[0].parser: unknown parser "nnoe" (did you mean "none"?)`) {
		t.Errorf("a misspelt none: %v", err)
	}
}
