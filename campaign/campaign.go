package campaign

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// Campaign is a whole experiment as the user wrote it in TOML.
type Campaign struct {
	Campaign   Meta           `toml:"campaign"`
	Slurm      Slurm          `toml:"slurm"`
	Launcher   Launcher       `toml:"launcher"`
	Runner     Runner         `toml:"runner"`
	Benchmarks []Benchmark    `toml:"benchmark"`
	Variants   []VariantSpec  `toml:"variant"`
	Sweep      map[string]any `toml:"sweep"`
	// Expects are the campaign's acceptance references ([[expect]]).
	Expects []Expect `toml:"expect"`

	// File is the path the campaign was read from ("" for literal text).
	File string `toml:"-"`
	// sweepOrder is the sweep's keys in the order they are written, which is
	// the order variants are numbered in; benchSweepOrder the same for each
	// benchmark's own sweep.
	sweepOrder      []string
	benchSweepOrder [][]string
	index           *keyIndex
	// site is the profile the campaign was loaded with (LoadWith);
	// origins map the campaign keys it gave to its own (applySite).
	site    *Site
	origins map[string]string
}

// Meta is the [campaign] table.
type Meta struct {
	Name        string            `toml:"name"`
	Description string            `toml:"description"`
	System      string            `toml:"system"`
	Labels      map[string]string `toml:"labels"`
	// ResultsDir is where jobs write their bundles and Slurm its output
	// files; relative paths are relative to the directory of submission.
	ResultsDir string `toml:"results_dir"`
	// Repeats is how often each benchmark runs (default 1); a benchmark
	// may say otherwise.
	Repeats int `toml:"repeats"`
	// Mode packs runs into Slurm jobs: "steps" (default: every variant that
	// fits one allocation in one job, one srun step per run), "jobs" (one
	// job per variant) or "array" (one job array, a task per variant).
	Mode string `toml:"mode"`
	// TemplatesDir holds a site's sbatch.tmpl, relative to the campaign file.
	TemplatesDir string `toml:"templates_dir"`
}

// Packing modes.
const (
	ModeSteps = "steps"
	ModeJobs  = "jobs"
	ModeArray = "array"
)

// Slurm is the [slurm] table: the job's resources and environment. The
// same keys may be overridden per benchmark ([benchmark.slurm]), per
// variant ([variant.slurm]) and swept ([sweep]).
type Slurm struct {
	Partition     string            `toml:"partition"`
	Account       string            `toml:"account"`
	QOS           string            `toml:"qos"`
	Reservation   string            `toml:"reservation"`
	Time          string            `toml:"time"`
	Nodes         Nodes             `toml:"nodes"`
	Ntasks        int               `toml:"ntasks"`
	NtasksPerNode int               `toml:"ntasks_per_node"`
	CPUsPerTask   int               `toml:"cpus_per_task"`
	Mem           string            `toml:"mem"`
	MemPerCPU     string            `toml:"mem_per_cpu"`
	Exclusive     bool              `toml:"exclusive"`
	Constraint    string            `toml:"constraint"`
	Gres          string            `toml:"gres"`
	GPUs          string            `toml:"gpus"`
	Nodelist      string            `toml:"nodelist"`
	Exclude       string            `toml:"exclude"`
	JobName       string            `toml:"job_name"`
	Output        string            `toml:"output"`
	Error         string            `toml:"error"`
	Extra         []string          `toml:"extra"`
	Modules       []string          `toml:"modules"`
	Env           map[string]string `toml:"env"`
	Setup         []string          `toml:"setup"`
	Teardown      []string          `toml:"teardown"`
}

// Nodes is a node count, or a range "MIN-MAX" that Slurm may choose from.
type Nodes struct {
	Min, Max int
}

// UnmarshalTOML reads 2 or "2" or "2-4".
func (n *Nodes) UnmarshalTOML(v any) error {
	nn, err := parseNodes(v)
	if err != nil {
		return err
	}
	*n = nn
	return nil
}

