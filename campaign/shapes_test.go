package campaign

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// shapesBench is a benchmark that validates on its own, for the shape
// tests to add keys to: lines 6 to 8 after problemHead.
const shapesBench = `[[benchmark]]
name = "x"
command = ["a"]
`

// TestProblemsSyntaxAtItsLine: a TOML syntax error is reported at the
// line and column where it is, not where the lexer had got to (past the
// newline it stopped at: "[campaign" alone was reported at line 2).
func TestProblemsSyntaxAtItsLine(t *testing.T) {
	checkProblems(t, []problemCase{
		{"an unclosed table header", "[campaign\nname = \"q\"\n", []string{
			`c.toml:1:10: expected '.' or ']' to end table name, but got '\n' instead`,
		}},
		{"an unclosed table header alone", "[campaign\n", []string{
			`c.toml:1:10: expected '.' or ']' to end table name, but got '\n' instead`,
		}},
		{"an unclosed table header at the end", "[campaign", []string{
			`c.toml:1:9: expected '.' or ']' to end table name, but got '\x00' instead`,
		}},
		{"a key defined twice, at the second", "[campaign]\nname = \"a\"\nname = \"b\"\n", []string{
			`c.toml:3:1: campaign.name: Key 'campaign.name' has already been defined.`,
		}},
		{"a string left open", "[campaign]\nname = \"a\nrepeats = 1\n", []string{
			`c.toml:2:10: campaign.name: strings cannot contain newlines`,
		}},
		{"a missing value", "[campaign]\nname =\nrepeats = 1\n", []string{
			`c.toml:2:7: campaign.name: expected value but found '\n' instead`,
		}},
		{"a bad item in a list of several lines", "[slurm]\nmodules = [\"a\",\n  \"b\",\n  c]\n", []string{
			`c.toml:4:3: slurm.modules: expected value but found "c" instead`,
		}},
		{"after a byte order mark", "\ufeff[campaign]\nname = \"q\"\n[slurm\n", []string{
			`c.toml:3:7: expected '.' or ']' to end table name, but got '\n' instead`,
		}},
	})
}

