package campaign

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/sbench/sbench/hpl"
)

// hplCampaign is a kind hpl campaign on 4 nodes × 36 ranks with 64 GiB.
const hplCampaign = `
[campaign]
name = "h"
[slurm]
nodes = 4
ntasks_per_node = 36
mem = "64G"
time = "60"
[[benchmark]]
name = "hpl"
kind = "hpl"
[benchmark.hpl]
n = "auto"
nb = 192
`

// A kind hpl benchmark with article 000's values writes exactly the HPL.dat
// the article's campaign spells out by hand: HPL's defaults are sbench's.
func TestKindHPLWritesArticle000sHPLDat(t *testing.T) {
	article, err := Load("../examples/000-infiniband-vs-ethernet.toml")
	if err != nil {
		t.Fatal(err)
	}
	var handWritten string
	for _, b := range article.Benchmarks {
		if f, ok := b.Files["HPL.dat"]; ok {
			handWritten = f.Content
		}
	}
	c := mustParse(t, `
[campaign]
name = "a"
[slurm]
nodes = 2
ntasks_per_node = 2
[[benchmark]]
name = "hpl"
kind = "hpl"
hpl = { n = 20000, nb = 104, p = 1, q = 4 }
`)
	runs, _ := c.Runs()
	files, err := c.InputFiles(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := string(files["HPL.dat"]); got != handWritten || len(files) != 1 {
		t.Errorf("generated files %q; HPL.dat:\n%s\nwant:\n%s", keysOf(files), got, handWritten)
	}
	b := c.Benchmarks[0]
	if !reflect.DeepEqual(b.Command, []string{"xhpl"}) || b.Parser != "hpl" || b.Output != "" {
		t.Errorf("kind hpl defaults: command %q parser %q output %q", b.Command, b.Parser, b.Output)
	}
}

func keysOf(m map[string][]byte) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// "auto" sizes every run for its own nodes and ranks.
func TestKindHPLAutoPerRun(t *testing.T) {
	c := mustParse(t, hplCampaign+"[sweep]\nnodes = [1, 2, 4]\n")
	runs, err := c.Runs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]hpl.Grid{"nodes=1": {P: 6, Q: 6}, "nodes=2": {P: 8, Q: 9}, "nodes=4": {P: 12, Q: 12}}
	for _, r := range runs {
		in, err := c.HPLInput(r)
		if err != nil {
			t.Fatal(err)
		}
		nodes := r.Config.NodeCount()
		wantN := hpl.ProblemSize(uint64(nodes)*64<<30, 0.8, 192)
		if !reflect.DeepEqual(in.Ns, []int{wantN}) || !reflect.DeepEqual(in.NBs, []int{192}) || !reflect.DeepEqual(in.Grids, []hpl.Grid{want[r.Name]}) {
			t.Errorf("%s: N %v NB %v grids %v, want N %d, grid %s", r.Name, in.Ns, in.NBs, in.Grids, wantN, want[r.Name])
		}
	}
	// The acceptance figures: 4 nodes × 64 GiB × 36 ranks.
	in, _ := c.HPLInput(runs[2])
	if in.Ns[0] != 165696 {
		t.Errorf("4 nodes: N=%d, want 165696", in.Ns[0])
	}
	// The runner gets the file.
	p := mustPlan(t, c)
	args := strings.Join(p.Jobs[0].Steps[2].RunnerArgs, " ")
	files, _ := c.InputFiles(runs[2])
	if !strings.Contains(args, "--file HPL.dat="+base64.StdEncoding.EncodeToString(files["HPL.dat"])) ||
		!strings.Contains(args, `--exec ["xhpl"] --parser hpl`) {
		t.Errorf("runner args lack the generated HPL.dat or xhpl:\n%s", args)
	}
}

func TestKindHPLMemory(t *testing.T) {
	for _, tc := range []struct {
		name, slurm, spec string
		mem               uint64
	}{
		{"slurm mem in MiB", `mem = "8000"`, ``, 8000 << 20},
		{"mem_per_cpu", "mem_per_cpu = \"2G\"\ncpus_per_task = 2", ``, 2 << 30 * 36 * 2},
		{"mem_per_node wins", `mem = "64G"`, `mem_per_node = "1GiB"`, 1 << 30},
	} {
		text := strings.Replace(hplCampaign, `mem = "64G"`, tc.slurm, 1)
		text = strings.Replace(text, `nb = 192`, "nb = 192\nfraction = 0.5\n"+tc.spec, 1)
		c := mustParse(t, text)
		runs, _ := c.Runs()
		in, err := c.HPLInput(runs[0])
		if want := hpl.ProblemSize(4*tc.mem, 0.5, 192); err != nil || in.Ns[0] != want {
			t.Errorf("%s: N %v (%v), want %d", tc.name, in.Ns, err, want)
		}
	}
}