func parseNodes(v any) (Nodes, error) {
	switch x := v.(type) {
	case int64:
		if x < 0 || x > 1<<20 {
			return Nodes{}, fmt.Errorf("node count %d is out of range", x)
		}
		return Nodes{int(x), int(x)}, nil
	case string:
		lo, hi, isRange := strings.Cut(x, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 1 || b < a || b > 1<<20 {
			return Nodes{}, fmt.Errorf("%q is not a node count or a range such as \"2-4\"", x)
		}
		return Nodes{a, b}, nil
	}
	return Nodes{}, fmt.Errorf("has type %s; want a node count or a range such as \"2-4\"", tomlType(v))
}

// String is the count as sbatch takes it.
func (n Nodes) String() string {
	if n.Min == n.Max {
		return strconv.Itoa(n.Min)
	}
	return fmt.Sprintf("%d-%d", n.Min, n.Max)
}

// IsRange reports a range rather than one count.
func (n Nodes) IsRange() bool { return n.Min != n.Max }

// Launcher is the [launcher] table: what starts the ranks of a step.
type Launcher struct {
	// Type is srun (default), mpirun or mpiexec.
	Type string `toml:"type"`
	// Command is the launcher program when it is not Type itself (a full
	// path, or a site wrapper).
	Command string `toml:"command"`
	// MPI is srun's --mpi plugin (pmix, pmi2, none).
	MPI string `toml:"mpi"`
	// Flavor says whose mpirun or mpiexec Type is (FlavorOpenMPI,
	// FlavorMPICH, FlavorIntelMPI), so that the launch line places each
	// step's ranks per node as planned: the options differ between MPIs,
	// and which one a launcher is cannot be asked on the login node where
	// the scripts are rendered. srun places ranks itself and ignores it.
	Flavor string `toml:"flavor"`
	// Args are extra launcher arguments. {ranks}, {nodes} and {ppn} stand
	// for the step's rank count, node count and ranks per node.
	Args []string `toml:"args"`
}

// Runner is the [runner] table: how sbench-runner is started.
type Runner struct {
	// Path of sbench-runner on the compute nodes; default "sbench-runner",
	// found through PATH (sbench submit puts its own directory first).
	Path             string `toml:"path"`
	BootstrapTimeout string `toml:"bootstrap_timeout"`
	Timeout          string `toml:"timeout"`
	// Interface is the network interface (ib0 …) whose address each
	// rank listens on and advertises, found on its own node; at most one
	// of Bind and Interface.
	Interface string `toml:"interface"`
	// Bind is the address ranks listen on and advertise (e.g. an IPoIB
	// address); empty lets the runner choose.
	Bind string `toml:"bind"`
}

// Benchmark is one [[benchmark]] table: a native kernel of sbench-runner,
// or an external tool the runner wraps.
type Benchmark struct {
	Name string `toml:"name"`
	// Kernel names a native kernel; empty for an external tool.
	Kernel string `toml:"kernel"`
	// Kind names a tool whose input sbench writes: "hpl" (xhpl with an
	// HPL.dat) or "hpcc" (hpcc with an hpccinf.txt), both from HPL. It
	// gives command, parser and output their defaults for the tool.
	Kind string `toml:"kind"`
	// HPL is the [benchmark.hpl] table of a kind hpl or hpcc benchmark.
	HPL *HPLSpec `toml:"hpl"`
	// Command is the tool's argv, run by every rank (an MPI program under
	// the launcher); PerRank gives a rank its own argv instead (a server
	// on rank 1, a client on rank 0). The runner expands {rank}, {size},
	// {host:N}, {node:N}, {hostname:N} and {workdir}; sbench expands
	// {param:NAME} from the benchmark's and the variant's params.
	Command []string            `toml:"command"`
	PerRank map[string][]string `toml:"per_rank"`
	// Parser reads the tool's output (a format of sbench ingest); default
	// auto; "none" for a command whose output holds no figures (hostname,
	// an application): its runs are judged by their exit status and have
	// their wall time (wall_time, s) for a figure.
	Parser string `toml:"parser"`
	// Output is a file the tool writes, parsed instead of its stdout.
	Output string `toml:"output"`
	// StartDelay lets servers start before rank 0's command (e.g. "1s").
	StartDelay string `toml:"start_delay"`
	// Files are input files written into the step's working directory.
	Files  map[string]FileSpec `toml:"files"`
	Params map[string]any      `toml:"params"`
	Labels map[string]string   `toml:"labels"`
	// Repeats overrides the campaign's repeats.
	Repeats int `toml:"repeats"`
	// Timeout bounds one run (a duration such as "10m").
	Timeout string `toml:"timeout"`
	// Checks are validity checks, METRIC[@X](>=|<=|>|<)VALUE: a run that
	// fails one is stored as invalid.
	Checks []string `toml:"checks"`
	// Metrics are user-defined metrics ([[benchmark.metric]]) read from
	// the tool's output by regular expressions, after its parser (with
	// none, the default when metrics are given and no parser is: an
	// application's own figures). Require and Reject are sanity patterns:
	// a run whose output lacks a required one or shows a rejected one is
	// invalid. See parsers.Compile.
	Metrics []results.MetricDef `toml:"metric"`
	Require []string            `toml:"require"`
	Reject  []string            `toml:"reject"`
	// After names a benchmark whose jobs must complete first
	// (--dependency=afterok).
	After string `toml:"after"`
	// Pairs places a point-to-point test: "" (ranks as Slurm places them),
	// "both-directions" (the first two nodes, A to B and B to A),
	// "all" (every ordered pair of the allocation's nodes), "reference"
	// (the first node to every other node and back: 2(n-1) launches) or
	// "intra-inter" (two ranks on one node, then on two nodes).
	Pairs string `toml:"pairs"`
	// Overrides for this benchmark.
	Slurm    map[string]any    `toml:"slurm"`
	Launcher map[string]any    `toml:"launcher"`
	Env      map[string]string `toml:"env"`
	Modules  []string          `toml:"modules"`
	// Sweep varies this benchmark only, within every variant.
	Sweep map[string]any `toml:"sweep"`
}

// FileSpec is an input file of a benchmark.
type FileSpec struct {
	Content string `toml:"content"`
}

// VariantSpec is one [[variant]] table: a named configuration, with its
// own modules, environment, launcher or resources (e.g. "intel-mpi" and
// "mpich", or "verbs" and "tcp"), or its own tool: the same measurement
// by sbench's native kernel and by OSU's osu_latency is two variants of
// one benchmark.
type VariantSpec struct {
	Name string `toml:"name"`
	// Kernel runs this native kernel instead of the benchmark's tool: the
	// benchmark's command, per_rank, parser, output, start_delay, files
	// and kind do not apply.
	Kernel string `toml:"kernel"`
	// Command runs this argv on every rank instead of the benchmark's
	// kernel, command or per_rank; the benchmark's parser, output,
	// start_delay, files and kind still apply.
	Command []string `toml:"command"`
	// Parser reads the output of the command (the variant's or the
	// benchmark's) instead of the benchmark's parser.
	Parser string `toml:"parser"`
	// Metrics, Require and Reject add to the benchmark's user-defined
	// metrics and sanity patterns for this variant's runs; a metric of the
	// benchmark's name is replaced.
	Metrics  []results.MetricDef `toml:"metric"`
	Require  []string            `toml:"require"`
	Reject   []string            `toml:"reject"`
	Labels   map[string]string   `toml:"labels"`
	Env      map[string]string   `toml:"env"`
	Modules  []string            `toml:"modules"`
	Setup    []string            `toml:"setup"`
	Params   map[string]any      `toml:"params"`
	Slurm    map[string]any      `toml:"slurm"`
	Launcher map[string]any      `toml:"launcher"`
}

// Problem is one thing wrong with a campaign, placed in its file.
type Problem struct {
	File      string
	Line, Col int
	Key       string
	Msg       string
}

func (p *Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Col > 0 {
			fmt.Fprintf(&b, ":%d", p.Col)
		}
	}
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(p.Key + ": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Problems is every problem found in a campaign, in file order.
type Problems []*Problem

func (ps Problems) Error() string {
	return strings.Join(mapped(ps, (*Problem).Error), "\n")
}

// Load reads and validates a campaign file.
func Load(path string) (*Campaign, error) { return LoadWith(path, nil) }

// Parse decodes and validates campaign text; name is used in error messages.
// Unknown keys, wrong types and every semantic problem are reported
// together, each at its own key's line and column.
func Parse(name string, data []byte) (*Campaign, error) {
	return ParseWith(name, data, nil)
}

// ParseWith is Parse under a site profile (nil for none): the profile's
// settings are the defaults of the campaign's own, and what is wrong with
// one of them is placed in the profile.
func ParseWith(name string, data []byte, site *Site) (*Campaign, error) {
	c := &Campaign{File: name}
	doc, md, err := decodeDoc(name, data)
	if err != nil {
		return nil, err
	}
	c.index = newKeyIndex(string(data))
	d := &decoder{md: md, c: c, bad: map[string]bool{}}
	d.table("", doc, reflect.ValueOf(c).Elem())
	if site != nil {
		c.applySite(site)
	}
	// Sweep keys in written order: the campaign's, then each benchmark's
	// (toml.Key has no array index, so count the [[benchmark]] tables).
	c.benchSweepOrder = make([][]string, len(c.Benchmarks))
	bench := -1
	for _, k := range md.Keys() {
		switch {
		case len(k) == 1 && k[0] == "benchmark":
			bench++
		case len(k) == 2 && k[0] == "sweep":
			c.sweepOrder = append(c.sweepOrder, k[1])
		case len(k) == 3 && k[0] == "benchmark" && k[1] == "sweep" && bench >= 0 && bench < len(c.Benchmarks):
			c.benchSweepOrder[bench] = append(c.benchSweepOrder[bench], k[2])
		}
	}
	for i := range c.Benchmarks {
		if c.Benchmarks[i].Kernel == "" {
			c.Benchmarks[i].applyKind()
		}
	}
	ps := d.ps
	// What validation says of a value that could not be decoded is about
	// the zero value left in its place: drop it. And the runs are made of
	// every value: check them only when all decoded.
	for _, p := range c.validate(len(d.bad) == 0) {
		if !d.covers(p.Key) {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		return nil, ps.sorted()
	}
	return c, nil
}

// decodeDoc parses a TOML document into its top-level keys, a syntax
// error placed as a problem of the file name.
func decodeDoc(name string, data []byte) (map[string]toml.Primitive, *toml.MetaData, error) {
	var doc map[string]toml.Primitive
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, nil, Problems{syntaxProblem(name, string(data), pe)}
		}
		return nil, nil, Problems{{File: name, Msg: strings.TrimPrefix(err.Error(), "toml: ")}}
	}
	return doc, &md, nil
}

// sorted orders problems as the file reads: by line, then column.
func (ps Problems) sorted() Problems {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Col < ps[j].Col
	})
	return ps
}