// TestProblemsShapes: every value validate would not honour is refused
// at its key — a string where a table goes (toml decodes any value that
// is not a table into a Go map as an empty one), a table where a list
// goes, a list where a string goes — and an element of a table is
// reported at its own key and column.
func TestProblemsShapes(t *testing.T) {
	head := problemHead + shapesBench
	checkProblems(t, []problemCase{
		{"a launcher string in a benchmark", head + `launcher = "srun --mpi=pmix"` + "\n", []string{
			`c.toml:9:1: benchmark[0].launcher: has type string; want a table, e.g. launcher = { type = "srun", mpi = "pmix" }`,
		}},
		{"a launcher string in a variant", head + "[[variant]]\nname = \"v\"\nlauncher = \"mpirun\"\n", []string{
			`c.toml:11:1: variant[0].launcher: has type string; want a table, e.g. launcher = { type = "srun", mpi = "pmix" }`,
		}},
		{"a launcher string for the campaign", "launcher = \"srun\"\n" + head, []string{
			`c.toml:1:1: launcher: has type string; want a table, e.g. launcher = { type = "srun", mpi = "pmix" }`,
		}},
		{"slurm overrides that are not tables", head + "slurm = \"--exclusive\"\n[[variant]]\nname = \"v\"\nslurm = 3\n", []string{
			`c.toml:9:1: benchmark[0].slurm: has type string; want a table, e.g. slurm = { nodes = 2, ntasks_per_node = 4 }`,
			`c.toml:12:1: variant[0].slurm: has type integer; want a table, e.g. slurm = { nodes = 2, ntasks_per_node = 4 }`,
		}},
		{"tables of a benchmark that are not tables", head + `params = "sizes=8"
labels = "a"
env = ["A=1"]
files = "HPL.dat"
sweep = 3
hpl = "x"
per_rank = ["a"]
`, []string{
			`c.toml:9:1: benchmark[0].params: has type string; want a table`,
			`c.toml:10:1: benchmark[0].labels: has type string; want a table of strings`,
			`c.toml:11:1: benchmark[0].env: has type list; want a table of strings`,
			`c.toml:12:1: benchmark[0].files: has type string; want a table of tables`,
			`c.toml:13:1: benchmark[0].sweep: has type integer; want a table`,
			`c.toml:14:1: benchmark[0].hpl: has type string; want a table`,
			`c.toml:15:1: benchmark[0].per_rank: has type list; want a table of lists of strings`,
		}},
		{"a file that is not a table", head + "files = { \"in.txt\" = \"x\" }\n", []string{
			`c.toml:9:11: benchmark[0].files."in.txt": has type string; want a table`,
		}},
		{"campaign tables that are not tables", "sweep = [1]\n" + problemHead + "labels = 1\n" + shapesBench, []string{
			`c.toml:1:1: sweep: has type list; want a table`,
			`c.toml:7:1: slurm.labels: unknown key`,
		}},
		{"campaign labels and slurm env that are not tables", `[campaign]
name = "q"
labels = "a=b"
[slurm]
env = "A=1"
` + shapesBench, []string{
			`c.toml:3:1: campaign.labels: has type string; want a table of strings`,
			`c.toml:5:1: slurm.env: has type string; want a table of strings`,
		}},
		{"benchmarks that are not tables", "benchmark = [1, 2]\n" + problemHead, []string{
			`c.toml:1:1: benchmark: item 1 has type integer; want a table`,
		}},
		{"one [benchmark] table", problemHead + "[benchmark]\nname = \"x\"\ncommand = [\"a\"]\n", []string{
			`c.toml:6:1: benchmark: has type table; want tables`,
		}},
		{"elements at their own keys", problemHead + `env = { A = "x", B = 2 }
` + shapesBench + `labels = { ok = "y", n = 1 }
per_rank = { "0" = ["a"], "1" = "b" }
`, []string{
			`c.toml:6:18: slurm.env.B: has type integer; want a string`,
			`c.toml:10:22: benchmark[0].labels.n: has type integer; want a string`,
			`c.toml:11:27: benchmark[0].per_rank."1": has type string; want a list of strings`,
		}},
		{"lists where strings go, and strings where lists go", problemHead + `modules = "gcc"
` + shapesBench + `checks = "bandwidth>1"
timeout = ["10m"]
`, []string{
			`c.toml:6:1: slurm.modules: has type string; want a list of strings`,
			`c.toml:10:1: benchmark[0].checks: has type string; want a list of strings`,
			`c.toml:11:1: benchmark[0].timeout: has type list; want a string`,
		}},
		{"numbers and booleans of the wrong kind", `[campaign]
name = "q"
repeats = 1.5
[slurm]
nodes = true
ntasks_per_node = "4"
exclusive = "yes"
` + shapesBench, []string{
			`c.toml:3:1: campaign.repeats: has type float; want an integer`,
			`c.toml:5:1: slurm.nodes: has type boolean; want a node count or a range such as "2-4"`,
			`c.toml:6:1: slurm.ntasks_per_node: has type string; want an integer`,
			`c.toml:7:1: slurm.exclusive: has type string; want true or false`,
		}},
		{"a date where a string goes", "[campaign]\nname = 2024-01-01\n" + shapesBench, []string{
			`c.toml:2:1: campaign.name: has type datetime; want a string`,
		}},
	})
}

