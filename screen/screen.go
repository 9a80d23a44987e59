package screen

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// Options are the limits of a screening.
type Options struct {
	// Tolerance is ClusterKit's rule for links, applied to the matrix and
	// to the links to the reference node.
	Tolerance kernels.Tolerance
	// NodeFraction: a node's STREAM triad or HPL Gflops below this share
	// of the median over the nodes is an outlier.
	NodeFraction float64
}

// DefaultNodeFraction is the default of Options.NodeFraction: 15% below
// the median. Identical nodes run STREAM and HPL within a few percent of
// each other; a missing DIMM, a throttled CPU or a wrong BIOS setting
// costs far more.
const DefaultNodeFraction = 0.85

// DefaultOptions are ClusterKit's tolerances and DefaultNodeFraction.
func DefaultOptions() Options {
	return Options{Tolerance: kernels.DefaultTolerance(), NodeFraction: DefaultNodeFraction}
}

// Check says what is wrong with o, if anything.
func (o Options) Check() error {
	if err := o.Tolerance.Check(); err != nil {
		return err
	}
	if !(o.NodeFraction > 0 && o.NodeFraction < 1) {
		return fmt.Errorf("node tolerance %v: want a fraction between 0 and 1 (the default is %v)", o.NodeFraction, DefaultNodeFraction)
	}
	return nil
}

// Input is what a screening is judged from: archived runs and their
// samples (the runs' hosts give the provenance).
type Input struct {
	Runs    []store.Run
	Samples []store.Sample
}

// Status is what the screening says of a link or a value.
type Status string

const (
	// OK: within tolerance.
	OK Status = "ok"
	// Transient: outside tolerance in the first pass, within it on a
	// re-test — noted, never flagged.
	Transient Status = "transient"
	// Bad: outside tolerance in the first pass and in every re-test.
	Bad Status = "bad"
)

// Kind says what a finding blames.
type Kind string

const (
	// KindNode blames a node: most of its links in both directions are
	// bad, or one of its own figures (STREAM, HPL, provenance) is off. A
	// node finding is drained.
	KindNode Kind = "node"
	// KindOneWay blames one direction of a node's link: most links from
	// it (or to it) are bad, those the other way are fine — its port,
	// cable or NIC on one side, not the node. Not drained.
	KindOneWay Kind = "one-way"
	// KindLink blames one pair of nodes, in one direction or both.
	KindLink Kind = "link"
	// KindRun: a screening run failed, so what it was to measure is not
	// known.
	KindRun Kind = "run"
)

// Verdict is the result of a screening: every finding with its evidence,
// the drain list, and what the views (sbench screen, the report) show.
type Verdict struct {
	Options Options `json:"-"`
	// Tolerances as JSON shows them.
	LatencyFactor     float64 `json:"latency_tolerance"`
	BandwidthFraction float64 `json:"bandwidth_tolerance"`
	NodeFraction      float64 `json:"node_tolerance"`

	// Runs are the runs judged; Nodes every node they ran on.
	Runs  []int64  `json:"runs"`
	Nodes []string `json:"nodes"`

	Matrix    *MatrixCheck    `json:"matrix,omitempty"`
	Reference *ReferenceCheck `json:"reference,omitempty"`
	// NodeValues are the per-node checks (STREAM triad, HPL Gflops).
	NodeValues []NodeValueCheck `json:"node_values,omitempty"`
	// Provenance are the fields some nodes differ in from the others.
	Provenance []FieldCheck `json:"provenance,omitempty"`

	// Findings are what is flagged, the worst first: nodes, then one-way
	// links, then links, then failed runs.
	Findings []Finding `json:"findings"`
	// Transient are the links that recovered on a re-test.
	Transient []Link `json:"transient,omitempty"`
	// Drain has one entry per node finding.
	Drain []Drain `json:"drain"`
	// NodeStats are every node's links and figures, the worst first.
	NodeStats []NodeStat `json:"node_stats"`
	Warnings  []string   `json:"warnings,omitempty"`
}

// Flagged reports whether anything was flagged: the exit status of sbench
// screen and the headline of the report.
func (v *Verdict) Flagged() bool { return len(v.Findings) > 0 }

// Finding is one thing the screening blames, with its evidence.
type Finding struct {
	Kind Kind `json:"kind"`
	// Subject names it: "n3" (a node), "n3→*" (what n3 sends), "*→n3"
	// (what it receives), "n3→n5" (one direction of a pair), "n3↔n5"
	// (both), "run 12".
	Subject string `json:"subject"`
	// Nodes are the nodes involved.
	Nodes []string `json:"nodes"`
	// Links are the bad links it covers, as "from→to".
	Links []string `json:"links,omitempty"`
	// Drain: the node should be drained (node findings).
	Drain    bool       `json:"drain"`
	Evidence []Evidence `json:"evidence"`
	// severity orders findings of a kind: how far beyond its limit the
	// worst evidence is.
	severity float64
}

