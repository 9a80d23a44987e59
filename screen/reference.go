package screen

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// LabelReference is the label of the runs of a pairs = "reference"
// placement: the reference node.
const LabelReference = "reference"

// ReferenceCheck is every node's link to one reference node, both ways
// (pairs = "reference"): latency at the smallest message size measured,
// bandwidth at the largest, judged together by the tolerance rule.
type ReferenceCheck struct {
	Node string  `json:"node"`
	Runs []int64 `json:"runs"`
	// LatencySize and BandwidthSize are the message sizes (bytes) judged.
	LatencySize   float64 `json:"latency_size,omitempty"`
	BandwidthSize float64 `json:"bandwidth_size,omitempty"`

	Limits
	// Links are the links to and from the reference, by node.
	Links []Link `json:"links"`
}

// reference judges the runs of a reference placement. A node whose links
// to and from the reference are both outside tolerance is blamed; one
// direction alone is that link (or, with a matrix that says so too, the
// node's one-way finding).
func (b *builder) reference(runs []store.Run, byRun map[int64][]store.Sample) {
	rc, pairs, refNodes := b.collectReference(runs, byRun)
	if len(rc.Runs) == 0 {
		return
	}
	if len(refNodes) > 1 {
		b.warnf("the reference runs name %d reference nodes (%s): each link is judged with the others all the same", len(refNodes),
			hostlist.Compress(slices.SortedFunc(maps.Keys(refNodes), hostlist.Compare)))
	}
	rc.Node = slices.SortedFunc(maps.Keys(refNodes), hostlist.Compare)[0]
	keys := b.judgeReference(rc, pairs)
	b.confirmByMatrix(rc)
	b.v.Reference = rc
	b.referenceFindings(rc, keys, refNodes)
}

// refPoint is one value of a reference link at a message size.
type refPoint struct{ x, v float64 }

// refPair is what the runs measured of one reference link.
type refPair struct{ lat, bw []refPoint }

// collectReference gathers the reference runs' latency and bandwidth per
// link, the reference nodes they name, and the check's runs and units.
func (b *builder) collectReference(runs []store.Run, byRun map[int64][]store.Sample) (*ReferenceCheck, map[[2]string]*refPair, map[string]bool) {
	refNodes := map[string]bool{}
	pairs := map[[2]string]*refPair{}
	rc := &ReferenceCheck{}
	for _, r := range runs {
		ref := r.Labels[LabelReference]
		if ref == "" {
			continue
		}
		from, to, ok := strings.Cut(r.Labels["pair"], "->")
		if !ok || from == "" || to == "" || from == to {
			b.warnf("run %d carries reference=%s but no pair=A->B label: left out", r.ID, ref)
			continue
		}
		refNodes[ref] = true
		k := [2]string{from, to}
		a := pairs[k]
		if a == nil {
			a = &refPair{}
			pairs[k] = a
		}
		used := false
		for _, s := range byRun[r.ID] {
			if s.X == nil {
				continue
			}
			switch {
			case s.Metric == "latency" && results.BetterFor(s.Unit) == results.BetterLower:
				v := s.Value
				if s.P50 != nil {
					v = *s.P50 // the median: one hiccup must not colour a node
				}
				a.lat = append(a.lat, refPoint{*s.X, v})
				rc.LatencyUnit = cmp.Or(rc.LatencyUnit, s.Unit)
				used = true
			case s.Metric == "bandwidth" && results.BetterFor(s.Unit) == results.BetterHigher:
				a.bw = append(a.bw, refPoint{*s.X, s.Value})
				rc.BandwidthUnit = cmp.Or(rc.BandwidthUnit, s.Unit)
				used = true
			}
		}
		if used {
			rc.Runs = append(rc.Runs, r.ID)
		}
	}
	return rc, pairs, refNodes
}