// TestProblemsUnknownKeys: a key the schema does not know is refused in
// every table, fixed or free-form.
func TestProblemsUnknownKeys(t *testing.T) {
	checkProblems(t, []problemCase{
		{"everywhere", `title = "x"
[campaign]
name = "q"
nmae = "q"
[slurm]
nodes = 2
ntasks_per_node = 1
node = 2
[launcher]
typ = "srun"
[runner]
pth = "x"
[[benchmark]]
name = "x"
command = ["a"]
comand = ["a"]
files = { "in" = { content = "x", mode = "0644" } }
slurm = { partitoin = "p" }
launcher = { flavour = "openmpi" }
[benchmark.hpl]
nb = 192
[[variant]]
name = "v"
slurm = { memory = "1G" }
launcher = { arg = ["x"] }
[sweep]
ntask = [1, 2]
"launcher.typ" = ["srun"]
`, []string{
			`c.toml:1:1: title: unknown key`,
			`c.toml:4:1: campaign.nmae: unknown key (did you mean "name"?)`,
			`c.toml:8:1: slurm.node: unknown key (did you mean "nodes"?)`,
			`c.toml:10:1: launcher.typ: unknown key (did you mean "type"?)`,
			`c.toml:12:1: runner.pth: unknown key (did you mean "path"?)`,
			`c.toml:16:1: benchmark[0].comand: unknown key (did you mean "command"?)`,
			`c.toml:17:35: benchmark[0].files.in.mode: unknown key`,
			`c.toml:18:11: benchmark[0].slurm.partitoin: unknown key (did you mean "partition"?)`,
			`c.toml:19:14: benchmark[0].launcher.flavour: unknown key (did you mean "flavor"?)`,
			`c.toml:20:1: benchmark[0].hpl: is the input of kind = "hpl" or "hpcc"; this benchmark has no kind`,
			`c.toml:24:11: variant[0].slurm.memory: unknown key (known: account, constraint, cpus_per_task, env, error, exclude, exclusive, extra, gpus, gres, job_name, mem, mem_per_cpu, modules, nodelist, nodes, ntasks, ntasks_per_node, output, partition, qos, reservation, setup, teardown, time)`,
			`c.toml:25:14: variant[0].launcher.arg: unknown key (did you mean "args"?)`,
			`c.toml:27:1: sweep.ntask: value 1: unknown key (did you mean "ntasks"?)`,
			`c.toml:28:1: sweep."launcher.typ": value 1: unknown key (did you mean "type"?)`,
		}},
	})
}

// TestProblemsAtTheString: a placeholder is reported at the key holding
// it — per_rank."1", not command — and at the line and column of the
// string it is in, however the list is written.
func TestProblemsAtTheString(t *testing.T) {
	checkProblems(t, []problemCase{
		{"per_rank inline", problemHead + `[[benchmark]]
name = "np"
per_rank = { "0" = ["NPtcp", "-h", "{host:1}"], "1" = ["NPtcp", "-b", "{param:bfu}"] }
`, []string{
			`c.toml:8:71: benchmark[0].per_rank."1": variant default: {param:bfu}: no such param (set it in params or sweep param.bfu)`,
		}},
		{"per_rank as a table, a list over lines", problemHead + `[[benchmark]]
name = "np"
[benchmark.per_rank]
0 = ["NPtcp", "-h", "{host:1}"]
1 = [
  "NPtcp",   # the receiver
  "-b", "{param:bfu}",
]
`, []string{
			`c.toml:12:9: benchmark[0].per_rank."1": variant default: {param:bfu}: no such param (set it in params or sweep param.bfu)`,
		}},
		{"command", problemHead + `[[benchmark]]
name = "x"
command = ["osu_bw", "-m", "{param:max}"]
`, []string{
			`c.toml:8:28: benchmark[0].command: variant default: {param:max}: no such param (set it in params or sweep param.max)`,
		}},
		{"a variant's command", problemHead + `[[benchmark]]
name = "x"
[[variant]]
name = "v"
command = ["osu_bw",
    "-x", "{peer}"]
`, []string{
			`c.toml:11:11: variant[0].command: unknown placeholder {peer} (known: {rank}, {size}, {host:N}, {node:N}, {hostname:N}, {workdir}, {param:NAME}, {{ for a brace)`,
		}},
		{"an unknown placeholder in per_rank", problemHead + `[[benchmark]]
name = "np"
per_rank = { "0" = ["NPtcp"], "1" = ["NPtcp", "{rnak}"] }
`, []string{
			`c.toml:8:47: benchmark[0].per_rank."1": unknown placeholder {rnak} (known: {rank}, {size}, {host:N}, {node:N}, {hostname:N}, {workdir}, {param:NAME}, {{ for a brace)`,
		}},
		{"a rank that does not exist", problemHead + `[[benchmark]]
name = "np"
per_rank = { "0" = ["NPtcp"], "5" = ["NPtcp"] }
`, []string{
			`c.toml:8:31: benchmark[0].per_rank."5": variant default: rank 5 does not exist: the step has 2 rank(s)`,
		}},
	})
}