// Evidence is one reason for a finding: a check, the numbers, the
// reference and the limit they were held to.
type Evidence struct {
	// Check is what found it: matrix, reference, stream, hpl, provenance,
	// run.
	Check string `json:"check"`
	// Metric is what was measured: latency, bandwidth, triad, gflops, or
	// the provenance field.
	Metric string `json:"metric,omitempty"`
	// Text says it in one sentence, with the numbers.
	Text string `json:"text"`
	// Value, Reference and Limit are the worst value, what it was compared
	// with (a minimum, maximum or median) and the bound it broke, in Unit.
	Value     float64 `json:"value,omitempty"`
	Reference float64 `json:"reference,omitempty"`
	Limit     float64 `json:"limit,omitempty"`
	Unit      string  `json:"unit,omitempty"`
	// Found and Expected are a provenance field's value on the node and
	// on the majority.
	Found    string `json:"found,omitempty"`
	Expected string `json:"expected,omitempty"`
}

// Drain is one node to drain, and the scontrol line that does it.
type Drain struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
	// Command is the line to run, quoted for a POSIX shell; sbench never
	// runs it.
	Command string `json:"command"`
}

// NodeStat is one node's part in the screening, for the ranked tables.
type NodeStat struct {
	Node string `json:"node"`
	// Status is bad for a node finding, else ok; Finding says which kind
	// of finding names the node, if any (a one-way one leaves it ok).
	Status  Status `json:"status"`
	Finding Kind   `json:"finding,omitempty"`
	// OutLinks and InLinks are the matrix links from and to the node that
	// were measured; BadOut and BadIn those that are bad.
	OutLinks int `json:"out_links,omitempty"`
	InLinks  int `json:"in_links,omitempty"`
	BadOut   int `json:"bad_out,omitempty"`
	BadIn    int `json:"bad_in,omitempty"`
	// MeanBandwidth and MeanLatency are over the node's matrix links in
	// both directions (NaN-free: 0 when none).
	MeanBandwidth float64 `json:"mean_bandwidth,omitempty"`
	MeanLatency   float64 `json:"mean_latency,omitempty"`
	// Stream and HPL are the node's STREAM triad (MB/s) and HPL Gflops, 0
	// when not measured.
	Stream float64 `json:"stream_triad,omitempty"`
	HPL    float64 `json:"hpl_gflops,omitempty"`
	// score ranks the nodes: the share of bad links, then the shortfall
	// of the mean bandwidth.
	score float64
}

// Analyze judges a screening. It never fails: what cannot be judged (a
// failed run, a matrix with missing pairs, too few nodes to attribute) is
// a warning or, for a failed run, a finding.
func Analyze(in Input, o Options) *Verdict {
	v := &Verdict{Options: o, LatencyFactor: o.Tolerance.LatencyFactor, BandwidthFraction: o.Tolerance.BandwidthFraction,
		NodeFraction: o.NodeFraction, Findings: []Finding{}, Drain: []Drain{}, NodeStats: []NodeStat{}}
	byRun := map[int64][]store.Sample{}
	for _, s := range in.Samples {
		byRun[s.RunID] = append(byRun[s.RunID], s)
	}
	runs := slices.Clone(in.Runs)
	slices.SortFunc(runs, func(a, b store.Run) int { return int(a.ID - b.ID) })
	runs = slices.CompactFunc(runs, func(a, b store.Run) bool { return a.ID == b.ID })
	nodes := map[string]bool{}
	var ok []store.Run
	for _, r := range runs {
		v.Runs = append(v.Runs, r.ID)
		for _, n := range r.Nodes {
			nodes[n] = true
		}
		if r.Status == results.StatusOK {
			ok = append(ok, r)
			continue
		}
		if Screening(&r) {
			v.Findings = append(v.Findings, failedRun(r))
		}
	}
	b := &builder{v: v, o: o, seen: map[string]bool{}, nodeEvidence: map[string][]Evidence{}, nodeSeverity: map[string]float64{},
		nodeLinks: map[string][]string{}, oneWay: map[[2]string]*Finding{}, stats: map[string]*NodeStat{}}
	b.matrix(ok, byRun)
	b.reference(ok, byRun)
	b.nodeValues(ok, byRun)
	b.provenance(ok)
	for n := range b.seen {
		nodes[n] = true
	}
	v.Nodes = slices.SortedFunc(maps.Keys(nodes), hostlist.Compare)
	b.finish()
	return v
}

func failedRun(r store.Run) Finding {
	what := r.Benchmark
	if r.Kernel != "" && r.Kernel != r.Benchmark {
		what += " (" + r.Kernel + ")"
	}
	why := cmp.Or(r.Error, "no reason recorded")
	text := fmt.Sprintf("run %d, %s on %s, is %s: %s; what it was to measure is not judged", r.ID, what, dashIfEmpty(hostlist.Compress(r.Nodes)), r.Status, why)
	return Finding{Kind: KindRun, Subject: fmt.Sprintf("run %d", r.ID), Nodes: slices.Clone(r.Nodes),
		Evidence: []Evidence{{Check: CheckRun, Text: text}}}
}

func dashIfEmpty(s string) string { return cmp.Or(s, "-") }