// syntaxProblem places a TOML syntax error. Its Position.Line is the
// lexer's line when it gave up, one too many when that was after reading
// the newline that showed the error ("[campaign" alone is an error at the
// end of line 1, reported on line 2); Position.Start, the offset of what
// is wrong, is where the column is counted from, and so the line is too.
// LastKey is the key being defined, or in a table header the table
// before: it is named only for an error in a key's value.
func syntaxProblem(name, src string, pe toml.ParseError) *Problem {
	// toml.Decode skips a byte order mark before it counts.
	src = strings.TrimPrefix(src, "\ufeff")
	start := min(max(pe.Position.Start, 0), len(src))
	lineStart := strings.LastIndexByte(src[:start], '\n') + 1
	p := &Problem{
		File: name,
		Line: 1 + strings.Count(src[:start], "\n"),
		Col:  start - lineStart + 1,
		Key:  pe.LastKey,
		Msg:  pe.Message,
	}
	if strings.HasPrefix(strings.TrimSpace(src[lineStart:]), "[") {
		p.Key = ""
	}
	return p
}

// problem places a semantic problem at the key it is about.
func (c *Campaign) problem(key, format string, args ...any) *Problem {
	return c.problemAt(key, key, format, args...)
}

// problemAt is a problem about key placed at the path at: a string in a
// list (key[2]), where the key itself is the list.
func (c *Campaign) problemAt(key, at, format string, args ...any) *Problem {
	line, col := 0, 0
	file, ix, at := c.placeAt(at)
	if ix != nil {
		line, col = ix.lookup(at)
	}
	return &Problem{File: file, Line: line, Col: col, Key: key, Msg: fmt.Sprintf(format, args...)}
}

