package campaign

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/hpl"
	"github.com/sbench/sbench/sizes"
)

// Benchmark kinds: tools whose input sbench writes itself.
const (
	// KindHPL runs xhpl with an HPL.dat made from [benchmark.hpl].
	KindHPL = "hpl"
	// KindHPCC runs HPC Challenge's hpcc with an hpccinf.txt made from
	// [benchmark.hpl], and parses its hpccoutf.txt.
	KindHPCC = "hpcc"
)

// kinds are the defaults each kind gives a benchmark: its command, parser,
// output file and the input file it writes.
var kinds = map[string]struct {
	command        []string
	parser, output string
	input          string
}{
	KindHPL:  {command: []string{"xhpl"}, parser: "hpl", input: "HPL.dat"},
	KindHPCC: {command: []string{"hpcc"}, parser: "hpcc", output: "hpccoutf.txt", input: "hpccinf.txt"},
}

// HPLSpec is a [benchmark.hpl] table: the values of HPL.dat, or of the HPL
// part of hpccinf.txt. Every list key takes one value or a list (HPL runs
// every combination); unset keys keep HPL's defaults (hpl.DefaultInput).
// Values are kept as TOML gave them and checked by validate, so that a
// wrong one is reported at its line.
type HPLSpec struct {
	// N, NB, P and Q take "auto": N is sized from the nodes' memory (see
	// hpl.Size), NB is hpl.DefaultNB, P×Q is the near-square grid of the
	// run's ranks. P and Q are paired: lists of one length, both "auto"
	// or neither.
	N  any `toml:"n"`
	NB any `toml:"nb"`
	P  any `toml:"p"`
	Q  any `toml:"q"`
	// MemPerNode is the memory auto N is sized from ("64GiB"); default the
	// [slurm] mem (or mem_per_cpu × tasks per node × cpus per task).
	MemPerNode string `toml:"mem_per_node"`
	// Fraction of that memory the matrix takes; default hpl.DefaultFraction.
	Fraction any `toml:"fraction"`

	PMAP           any   `toml:"pmap"`
	Threshold      any   `toml:"threshold"`
	PFACT          any   `toml:"pfact"`
	NBMIN          any   `toml:"nbmin"`
	NDIV           any   `toml:"ndiv"`
	RFACT          any   `toml:"rfact"`
	BCAST          any   `toml:"bcast"`
	Depth          any   `toml:"depth"`
	Swap           any   `toml:"swap"`
	SwapThreshold  any   `toml:"swap_threshold"`
	L1NoTransposed *bool `toml:"l1_no_transposed"`
	UNoTransposed  *bool `toml:"u_no_transposed"`
	Equilibration  *bool `toml:"equilibration"`
	Align          any   `toml:"align"`
	// PTRANSN and PTRANSNB are hpcc's additional PTRANS sizes.
	PTRANSN  any `toml:"ptrans_n"`
	PTRANSNB any `toml:"ptrans_nb"`
}

// hplPlan is a spec read once: the fixed values in input, what is "auto".
type hplPlan struct {
	input            hpl.Input
	autoN, autoNB    bool
	autoGrid         bool
	ps, qs           []int
	fraction         float64
	memPerNode       uint64
	memPerNodeString string
}

// applyKind gives a benchmark of a known kind its defaults: what the user
// left empty. An unknown kind is validate's to report.
func (b *Benchmark) applyKind() {
	k, ok := kinds[b.Kind]
	if !ok {
		return
	}
	if len(b.Command) == 0 && len(b.PerRank) == 0 {
		b.Command = append([]string(nil), k.command...)
	}
	b.Parser, b.Output = cmp.Or(b.Parser, k.parser), cmp.Or(b.Output, k.output)
}

