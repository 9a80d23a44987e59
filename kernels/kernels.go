// Package kernels is the one table of sbench-runner's native kernels: each
// kernel's name, the ranks it needs, what it measures, its parameters (with
// their kinds, defaults and documentation) and its default message sizes;
// and the parsing of a kernel's parameters, so that a campaign is checked
// (package campaign) by the very rules the runner applies.
//
// It also holds what the matrix kernel shares with the screening of its
// results: ClusterKit's tolerance rule for suspect links (Tolerance) and
// the schedules of node pairs (MatrixRounds, SequentialRounds,
// PackRounds).
//
// The runner keeps the run functions, keyed by these names; the campaign
// reference (docs/campaign.md) and `sbench-runner run --help` are written
// from this table, and tests hold all three to it. Each kernel's row also
// declares the metrics it writes (rows of results' metric table) and its
// family, which compare and reports read.
//
// The package is a leaf: it imports nothing of sbench's own but packages
// sizes and results, so that campaign can read the table without importing the runner
// (and, through it, the parsers and the HPL solver).
package kernels

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
)

// Kernel is one native kernel.
type Kernel struct {
	Name string
	// MinRanks is the smallest step the kernel runs on.
	MinRanks int
	// Measures says what the kernel measures, in one sentence.
	Measures string
	// Params are the parameters the kernel takes, in the order the docs
	// list them.
	Params []Param
	// Sizes is the kernel's sweep of message sizes when the sizes
	// parameter is unset. Kernels without messages run once, as size 0,
	// so that every native kernel has a sweep.
	Sizes string
	// Family is what the kernel's latency and bandwidth against message
	// size are comparable with: results.FamilyPointToPoint, or the
	// collective operation it times; "" for none.
	Family string
	// Metrics are the sample metrics it writes (rows of the metric
	// table, results.MetricOf).
	Metrics []string
	// check checks what the parameters' own rules cannot.
	check func(*Params) error
}

// Param is one parameter of a kernel.
type Param struct {
	Name string
	Kind Kind
	// Doc says what the parameter does, in one line.
	Doc string
	// Default is the value an unset parameter takes, as written; "" when
	// it depends on something else (Doc says on what).
	Default string
	// Min and Max bound a Count.
	Min, Max int
	// Choices are a Choice's values.
	Choices []string
}

// Kind is how a parameter's value is written.
type Kind int

const (
	// Count is an integer from Min to Max.
	Count Kind = iota
	// Size is one message size (sizes.Parse), at most MaxMessageSize.
	Size
	// SizeList is a list of message sizes (sizes.ParseList).
	SizeList
	// Choice is one of Choices.
	Choice
	// Seed is an unsigned 64-bit integer.
	Seed
	// Factor is a number above 1 (a tolerance's multiple of a minimum).
	Factor
	// Fraction is a number between 0 and 1, both excluded (a tolerance's
	// share of a maximum).
	Fraction
)

var kindNames = [...]string{Count: "integer", Size: "size", SizeList: "sizes", Choice: "choice",
	Seed: "unsigned integer", Factor: "factor", Fraction: "fraction"}

// String names the kind as the docs do.
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind " + strconv.Itoa(int(k))
}

// Limits on parameters, so that a typo is an error rather than an
// allocation of terabytes or a run of years.
const (
	MaxMessageSize = 1 << 30 // bytes
	// MaxIterations: every timed iteration's duration is kept for the
	// percentiles; 10^7 of them take 80 MB, far beyond OSU's usual counts.
	MaxIterations = 10_000_000
	MaxWindow     = 4096
)

// Values of the poll and placement parameters.
const (
	// PollSpin busy-polls, then parks; PollBlock sleeps in the system call.
	PollSpin  = "spin"
	PollBlock = "block"
	// SendCopy writes a streamed message with write(2), as NPtcp, iperf3
	// and MPI libraries do (the default); SendSplice hands its pages to
	// TCP (vmsplice, splice), whose gain depends on the host.
	SendSplice = "splice"
	SendCopy   = "copy"

	PlacementHalf  = "half"  // rank i with rank i+n/2 (the default)
	PlacementIntra = "intra" // pairs within each node
	PlacementInter = "inter" // node j with node j+m/2, local rank by local rank

	// ScheduleRounds measures the matrix kernel's node pairs n/2 at a time,
	// in the rounds of a round-robin tournament (the default);
	// ScheduleSequential one pair at a time.
	ScheduleRounds     = "rounds"
	ScheduleSequential = "sequential"
)