// TemplatePath is the site template the campaign names, or "".
func (c *Campaign) TemplatePath() string {
	if c.Campaign.TemplatesDir == "" {
		return ""
	}
	dir := c.Campaign.TemplatesDir
	if !filepath.IsAbs(dir) && c.File != "" {
		dir = filepath.Join(filepath.Dir(c.File), dir)
	}
	return filepath.Join(dir, "sbatch.tmpl")
}

// Mode is the packing mode, with its default.
func (c *Campaign) Mode() string {
	return cmp.Or(c.Campaign.Mode, ModeSteps)
}

// Extract is what the benchmark reads from its output besides its
// parser's figures; nil when nothing.
func (b *Benchmark) Extract() *results.Extract {
	return extractOf(b.Metrics, b.Require, b.Reject)
}

func extractOf(metrics []results.MetricDef, require, reject []string) *results.Extract {
	e := &results.Extract{Metrics: metrics, Require: require, Reject: reject}
	if e.Empty() {
		return nil
	}
	return e
}

// runExtract is what run r reads from its output besides its parser's
// figures: its benchmark's, with its variant's added (a variant's metric
// replaces the benchmark's of its name); nil when nothing.
func runExtract(r Run) *results.Extract {
	e := r.Benchmark.Extract()
	v := r.Variant.Spec
	if v == nil || extractOf(v.Metrics, v.Require, v.Reject) == nil {
		return e
	}
	out := &results.Extract{}
	if e != nil {
		out.Require, out.Reject = slices.Clone(e.Require), slices.Clone(e.Reject)
		for _, m := range e.Metrics {
			if !slices.ContainsFunc(v.Metrics, func(x results.MetricDef) bool { return x.Name == m.Name }) {
				out.Metrics = append(out.Metrics, m)
			}
		}
	}
	out.Metrics = append(out.Metrics, v.Metrics...)
	out.Require = append(out.Require, v.Require...)
	out.Reject = append(out.Reject, v.Reject...)
	return out
}

// runParser is the parser of run r's output: the benchmark's (as the run
// executes it); else none when the run defines metrics (an application's
// output is no known tool's), else auto.
func runParser(r Run, e *results.Extract) string {
	switch {
	case r.Benchmark.Parser != "":
		return r.Benchmark.Parser
	case e != nil && len(e.Metrics) > 0:
		return parsers.None
	}
	return "auto"
}