// readHPL reads a [benchmark.hpl] table (nil: every default); problems are
// keyErrors naming the key under "hpl.".
func readHPL(s *HPLSpec) (*hplPlan, []*keyError) {
	if s == nil {
		s = &HPLSpec{}
	}
	r := &hplReader{s: s, p: &hplPlan{input: hpl.DefaultInput(), fraction: hpl.DefaultFraction}}
	r.sizes()
	r.grid()
	r.memory()
	r.algorithm()
	r.lengths()
	return r.p, r.errs
}

// hplReader reads one [benchmark.hpl] table into a plan, gathering every
// problem.
type hplReader struct {
	s    *HPLSpec
	p    *hplPlan
	errs []*keyError
}

func (r *hplReader) fail(key string, err error) {
	r.errs = append(r.errs, &keyError{key: "hpl." + key, err: err})
}

// sizes reads n and nb: lists, or "auto".
func (r *hplReader) sizes() {
	s, p := r.s, r.p
	var err error
	if s.N == nil {
		r.fail("n", errors.New(`is required: a size, a list of sizes, or "auto" to size it from the nodes' memory`))
	} else if p.input.Ns, p.autoN, err = intList(s.N, 0, true); err != nil {
		r.fail("n", err)
	}
	if s.NB == nil {
		p.autoNB = true
	} else if p.input.NBs, p.autoNB, err = intList(s.NB, 1, true); err != nil {
		r.fail("nb", err)
	}
	if p.autoNB {
		p.input.NBs = []int{hpl.DefaultNB}
	}
}

// grid reads p and q: set together (grid i is p[i]×q[i]), or both auto.
func (r *hplReader) grid() {
	s, p := r.s, r.p
	var autoP, autoQ bool
	var err error
	if s.P != nil {
		if p.ps, autoP, err = intList(s.P, 1, true); err != nil {
			r.fail("p", err)
		}
	}
	if s.Q != nil {
		if p.qs, autoQ, err = intList(s.Q, 1, true); err != nil {
			r.fail("q", err)
		}
	}
	switch {
	case (s.P == nil || autoP) && (s.Q == nil || autoQ):
		p.autoGrid = true
	case s.P == nil || autoP || s.Q == nil || autoQ:
		r.fail("p", errors.New(`set p and q together, or both "auto" (or neither) for the grid nearest a square`))
	case len(p.ps) != len(p.qs):
		r.fail("q", fmt.Errorf("p has %d value(s) and q %d: grid i is p[i]×q[i]", len(p.ps), len(p.qs)))
	default:
		for i := range p.ps {
			p.input.Grids = append(p.input.Grids, hpl.Grid{P: p.ps[i], Q: p.qs[i]})
		}
	}
}

// memory reads what an automatic n is sized from.
func (r *hplReader) memory() {
	s, p := r.s, r.p
	var err error
	if s.MemPerNode != "" {
		p.memPerNodeString = s.MemPerNode
		if p.memPerNode, err = sizes.ParseIn(s.MemPerNode, 0); err != nil {
			r.fail("mem_per_node", err)
		} else if p.memPerNode == 0 {
			r.fail("mem_per_node", errors.New("must be more than 0"))
		}
	}
	if s.Fraction != nil {
		if p.fraction, err = number(s.Fraction); err != nil || !(p.fraction > 0 && p.fraction <= 1) {
			r.fail("fraction", fmt.Errorf("%v is not a fraction of memory (more than 0, at most 1, e.g. 0.8)", s.Fraction))
		}
	}
}