// Defaults that the runner's code needs as numbers too.
const (
	// DefaultWindow is the messages per window of the streaming kernels.
	DefaultWindow = 64
	// DefaultMatrixWindow is the matrix kernel's: short measurements,
	// since there are n(n-1) of them.
	DefaultMatrixWindow = 8
	// DefaultMatrixRetests is how many times the matrix kernel re-tests
	// the links its first pass finds outside tolerance, at most: 3
	// passes of halving length, as ClusterKit re-tests.
	DefaultMatrixRetests = 3
	// MaxMatrixRetests: from 100 round trips, the 7th halving is down to
	// one.
	MaxMatrixRetests = 10
	// DefaultStreamArraySize is the stream kernel's elements per array:
	// 3 arrays of 10M doubles are 240 MB, over 4× the largest L3 caches of
	// one socket today, as STREAM's rules ask.
	DefaultStreamArraySize = 10_000_000
	// MaxStreamArraySize bounds an array at 8 GiB.
	MaxStreamArraySize = 1 << 30
	// MaxStreamIterations: STREAM's values grow 15-fold per iteration and
	// would overflow a float64 after about 260.
	MaxStreamIterations = 200
	// DefaultHPLN is 800 MB per rank and 667 Gflop: seconds on a node of
	// today, long enough for the Gflops to settle.
	DefaultHPLN    = 10000
	DefaultHPLSeed = 1
	MaxHPLN        = 1 << 20
	MaxHPLNB       = 4096
	MaxHPLThreads  = 4096
)

// Default sweeps of message sizes.
const (
	// PointToPointSizes is OSU's point-to-point default, 1 B to 4 MiB.
	PointToPointSizes = "1-4MiB"
	// CollectiveSizes stops at 1 MiB, as OSU's collectives do.
	CollectiveSizes = "8-1MiB"
	// noSizes is the sweep of a kernel without messages: one run.
	noSizes = "0"
)

// The parameters several kernels share; param gives a kernel its own
// default.
var (
	pSizes = Param{Name: "sizes", Kind: SizeList,
		Doc: "message sizes: MIN-MAX doubles from MIN up to MAX as OSU does (0 is followed by 1), or a list such as 1,8,64K"}
	pIterations = Param{Name: "iterations", Kind: Count, Min: 1, Max: MaxIterations,
		Doc: "timed repetitions per size (round trips, windows, operations); the default follows OSU's scaling with the size"}
	pWarmup = Param{Name: "warmup", Kind: Count, Min: 0, Max: MaxIterations,
		Doc: "untimed repetitions before them"}
	pWindow = Param{Name: "window", Kind: Count, Min: 1, Max: MaxWindow, Default: strconv.Itoa(DefaultWindow),
		Doc: "messages written back to back before the receiver acknowledges"}
	pPoll = Param{Name: "poll", Kind: Choice, Choices: []string{PollSpin, PollBlock}, Default: PollSpin,
		Doc: "how ranks wait for data: spin busy-polls up to 50 µs a read, then sleeps (as MPI libraries poll); block sleeps in the system call (as NPtcp; when ranks outnumber cores)"}
	pSend = Param{Name: "send", Kind: Choice, Choices: []string{SendCopy, SendSplice}, Default: SendCopy,
		Doc: "how a sender hands messages of 64 KiB and more to TCP: copy writes them (two copies, as NPtcp, iperf3 and MPI libraries); splice passes their pages (one copy, the receiver's, as sendfile and iperf3 -Z), faster or slower than copy depending on the host"}
)

func (p Param) with(def string) Param {
	p.Default = def
	return p
}

