package campaign

import (
	"strings"
	"testing"
)

// problemHead is the campaign the problem tests' snippets add to: lines
// 1 to 5 of c.toml.
const problemHead = `[campaign]
name = "q"
[slurm]
nodes = 2
ntasks_per_node = 1
`

// problemCase is a campaign and every problem validate finds in it, in
// order, as sbench validate prints them.
type problemCase struct {
	name, text string
	want       []string
}

// checkProblems parses each case as c.toml and compares the problems.
func checkProblems(t *testing.T, cases []problemCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(tt.text))
			if err == nil {
				t.Fatal("no error")
			}
			if got, want := err.Error(), strings.Join(tt.want, "\n"); got != want {
				t.Errorf("problems:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

// TestProblemsExactly: campaign snippets and the exact problems sbench
// validate prints for them, every one at once, each at its own key.
func TestProblemsExactly(t *testing.T) {
	checkProblems(t, []problemCase{
		{"every wrong type at once", `[campaign]
name = "q"
repeats = "3"
[slurm]
nodes = "two"
ntasks_per_node = 1.5
modules = ["gcc", 12]
env = { A = "x", B = 2 }
[[benchmark]]
name = "lat"
kernel = "latency"
repeats = "2"
`, []string{
			`c.toml:3:1: campaign.repeats: has type string; want an integer`,
			`c.toml:5:1: slurm.nodes: "two" is not a node count or a range such as "2-4"`,
			`c.toml:6:1: slurm.ntasks_per_node: has type float; want an integer`,
			`c.toml:7:1: slurm.modules: item 2 has type integer; want a string`,
			`c.toml:8:18: slurm.env.B: has type integer; want a string`,
			`c.toml:12:1: benchmark[0].repeats: has type string; want an integer`,
		}},
		{"a number where a list of tables goes", "benchmark = 3\n" + problemHead, []string{
			`c.toml:1:1: benchmark: has type integer; want tables`,
		}},
		{"unknown keys at their own lines", problemHead + `[[benchmark]]
name = "lat"
kernel = "latency"
[[benchmark]]
name = "bw"
kernal = "bw"
[[variant]]
nmae = "a"
`, []string{
			`c.toml:11:1: benchmark[1].kernal: unknown key (did you mean "kernel"?)`,
			`c.toml:12:1: variant[0].name: is empty`,
			`c.toml:13:1: variant[0].nmae: unknown key (did you mean "name"?)`,
		}},
		{"a wrong type in the first benchmark, not the second", problemHead + `[[benchmark]]
name = "lat"
kernel = "latency"
timeout = 10
[[benchmark]]
name = "bw"
kernel = "bw"
timeout = "10m"
`, []string{
			`c.toml:9:1: benchmark[0].timeout: has type integer; want a string`,
		}},
		{"unknown names", problemHead + `[[benchmark]]
name = "osu_latency"
command = ["osu_latency"]
parser = "osux"
[[benchmark]]
name = "native"
kernel = "latncy"
after = "osu_latncy"
[[benchmark]]
name = "x"
kind = "hppl"
after = "nothing"
`, []string{
			`c.toml:9:1: benchmark[0].parser: unknown parser "osux" (did you mean "osu"?)`,
			`c.toml:12:1: benchmark[1].kernel: unknown kernel "latncy" (did you mean "latency"?)`,
			`c.toml:13:1: benchmark[1].after: no benchmark is called "osu_latncy" (did you mean "osu_latency"?)`,
			`c.toml:16:1: benchmark[2].kind: unknown kind "hppl" (did you mean "hpl"?)`,
			`c.toml:17:1: benchmark[2].after: no benchmark is called "nothing" (known: osu_latency, native, x)`,
		}},
		{"unknown override and sweep keys", problemHead + `[[benchmark]]
name = "lat"
kernel = "latency"
slurm = { nodez = 2 }
[sweep]
ntask_per_node = [1, 2]
`, []string{
			`c.toml:9:11: benchmark[0].slurm.nodez: unknown key (did you mean "nodes"?)`,
			`c.toml:11:1: sweep.ntask_per_node: value 1: unknown key (did you mean "ntasks_per_node"?)`,
		}},
		{"an unknown kernel parameter where it is written", problemHead + `[[benchmark]]
name = "lat"
kernel = "latency"
params = { sise = "1-8" }
`, []string{
			`c.toml:9:12: benchmark[0].params.sise: variant default: param "sise": not a parameter of the latency kernel (did you mean "sizes"?)`,
		}},
	})
}

// TestProblemsBind: sbench-runner has no resolver (it is static and
// cgo-free), so [runner] bind must be an IP literal.
func TestProblemsBind(t *testing.T) {
	bench := "[[benchmark]]\nname = \"lat\"\nkernel = \"latency\"\n"
	checkProblems(t, []problemCase{
		{"a host name", problemHead + "[runner]\nbind = \"node01-ib\"\n" + bench, []string{
			`c.toml:7:1: runner.bind: "node01-ib" is not an IP address (sbench-runner looks up no host names)`,
		}},
	})
	for _, ip := range []string{"10.1.0.5", "fd00::5"} {
		if _, err := Parse("c.toml", []byte(problemHead+"[runner]\nbind = \""+ip+"\"\n"+bench)); err != nil {
			t.Errorf("bind %s: %v", ip, err)
		}
	}
}