// algorithm reads the rest of HPL.dat's lines: mapping, threshold,
// factorisations, broadcasts, recursion, swapping and storage.
func (r *hplReader) algorithm() {
	s, in := r.s, &r.p.input
	var err error
	readChoice(r, "pmap", s.PMAP, hpl.ParsePMap, &in.PMAP)
	if s.Threshold != nil {
		if in.Threshold, err = number(s.Threshold); err != nil {
			r.fail("threshold", err)
		}
	}
	readChoices(r, "pfact", s.PFACT, hpl.ParseFact, &in.PFACTs)
	readChoices(r, "rfact", s.RFACT, hpl.ParseFact, &in.RFACTs)
	readChoices(r, "bcast", s.BCAST, hpl.ParseBcast, &in.BCASTs)
	r.ints("nbmin", s.NBMIN, 1, &in.NBMINs)
	r.ints("ndiv", s.NDIV, 2, &in.NDIVs)
	r.ints("depth", s.Depth, 0, &in.DEPTHs)
	r.ints("ptrans_n", s.PTRANSN, 1, &in.PTRANSNs)
	r.ints("ptrans_nb", s.PTRANSNB, 1, &in.PTRANSNBs)
	readChoice(r, "swap", s.Swap, hpl.ParseSwap, &in.SWAP)
	r.one("swap_threshold", s.SwapThreshold, 0, &in.SwapThreshold)
	r.one("align", s.Align, 1, &in.Align)
	if s.L1NoTransposed != nil {
		in.L1NoTransposed = *s.L1NoTransposed
	}
	if s.UNoTransposed != nil {
		in.UNoTransposed = *s.UNoTransposed
	}
	if s.Equilibration != nil {
		in.Equilibration = *s.Equilibration
	}
}

// readChoice reads one name or code of an HPL setting, if given.
func readChoice[T any](r *hplReader, key string, v any, parse func(string) (T, error), dst *T) {
	if v == nil {
		return
	}
	if c, err := choice(v, parse); err != nil {
		r.fail(key, err)
	} else {
		*dst = c
	}
}

// readChoices reads a name or code, or a list of them, if given.
func readChoices[T any](r *hplReader, key string, v any, parse func(string) (T, error), dst *[]T) {
	if v == nil {
		return
	}
	if cs, err := choices(v, parse); err != nil {
		r.fail(key, err)
	} else {
		*dst = cs
	}
}

// ints reads a list of integers of at least min.
func (r *hplReader) ints(key string, v any, min int, dst *[]int) {
	if v == nil {
		return
	}
	vs, _, err := intList(v, min, false)
	if err != nil {
		r.fail(key, err)
		return
	}
	*dst = vs
}

// one reads a single integer of at least min.
func (r *hplReader) one(key string, v any, min int, dst *int) {
	if v == nil {
		return
	}
	vs, _, err := intList(v, min, false)
	if err == nil && len(vs) != 1 {
		err = errors.New("takes one value, not a list")
	}
	if err != nil {
		r.fail(key, err)
		return
	}
	*dst = vs[0]
}

// lengths holds every list to the most values HPL.dat takes.
func (r *hplReader) lengths() {
	in := &r.p.input
	for k, n := range map[string]int{"n": len(in.Ns), "nb": len(in.NBs), "p": len(in.Grids), "pfact": len(in.PFACTs),
		"rfact": len(in.RFACTs), "bcast": len(in.BCASTs), "nbmin": len(in.NBMINs), "ndiv": len(in.NDIVs),
		"depth": len(in.DEPTHs), "ptrans_n": len(in.PTRANSNs), "ptrans_nb": len(in.PTRANSNBs)} {
		if n > hpl.MaxParam {
			r.fail(k, fmt.Errorf("%d values; HPL takes at most %d", n, hpl.MaxParam))
		}
	}
}