// table is every native kernel, in the order the docs list them.
var table = []Kernel{
	{Name: "latency", MinRanks: 2, Sizes: PointToPointSizes, Family: results.FamilyPointToPoint, Metrics: []string{"latency"},
		Measures: "ping-pong between ranks 0 and 1: half the round trip (µs; avg, min, max, p50, p99)",
		Params:   []Param{pSizes.with(PointToPointSizes), pIterations, pWarmup, pPoll}},
	{Name: "bw", MinRanks: 2, Sizes: PointToPointSizes, Family: results.FamilyPointToPoint, Metrics: []string{"bandwidth"},
		Measures: "windowed streaming from rank 0 to rank 1 (MB/s)",
		Params:   []Param{pSizes.with(PointToPointSizes), pIterations, pWarmup, pWindow, pPoll, pSend}},
	{Name: "bibw", MinRanks: 2, Sizes: PointToPointSizes, Family: results.FamilyPointToPoint, Metrics: []string{"bidirectional_bandwidth"},
		Measures: "windowed streaming between ranks 0 and 1, both ways at once (MB/s)",
		Params:   []Param{pSizes.with(PointToPointSizes), pIterations, pWarmup, pWindow}},
	{Name: "pairs", MinRanks: 2, Sizes: PointToPointSizes, Family: results.FamilyPointToPoint, Metrics: []string{"bandwidth", "aggregate_bandwidth", "message_rate"},
		Measures: "several rank pairs stream at once: per pair and aggregate (MB/s; as systest, osu_mbw_mr)",
		Params: []Param{pSizes.with(PointToPointSizes), pIterations, pWarmup, pWindow, pSend,
			{Name: "placement", Kind: Choice, Choices: []string{PlacementHalf, PlacementIntra, PlacementInter}, Default: PlacementHalf,
				Doc: "which ranks pair: half (rank i with i+N/2), intra (pairs within each node) or inter (node j with node j+M/2)"}}},
	{Name: KernelMatrix, MinRanks: 2, Sizes: noSizes, Family: results.FamilyPointToPoint, Metrics: []string{MetricMatrixLatency, MetricMatrixBandwidth, MetricMatrixRetestLatency, MetricMatrixRetestBandwidth},
		Measures: "every ordered node pair, one rank per node, n/2 pairs at a time: latency and bandwidth, for a heatmap; then re-tests of the links outside tolerance",
		Params: []Param{
			{Name: "latency_size", Kind: Size, Default: "8", Doc: "the message size of every pair's latency"},
			{Name: "bandwidth_size", Kind: Size, Default: "1MiB", Doc: "the message size of every pair's bandwidth"},
			pIterations, pWarmup, pWindow.with(strconv.Itoa(DefaultMatrixWindow)), pSend,
			{Name: "schedule", Kind: Choice, Choices: []string{ScheduleRounds, ScheduleSequential}, Default: ScheduleRounds,
				Doc: "rounds measures n/2 disjoint node pairs at once, n-1 rounds (n for odd n), for a fabric of full bisection; sequential one pair at a time, n(n-1)/2 steps, where concurrent pairs share links"},
			{Name: "retests", Kind: Count, Min: 0, Max: MaxMatrixRetests, Default: strconv.Itoa(DefaultMatrixRetests),
				Doc: "re-test passes of the links outside tolerance, each of half the previous pass's round trips and windows, of the links still outside (0: none)"},
			{Name: "latency_tolerance", Kind: Factor, Default: strconv.FormatFloat(DefaultLatencyFactor, 'g', -1, 64),
				Doc: "a link is suspect above this many times the first pass's lowest latency (ClusterKit's rule)"},
			{Name: "bandwidth_tolerance", Kind: Fraction, Default: strconv.FormatFloat(DefaultBandwidthFraction, 'g', -1, 64),
				Doc: "a link is suspect below this share of the first pass's highest bandwidth (ClusterKit's rule)"}},
		check: func(p *Params) error {
			if p.BandwidthSize == 0 {
				return fmt.Errorf("param bandwidth_size: 0 bytes make no bandwidth")
			}
			return nil
		}},
	{Name: "barrier", MinRanks: 2, Sizes: noSizes, Family: "barrier", Metrics: []string{"latency"},
		Measures: "barrier over all ranks: latency (µs; avg, min, max across ranks)",
		Params:   []Param{pIterations, pWarmup}},
	{Name: "allreduce", MinRanks: 2, Sizes: CollectiveSizes, Family: "allreduce", Metrics: []string{"latency"},
		Measures: "allreduce (a sum of float64) over all ranks: latency vs size (µs; avg, min, max across ranks; data verified)",
		Params:   []Param{pSizes.with(CollectiveSizes), pIterations, pWarmup},
		check: func(p *Params) error {
			for _, s := range p.Sizes {
				if s == 0 || s%8 != 0 {
					return fmt.Errorf("param sizes: the allreduce kernel sums vectors of float64: size %d is not a positive multiple of 8", s)
				}
			}
			return nil
		}},
	{Name: "alltoall", MinRanks: 2, Sizes: CollectiveSizes, Family: "alltoall", Metrics: []string{"latency"},
		Measures: "alltoall over all ranks: latency vs size (µs; avg, min, max across ranks; data verified)",
		Params:   []Param{pSizes.with(CollectiveSizes), pIterations, pWarmup}},
	{Name: "bcast", MinRanks: 2, Sizes: CollectiveSizes, Family: "bcast", Metrics: []string{"latency"},
		Measures: "broadcast from rank 0 to all ranks: latency vs size (µs; avg, min, max across ranks; data verified)",
		Params:   []Param{pSizes.with(CollectiveSizes), pIterations, pWarmup}},
	{Name: KernelStream, MinRanks: 1, Sizes: noSizes, Metrics: []string{"stream_copy", "stream_scale", "stream_add", "stream_triad", "node_stream_copy", "node_stream_scale", "node_stream_add", MetricNodeStreamTriad},
		Measures: "STREAM copy, scale, add and triad on every rank at once, per rank and per node (MB/s)",
		Params: []Param{
			{Name: "array_size", Kind: Count, Min: 1, Max: MaxStreamArraySize, Default: strconv.Itoa(DefaultStreamArraySize),
				Doc: "elements (float64) of each of the 3 arrays; the default is over 4× the largest L3 cache"},
			{Name: "iterations", Kind: Count, Min: 1, Max: MaxIterations, Doc: "passes over the arrays (default 10, STREAM's; at most 200)"}},
		check: func(p *Params) error {
			if p.Iterations > MaxStreamIterations {
				return fmt.Errorf("param iterations: %d is above %d (STREAM's values overflow a float64 beyond)", p.Iterations, MaxStreamIterations)
			}
			return nil
		}},
	{Name: KernelHPL, MinRanks: 1, Sizes: noSizes, Metrics: []string{"hpl_gflops", "hpl_time", "hpl_residual", MetricNodeHPLGflops},
		Measures: "HPL's LU solve in pure Go on every rank, each its own system (EP): Gflops (2/3·N³+3/2·N²) per rank and node; HPL's scaled residual < 16 or the run is invalid — for nodes without xhpl",
		Params: []Param{
			{Name: "n", Kind: Count, Min: 1, Max: MaxHPLN, Default: strconv.Itoa(DefaultHPLN), Doc: "order of each rank's system"},
			{Name: "nb", Kind: Count, Min: 1, Max: MaxHPLNB, Doc: "block size (default 128, the solver's)"},
			{Name: "seed", Kind: Seed, Default: strconv.Itoa(DefaultHPLSeed), Doc: "the system's seed: every rank solves the same one, so that their Gflops compare"},
			{Name: "threads", Kind: Count, Min: 0, Max: MaxHPLThreads, Doc: "goroutines of each rank's solve (default: the rank's share of its node's CPUs)"}}},
}