// TestProblemsOverridesAtTheirKey: a value set in a benchmark's or a
// variant's slurm or launcher table, found wrong only once the run's
// settings are combined, is reported where it is written, once.
func TestProblemsOverridesAtTheirKey(t *testing.T) {
	checkProblems(t, []problemCase{
		{"a launcher type that is a number", problemHead + shapesBench + "launcher = { type = 3 }\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\n", []string{
			`c.toml:9:14: benchmark[0].launcher.type: "3" is not a launcher: use srun, mpirun or mpiexec`,
		}},
		{"a Slurm time in a variant", problemHead + shapesBench + "[[variant]]\nname = \"v\"\nslurm = { time = \"soon\" }\n", []string{
			`c.toml:11:11: variant[0].slurm.time: "soon" is not a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH:MM:SS or UNLIMITED)`,
		}},
		{"srun's mpi with mpirun from a benchmark", problemHead + "[launcher]\nmpi = \"pmix\"\n" + shapesBench + "launcher = { type = \"mpirun\", flavor = \"openmpi\" }\n", []string{
			`c.toml:7:1: launcher.mpi: is srun's --mpi option; the launcher is mpirun`,
		}},
	})
}

// TestProblemKeysQuoted: a key that is not a bare TOML key, or that
// reads as an index, is quoted in a problem's key path as in TOML.
func TestProblemKeysQuoted(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"nodes", "nodes"},
		{"ntasks_per_node", "ntasks_per_node"},
		{"a-b", "a-b"},
		{"1", `"1"`},
		{"HPL.dat", `"HPL.dat"`},
		{"launcher.type", `"launcher.type"`},
		{"", `""`},
		{`a"b`, `"a\"b"`},
	} {
		if got := keyPart(tt.in); got != tt.want {
			t.Errorf("keyPart(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := strings.Join([]string{join("", "a"), join("a", "1"), join("a.b", "c.d")}, " "); got != `a a."1" a.b."c.d"` {
		t.Errorf("join: %s", got)
	}
}

// TestKeyIndexItems: the locator places keys and list items however
// they are written — inline, over lines, with comments and strings that
// look like keys — and a path it has not seen at its nearest parent.
func TestKeyIndexItems(t *testing.T) {
	src := `[campaign]
name = "q"  # a = "not a key"
[[benchmark]]
name = "a"
command = ["x", "a = b", # a comment [not] a table
  "{param:y}"]
files = { "in.txt" = { content = """
[not a table]
y = 1
""" } }
[[benchmark]]
name = "b"
per_rank = { "0" = ['r0', "a\"]"], 1 = [ "r1" ] }
[benchmark.sweep]
"param.n" = [[1, 2], [3]]
`
	ix := newKeyIndex(src)
	for path, want := range map[string][2]int{
		"campaign.name":                       {2, 1},
		"benchmark[0].command":                {5, 1},
		"benchmark[0].command[1]":             {5, 17},
		"benchmark[0].command[2]":             {6, 3},
		`benchmark[0].files."in.txt"`:         {7, 11},
		`benchmark[0].files."in.txt".content`: {7, 24},
		"benchmark[1].name":                   {12, 1},
		`benchmark[1].per_rank."0"[1]`:        {13, 27},
		`benchmark[1].per_rank."1"[0]`:        {13, 42},
		`benchmark[1].sweep."param.n"[1][0]`:  {15, 23},
		// Not written: the nearest parent.
		"benchmark[1].kernel":          {11, 1},
		`benchmark[1].per_rank."7"[3]`: {13, 1},
		"nothing.at.all":               {0, 0},
	} {
		if line, col := ix.lookup(path); line != want[0] || col != want[1] {
			t.Errorf("%s at %d:%d, want %d:%d", path, line, col, want[0], want[1])
		}
	}
	for _, p := range []string{"y", "a", "benchmark[0].y", "benchmark[0].command.a", "not a table"} {
		if _, ok := ix.pos[p]; ok {
			t.Errorf("%q is indexed: it is inside a string or a comment", p)
		}
	}
}

// FuzzKeyIndex: the locator ends, and places every path inside the
// document, for whatever toml accepts.
func FuzzKeyIndex(f *testing.F) {
	for _, s := range []string{problemHead + shapesBench, "a = [1, [2, {b = 3}]]\n", "a = \"\"\"x\"\"\"\"\n", "a = 'x'\nb = {c = 'd'}\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var doc map[string]any
		if _, err := toml.Decode(src, &doc); err != nil {
			return
		}
		ix := newKeyIndex(src)
		lines := strings.Count(src, "\n") + 1
		for p, at := range ix.pos {
			if at[0] < 1 || at[0] > lines || at[1] < 1 {
				t.Errorf("%s at %d:%d, outside the document", p, at[0], at[1])
			}
		}
	})
}