// resolve makes the run's input: "auto" sized for the run's nodes, ranks
// and memory. The problems it reports depend on the run.
func (p *hplPlan) resolve(cfg Config) (hpl.Input, []*keyError) {
	in := p.input
	var errs []*keyError
	fail := func(key string, err error) {
		k := "hpl"
		if key != "" {
			k += "." + key
		}
		errs = append(errs, &keyError{key: k, err: err})
	}
	ranks := cfg.Ranks()
	if (p.autoN || p.autoGrid) && cfg.Slurm.Nodes.IsRange() {
		fail("n", fmt.Errorf(`"auto" needs a node count, not the range %s`, cfg.Slurm.Nodes))
		return in, errs
	}
	if p.autoGrid {
		in.Grids = []hpl.Grid{hpl.GridFor(ranks)}
	} else if need := in.MaxRanks(); need > ranks {
		fail("p", fmt.Errorf("the grid %s needs %d ranks; the run has %d", slices.MaxFunc(in.Grids, func(a, b hpl.Grid) int { return cmp.Compare(a.Ranks(), b.Ranks()) }), need, ranks))
	}
	if p.autoN {
		mem, from, err := p.nodeMemory(cfg)
		if err != nil {
			fail("n", err)
			return in, errs
		}
		total := mem * uint64(cfg.NodeCount())
		// One N for every NB: a multiple of the first, so that HPL runs one
		// size per block size rather than a size per block size each.
		n := hpl.ProblemSize(total, p.fraction, in.NBs[0])
		if n == 0 {
			fail("n", fmt.Errorf(`"auto": %d node(s) × %s (%s) × %v holds no %d×%d block`, cfg.NodeCount(), sizes.Approx(mem), from, p.fraction, in.NBs[0], in.NBs[0]))
			return in, errs
		}
		in.Ns = []int{n}
	}
	if err := in.Validate(); err != nil {
		fail("", err)
	}
	return in, errs
}

// nodeMemory is each node's memory for auto N, and where it came from.
func (p *hplPlan) nodeMemory(cfg Config) (uint64, string, error) {
	if p.memPerNode > 0 {
		return p.memPerNode, "mem_per_node " + p.memPerNodeString, nil
	}
	s := cfg.Slurm
	if s.Mem != "" {
		m, err := slurmMem(s.Mem)
		if err != nil {
			return 0, "", fmt.Errorf(`"auto" sizes from [slurm] mem: %w; set mem_per_node`, err)
		}
		return m, "[slurm] mem " + s.Mem, nil
	}
	if s.MemPerCPU != "" {
		m, err := slurmMem(s.MemPerCPU)
		if err != nil {
			return 0, "", fmt.Errorf(`"auto" sizes from [slurm] mem_per_cpu: %w; set mem_per_node`, err)
		}
		cpus := cfg.TasksPerNode() * max(s.CPUsPerTask, 1)
		return m * uint64(cpus), fmt.Sprintf("[slurm] mem_per_cpu %s × %d CPUs", s.MemPerCPU, cpus), nil
	}
	return 0, "", errors.New(`"auto" needs the nodes' memory: set mem_per_node in [benchmark.hpl] (e.g. "64GiB") or mem in [slurm]`)
}

// slurmMem reads a Slurm memory value (--mem, --mem-per-cpu): a bare
// number is MiB, as Slurm reads it. 0 (all of a node's memory) says
// nothing about the size.
func slurmMem(s string) (uint64, error) {
	n, err := sizes.ParseIn(s, sizes.MiB)
	if err == nil && n == 0 {
		return 0, fmt.Errorf("memory %q: 0 means all of a node's memory to Slurm, which does not say how much that is", s)
	}
	return n, err
}