// Every value of [benchmark.hpl] reaches the file; lists stay lists.
func TestKindHPCCEveryKey(t *testing.T) {
	c := mustParse(t, `
[campaign]
name = "e"
[slurm]
nodes = 1
ntasks_per_node = 8
[[benchmark]]
name = "hpcc"
kind = "hpcc"
command = ["/opt/hpcc/bin/hpcc"]
[benchmark.hpl]
n = [1000, 2000]
nb = [64, 128]
p = [2, 1]
q = [4, 8]
pmap = "column"
threshold = 8
pfact = ["left", 1]
nbmin = [2, 4]
ndiv = 3
rfact = "right"
bcast = ["1ring", "BlongM"]
depth = [0, 1]
swap = "binary-exchange"
swap_threshold = 32
l1_no_transposed = true
u_no_transposed = true
equilibration = false
align = 16
ptrans_n = [500]
ptrans_nb = [32, 16]
`)
	b := c.Benchmarks[0]
	if b.Command[0] != "/opt/hpcc/bin/hpcc" || b.Parser != "hpcc" || b.Output != "hpccoutf.txt" {
		t.Errorf("kind hpcc: command %q parser %q output %q", b.Command, b.Parser, b.Output)
	}
	runs, _ := c.Runs()
	in, err := c.HPLInput(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	want := hpl.Input{Ns: []int{1000, 2000}, NBs: []int{64, 128}, PMAP: hpl.PMapColumn, Grids: []hpl.Grid{{P: 2, Q: 4}, {P: 1, Q: 8}},
		Threshold: 8, PFACTs: []hpl.Fact{hpl.FactLeft, hpl.FactCrout}, NBMINs: []int{2, 4}, NDIVs: []int{3},
		RFACTs: []hpl.Fact{hpl.FactRight}, BCASTs: []hpl.Bcast{hpl.Bcast1Ring, hpl.BcastLongM}, DEPTHs: []int{0, 1},
		SWAP: hpl.SwapBinaryExchange, SwapThreshold: 32, L1NoTransposed: true, UNoTransposed: true, Equilibration: false,
		Align: 16, PTRANSNs: []int{500}, PTRANSNBs: []int{32, 16}}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("input\n%+v\nwant\n%+v", in, want)
	}
	files, _ := c.InputFiles(runs[0])
	wantFile, _ := want.HPCCInf()
	if string(files["hpccinf.txt"]) != string(wantFile) || len(files) != 1 {
		t.Errorf("hpccinf.txt:\n%s", files["hpccinf.txt"])
	}
}