// All returns every native kernel, in the order the docs list them.
func All() []Kernel { return slices.Clone(table) }

// Names returns the kernels' names, sorted.
func Names() []string {
	names := make([]string, len(table))
	for i, k := range table {
		names[i] = k.Name
	}
	slices.Sort(names)
	return names
}

// Lookup returns the kernel called name.
func Lookup(name string) (Kernel, bool) {
	if i := slices.IndexFunc(table, func(k Kernel) bool { return k.Name == name }); i >= 0 {
		return table[i], true
	}
	return Kernel{}, false
}

// Param returns the kernel's parameter called name.
func (k Kernel) Param(name string) (Param, bool) {
	if i := slices.IndexFunc(k.Params, func(p Param) bool { return p.Name == name }); i >= 0 {
		return k.Params[i], true
	}
	return Param{}, false
}

// ParamNames returns the names of the kernel's parameters, sorted.
func (k Kernel) ParamNames() []string {
	names := make([]string, len(k.Params))
	for i, p := range k.Params {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}

// Params are a native kernel's parameters, parsed. Iterations and Warmup
// are -1 when they follow the per-size defaults (Counts).
type Params struct {
	Kernel     string
	Sizes      []int
	Iterations int
	Warmup     int
	Window     int
	// Poll is how the latency and bw kernels wait for data: PollSpin or
	// PollBlock.
	Poll string
	// Send is how the bw, pairs and matrix kernels' senders hand large
	// messages to TCP: SendSplice or SendCopy ("" for the other kernels).
	Send string
	// Placement pairs the ranks of the pairs kernel (PlacementHalf …).
	Placement string
	// LatencySize and BandwidthSize are the matrix kernel's message sizes.
	LatencySize   int
	BandwidthSize int
	// Schedule is how the matrix kernel orders its node pairs
	// (ScheduleRounds, ScheduleSequential).
	Schedule string
	// Retests is the matrix kernel's re-test passes at most, Tolerance
	// the rule that picks the links they re-test.
	Retests   int
	Tolerance Tolerance
	// ArraySize is the stream kernel's elements per array.
	ArraySize int
	// HPL are the hpl kernel's parameters.
	HPL HPL
}

// HPL are the hpl kernel's parameters.
type HPL struct {
	// N is the order of each rank's system.
	N int
	// NB is the block size; 0 is the solver's default.
	NB int
	// Seed chooses the system; every rank solves the same one, so that
	// their Gflops compare.
	Seed uint64
	// Threads is the goroutines of each rank's solve; 0 shares the CPUs
	// the rank may use among the ranks of its node that may use them too.
	Threads int
}

// Parse checks a kernel's parameters, as given on the runner's command line
// (--param) or in a campaign, and returns them with the defaults filled
// in. Unknown kernels and parameters are errors that name them.
func Parse(kernel string, params map[string]string) (Params, error) {
	k, ok := Lookup(kernel)
	if !ok {
		return Params{}, fmt.Errorf("unknown kernel %q (known: %s)", kernel, strings.Join(Names(), ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if _, ok := k.Param(name); !ok {
			return Params{}, fmt.Errorf("param %q: not a parameter of the %s kernel (known: %s)", name, kernel, strings.Join(k.ParamNames(), ", "))
		}
	}
	p := Params{Kernel: kernel, Iterations: -1, Warmup: -1, Window: DefaultWindow, Poll: PollSpin}
	sizeList, err := sizes.ParseList(k.Sizes)
	if err != nil {
		return Params{}, fmt.Errorf("kernel %s: default sizes: %w (a bug in package kernels)", kernel, err)
	}
	p.Sizes = ints(sizeList)
	for _, par := range k.Params {
		v, given := params[par.Name]
		if !given {
			v = par.Default
			if v == "" {
				continue
			}
		}
		if err := par.set(&p, v); err != nil {
			return Params{}, fmt.Errorf("param %s: %w", par.Name, err)
		}
	}
	if k.check != nil {
		if err := k.check(&p); err != nil {
			return Params{}, err
		}
	}
	return p, nil
}

// set parses v and stores it in the field of p the parameter names.
func (par Param) set(p *Params, v string) error {
	t := strings.TrimSpace(v)
	var n int
	var f float64
	var list []int
	switch par.Kind {
	case Count:
		var err error
		n, err = strconv.Atoi(t)
		if err != nil || n < par.Min || n > par.Max {
			return fmt.Errorf("%q is not an integer from %d to %d", v, par.Min, par.Max)
		}
	case Size:
		b, err := sizes.Parse(t)
		if err != nil {
			return err
		}
		if b > MaxMessageSize {
			return fmt.Errorf("%s is above the limit of %s", sizes.Label(float64(b)), sizes.Label(MaxMessageSize))
		}
		n = int(b)
	case SizeList:
		bs, err := sizes.ParseList(t)
		if err != nil {
			return err
		}
		for _, b := range bs {
			if b > MaxMessageSize {
				return fmt.Errorf("size %s is above the limit of %s", sizes.Label(float64(b)), sizes.Label(MaxMessageSize))
			}
		}
		list = ints(bs)
	case Choice:
		if !slices.Contains(par.Choices, t) {
			return fmt.Errorf("%q is not %s", v, orList(par.Choices))
		}
	case Seed:
		s, err := strconv.ParseUint(t, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an unsigned 64-bit integer", v)
		}
		p.HPL.Seed = s
		return nil
	case Factor, Fraction:
		var err error
		f, err = strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) ||
			par.Kind == Factor && !(f > 1) || par.Kind == Fraction && !(f > 0 && f < 1) {
			return fmt.Errorf("%q is not %s", v, par.value())
		}
	}
	switch par.Name {
	case "sizes":
		p.Sizes = list
	case "iterations":
		p.Iterations = n
	case "warmup":
		p.Warmup = n
	case "window":
		p.Window = n
	case "poll":
		p.Poll = t
	case "send":
		p.Send = t
	case "placement":
		p.Placement = t
	case "latency_size":
		p.LatencySize = n
	case "bandwidth_size":
		p.BandwidthSize = n
	case "schedule":
		p.Schedule = t
	case "retests":
		p.Retests = n
	case "latency_tolerance":
		p.Tolerance.LatencyFactor = f
	case "bandwidth_tolerance":
		p.Tolerance.BandwidthFraction = f
	case "array_size":
		p.ArraySize = n
	case "n":
		p.HPL.N = n
	case "nb":
		p.HPL.NB = n
	case "threads":
		p.HPL.Threads = n
	default:
		return fmt.Errorf("has no field in Params (a bug in package kernels)")
	}
	return nil
}

// Counts returns the timed and warm-up repetitions for one message size:
// iterations for latency, windows for bw. They follow OSU's scaling.
func (p Params) Counts(size int) (iterations, warmup int) {
	small := size <= 8<<10
	switch p.Kernel {
	case "bw":
		if small {
			iterations, warmup = 100, 10
		} else {
			iterations, warmup = 20, 2
			// Keep one size under 512 MiB moved: 4 MiB × 64 × 22 windows
			// would be 5.5 GiB, tens of seconds on loopback.
			window := max(p.Window, 1)
			if limit := (512 << 20) / (size * window); limit < iterations {
				iterations, warmup = max(limit, 2), 1
			}
		}
	default:
		if small {
			iterations, warmup = 1000, 100
		} else {
			iterations, warmup = 100, 10
		}
	}
	if p.Iterations >= 0 {
		iterations = p.Iterations
	}
	if p.Warmup >= 0 {
		warmup = p.Warmup
	}
	return iterations, warmup
}

func ints(bs []uint64) []int {
	out := make([]int, len(bs))
	for i, b := range bs {
		out[i] = int(b)
	}
	return out
}

// orList writes "a, b or c".
func orList(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// ParamDoc documents one parameter for the docs and the runner's help: a
// parameter several kernels share once, with the kernels that take it.
type ParamDoc struct {
	Name string
	// Value says what the value may be: "1 to 4096", "sizes", "spin or
	// block".
	Value   string
	Doc     string
	Kernels []string
}

// ParamDocs lists every parameter in the order the table first names it.
// A parameter whose meaning differs between kernels (stream's iterations)
// comes once per meaning.
func ParamDocs() []ParamDoc {
	var out []ParamDoc
	index := map[[2]string]int{}
	for _, k := range table {
		for _, p := range k.Params {
			key := [2]string{p.Name, p.Doc}
			i, ok := index[key]
			if !ok {
				i = len(out)
				index[key] = i
				out = append(out, ParamDoc{Name: p.Name, Value: p.value(), Doc: p.Doc})
			}
			out[i].Kernels = append(out[i].Kernels, k.Name)
		}
	}
	return out
}

// value says what a parameter's value may be.
func (p Param) value() string {
	switch p.Kind {
	case Count:
		return fmt.Sprintf("%d to %d", p.Min, p.Max)
	case Size:
		return "a size up to " + sizes.Label(MaxMessageSize)
	case SizeList:
		return "sizes up to " + sizes.Label(MaxMessageSize)
	case Choice:
		return orList(p.Choices)
	case Seed:
		return "0 to 2^64-1"
	case Factor:
		return "a number above 1"
	case Fraction:
		return "a number between 0 and 1"
	}
	return p.Kind.String()
}