// judgeReference judges the links together at one size for all — the
// smallest latency size and the largest bandwidth size every pair
// measured — into rc.Links; it returns the links' pairs in rc.Links'
// order.
func (b *builder) judgeReference(rc *ReferenceCheck, pairs map[[2]string]*refPair) [][2]string {
	latSize, bwSize := math.Inf(-1), math.Inf(1)
	byX := func(p, q refPoint) int { return cmp.Compare(p.x, q.x) }
	for _, a := range pairs {
		if len(a.lat) > 0 {
			latSize = max(latSize, slices.MinFunc(a.lat, byX).x)
		}
		if len(a.bw) > 0 {
			bwSize = min(bwSize, slices.MaxFunc(a.bw, byX).x)
		}
	}
	at := func(ps []refPoint, x float64) float64 {
		var vs []float64
		for _, p := range ps {
			if p.x == x {
				vs = append(vs, p.v)
			}
		}
		return medianOr0(vs)
	}
	keys := sortPairs(slices.Collect(maps.Keys(pairs)))
	links := make([]kernels.LinkMeasure, len(keys))
	for i, k := range keys {
		links[i] = kernels.LinkMeasure{Latency: math.NaN(), Bandwidth: math.NaN()}
		if !math.IsInf(latSize, 0) {
			links[i].Latency = at(pairs[k].lat, latSize)
			rc.LatencySize = latSize
		}
		if !math.IsInf(bwSize, 0) {
			links[i].Bandwidth = at(pairs[k].bw, bwSize)
			rc.BandwidthSize = bwSize
		}
	}
	jv := b.o.Tolerance.Judge(links)
	if !math.IsNaN(jv.MinLatency) {
		rc.MinLatency, rc.LatencyLimit = jv.MinLatency, jv.LatencyLimit
	}
	if !math.IsNaN(jv.MaxBandwidth) {
		rc.MaxBandwidth, rc.BandwidthLimit = jv.MaxBandwidth, jv.BandwidthLimit
	}
	for i, k := range keys {
		l := Link{From: k[0], To: k[1], Runs: 1}
		if measured(links[i].Latency) {
			l.Latency, l.LatencyStatus = links[i].Latency, judged(in(jv.SlowLatency, i), nil)
		}
		if measured(links[i].Bandwidth) {
			l.Bandwidth, l.BandwidthStatus = links[i].Bandwidth, judged(in(jv.LowBandwidth, i), nil)
		}
		rc.Links = append(rc.Links, l)
		b.see(k[0])
		b.see(k[1])
	}
	return keys
}

// confirmByMatrix takes the matrix's word for a link it measured too, and
// more than once when repeated or re-tested: where it found the value
// within tolerance, the reference's one measurement was a hiccup.
func (b *builder) confirmByMatrix(rc *ReferenceCheck) {
	for i := range rc.Links {
		l := &rc.Links[i]
		m, ok := b.v.Matrix.Link(l.From, l.To)
		if !ok {
			continue
		}
		confirmed := false
		if l.LatencyStatus == Bad && m.LatencyStatus != Bad && m.LatencyStatus != "" {
			l.LatencyStatus, confirmed = Transient, true
		}
		if l.BandwidthStatus == Bad && m.BandwidthStatus != Bad && m.BandwidthStatus != "" {
			l.BandwidthStatus, confirmed = Transient, true
		}
		if confirmed {
			l.Note = "to the reference; the matrix measured it within tolerance"
			b.v.Transient = append(b.v.Transient, *l)
		}
	}
}

// referenceFindings blames a node whose links to and from the reference
// are both bad, else the one bad link (or the node's one-way finding when
// the matrix says so of all its links that way).
func (b *builder) referenceFindings(rc *ReferenceCheck, keys [][2]string, refNodes map[string]bool) {
	byKey := map[[2]string]*Link{}
	for i := range rc.Links {
		l := &rc.Links[i]
		byKey[[2]string{l.From, l.To}] = l
	}
	var others []string
	for _, k := range keys {
		for _, n := range k {
			if !refNodes[n] && !slices.Contains(others, n) {
				others = append(others, n)
			}
		}
	}
	slices.SortFunc(others, hostlist.Compare)
	for _, n := range others {
		out, in := byKey[[2]string{n, rc.Node}], byKey[[2]string{rc.Node, n}]
		badOut := out != nil && out.Status() == Bad
		badIn := in != nil && in.Status() == Bad
		switch {
		case badOut && badIn:
			b.nodeFinding(n, b.linkEvidence(CheckReference, fmt.Sprintf("both links between %s and the reference %s are outside tolerance", n, rc.Node), []*Link{out, in}, rc.Limits), out, in)
		case badOut || badIn:
			l, dir := out, "out"
			if badIn {
				l, dir = in, "in"
			}
			ev := b.linkEvidence(CheckReference, fmt.Sprintf("%s (%s is within tolerance)", l.Name(), l.To+"→"+l.From), []*Link{l}, rc.Limits)
			if b.oneWay[[2]string{n, dir}] != nil {
				// The matrix says so of all of the node's links that way.
				b.oneWayFinding(n, dir, []*Link{l}, ev)
			} else {
				b.linkFinding(l.Name(), []*Link{l}, ev)
			}
		}
	}
}