func TestKindProblems(t *testing.T) {
	tests := []struct {
		name, from, to string
		want           []string
	}{
		{"unknown kind", `kind = "hpl"`, `kind = "linpack"`, []string{"c.toml:11:1: benchmark[0].kind: unknown kind \"linpack\" (known: hpcc, hpl)"}},
		{"kind and kernel", `kind = "hpl"`, "kind = \"hpl\"\nkernel = \"latency\"", []string{"benchmark[0].kind: is for external tools; kernel latency is native"}},
		{"per_rank", `kind = "hpl"`, "kind = \"hpl\"\nper_rank = { \"0\" = [\"xhpl\"] }", []string{"benchmark[0].per_rank: kind hpl runs one MPI program on every rank"}},
		{"pairs", `kind = "hpl"`, "kind = \"hpl\"\npairs = \"all\"", []string{"benchmark[0].pairs: kind hpl runs on every rank"}},
		{"hpl without kind", `kind = "hpl"`, `command = ["xhpl"]`, []string{"c.toml:12:1: benchmark[0].hpl: is the input of kind"}},
		{"own HPL.dat", "nb = 192\n", "nb = 192\n[benchmark.files.\"HPL.dat\"]\ncontent = \"x\"\n", []string{`benchmark[0].files."HPL.dat": kind hpl writes HPL.dat`}},
		{"no n", `n = "auto"`, ``, []string{"benchmark[0].hpl.n: is required"}},
		{"n a word", `n = "auto"`, `n = "big"`, []string{"c.toml:13:1: benchmark[0].hpl.n: \"big\" is not an integer or a list of integers, or \"auto\""}},
		{"n negative", `n = "auto"`, `n = [1000, -1]`, []string{"benchmark[0].hpl.n: item 2: -1 is out of range"}},
		{"n float", `n = "auto"`, `n = 1e5`, []string{"benchmark[0].hpl.n: has type float"}},
		{"nb zero", `nb = 192`, `nb = 0`, []string{"c.toml:14:1: benchmark[0].hpl.nb: 0 is out of range (at least 1)"}},
		{"p without q", `nb = 192`, "nb = 192\np = 2", []string{"benchmark[0].hpl.p: set p and q together"}},
		{"p and q lengths", `nb = 192`, "nb = 192\np = [1, 2]\nq = 4", []string{"benchmark[0].hpl.q: p has 2 value(s) and q 1"}},
		{"pfact", `nb = 192`, "nb = 192\npfact = [\"right\", \"diagonal\"]", []string{"benchmark[0].hpl.pfact: item 2: factorization \"diagonal\" is not one of left (0), crout (1), right (2)"}},
		{"bcast code", `nb = 192`, "nb = 192\nbcast = 7", []string{"benchmark[0].hpl.bcast: BCAST 7 is not 0-5"}},
		{"nbmin", `nb = 192`, "nb = 192\nnbmin = 0", []string{"benchmark[0].hpl.nbmin: 0 is out of range (at least 1)"}},
		{"ndiv", `nb = 192`, "nb = 192\nndiv = [1]", []string{"benchmark[0].hpl.ndiv: item 1: 1 is out of range (at least 2)"}},
		{"swap_threshold list", `nb = 192`, "nb = 192\nswap_threshold = [1, 2]", []string{"benchmark[0].hpl.swap_threshold: takes one value"}},
		{"align", `nb = 192`, "nb = 192\nalign = 0", []string{"benchmark[0].hpl.align: 0 is out of range"}},
		{"threshold", `nb = 192`, "nb = 192\nthreshold = \"16\"", []string{"benchmark[0].hpl.threshold: has type string; want a number"}},
		{"fraction", `nb = 192`, "nb = 192\nfraction = 2", []string{"benchmark[0].hpl.fraction: 2 is not a fraction"}},
		{"mem_per_node unit", `nb = 192`, "nb = 192\nmem_per_node = \"64000\"", []string{"benchmark[0].hpl.mem_per_node: size \"64000\": give a unit (B; K, M, G, T, P, E and KiB … EiB are powers of 1024; KB … EB powers of 1000)"}},
		{"unknown hpl key", `nb = 192`, "nb = 192\nnbs = 3", []string{"c.toml:15:1: benchmark[0].hpl.nbs: unknown key (did you mean \"nb\"?)"}},
		{"too many Ns", `n = "auto"`, "n = [" + strings.Repeat("1000, ", 20) + "1000]", []string{"benchmark[0].hpl.n: 21 values; HPL takes at most 20"}},
		// What depends on the run names the variant.
		{"auto without memory", `mem = "64G"`, ``, []string{"benchmark[0].hpl.n: variant default: HPL.dat: \"auto\" needs the nodes' memory"}},
		{"slurm mem 0", `mem = "64G"`, `mem = "0"`, []string{"0 means all of a node's memory"}},
		{"auto with a node range", "nodes = 4\nntasks_per_node = 36", "nodes = \"2-4\"\nntasks_per_node = 36", []string{"benchmark[0].hpl.n: variant default: HPL.dat: \"auto\" needs a node count, not the range 2-4"}},
		{"grid too big", `nb = 192`, "nb = 192\np = [12, 16]\nq = [12, 16]", []string{"benchmark[0].hpl.p: variant default: HPL.dat: the grid 16x16 needs 256 ranks; the run has 144"}},
		{"memory too small", `mem = "64G"`, `mem = "64K"`, []string{"holds no 192×192 block"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := strings.Replace(hplCampaign, tt.from, tt.to, 1)
			if text == hplCampaign && tt.from != tt.to {
				t.Fatalf("%q is not in the campaign", tt.from)
			}
			_, err := Parse("c.toml", []byte(text))
			if err == nil {
				t.Fatalf("no error for\n%s", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// A campaign written before kinds keeps its meaning: its own HPL.dat,
// its own command and parser.
func TestNoKindKeepsOwnFiles(t *testing.T) {
	c, err := Load("../examples/000-infiniband-vs-ethernet.toml")
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := c.Runs()
	for _, r := range runs {
		if r.Benchmark.Name != "hpl" {
			continue
		}
		files, err := c.InputFiles(r)
		if err != nil || len(files) != 1 || !strings.HasPrefix(string(files["HPL.dat"]), "HPLinpack benchmark input file\n") {
			t.Errorf("%s: files %q, %v", r.Name, keysOf(files), err)
		}
		if _, err := c.HPLInput(r); err == nil {
			t.Error("HPLInput of a benchmark without a kind")
		}
	}
}