// intList reads an integer or a list of integers of at least min, or
// "auto" where allowed.
func intList(v any, min int, auto bool) ([]int, bool, error) {
	want := "an integer or a list of integers"
	if auto {
		want += `, or "auto"`
	}
	switch x := v.(type) {
	case string:
		if auto && x == "auto" {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("%q is not %s", x, want)
	case int64:
		if x < int64(min) || x > 1<<31-1 {
			return nil, false, fmt.Errorf("%d is out of range (at least %d)", x, min)
		}
		return []int{int(x)}, false, nil
	case []any:
		if len(x) == 0 {
			return nil, false, errors.New("is an empty list")
		}
		out := make([]int, len(x))
		for i, e := range x {
			n, ok := e.(int64)
			if !ok {
				return nil, false, fmt.Errorf("item %d (%v) is not an integer", i+1, e)
			}
			if n < int64(min) || n > 1<<31-1 {
				return nil, false, fmt.Errorf("item %d: %d is out of range (at least %d)", i+1, n, min)
			}
			out[i] = int(n)
		}
		return out, false, nil
	}
	return nil, false, fmt.Errorf("has type %s; want %s", tomlType(v), want)
}

// choices reads a name or code, or a list of them.
func choices[T any](v any, parse func(string) (T, error)) ([]T, error) {
	list, ok := v.([]any)
	if !ok {
		c, err := choice(v, parse)
		return []T{c}, err
	}
	if len(list) == 0 {
		return nil, errors.New("is an empty list")
	}
	out := make([]T, len(list))
	for i, e := range list {
		c, err := choice(e, parse)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i+1, err)
		}
		out[i] = c
	}
	return out, nil
}

func choice[T any](v any, parse func(string) (T, error)) (T, error) {
	switch x := v.(type) {
	case string:
		return parse(x)
	case int64:
		return parse(strconv.FormatInt(x, 10))
	}
	var zero T
	return zero, fmt.Errorf("has type %s; want a name or its number", tomlType(v))
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case int64:
		return float64(x), nil
	case float64:
		return x, nil
	}
	return 0, fmt.Errorf("has type %s; want a number", tomlType(v))
}

// InputFiles are the files a run's working directory gets before its
// command starts: the benchmark's own files, and for kind hpl or hpcc the
// generated HPL.dat or hpccinf.txt.
func (c *Campaign) InputFiles(r Run) (map[string][]byte, error) {
	b := r.Benchmark
	files := make(map[string][]byte, len(b.Files)+1)
	for name, f := range b.Files {
		files[name] = []byte(f.Content)
	}
	k, ok := kinds[b.Kind]
	if !ok {
		return files, nil
	}
	in, err := hplInput(r)
	if err != nil {
		return nil, err
	}
	var data []byte
	if b.Kind == KindHPCC {
		data, err = in.HPCCInf()
	} else {
		data, err = in.HPLDat()
	}
	if err != nil {
		return nil, fmt.Errorf("benchmark %s, variant %s: %w", b.Name, r.Name, err)
	}
	files[k.input] = data
	return files, nil
}

// HPLInput is the HPL input of a run of kind hpl or hpcc, "auto" resolved
// for its nodes, ranks and memory.
func (c *Campaign) HPLInput(r Run) (hpl.Input, error) { return hplInput(r) }

func hplInput(r Run) (hpl.Input, error) {
	b := r.Benchmark
	if _, ok := kinds[b.Kind]; !ok {
		return hpl.Input{}, fmt.Errorf("benchmark %s is not of kind hpl or hpcc", b.Name)
	}
	p, errs := readHPL(b.HPL)
	if len(errs) == 0 {
		var in hpl.Input
		if in, errs = p.resolve(r.Config); len(errs) == 0 {
			return in, nil
		}
	}
	return hpl.Input{}, fmt.Errorf("benchmark %s, variant %s: %w", b.Name, r.Name, errs[0])
}

// inputSummary names an input's sizes for a script's comment:
// "N=2560 NB=128 P×Q=1×2", lists comma-separated, with the test count
// when HPL runs more than one.
func inputSummary(in hpl.Input) string {
	grids := mapped(in.Grids, func(g hpl.Grid) string { return strconv.Itoa(g.P) + "×" + strconv.Itoa(g.Q) })
	s := "N=" + joinInts(in.Ns) + " NB=" + joinInts(in.NBs) + " P×Q=" + strings.Join(grids, ",")
	if n := in.Tests(); n > 1 {
		s += fmt.Sprintf(" (%d tests)", n)
	}
	return s
}

func joinInts(vs []int) string { return strings.Join(mapped(vs, strconv.Itoa), ",") }
