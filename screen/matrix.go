package screen

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// The matrix kernel's parameters a screening reads: its tolerances.
const (
	paramLatencyTolerance  = "latency_tolerance"
	paramBandwidthTolerane = "bandwidth_tolerance"
)

// minAttribution is the fewest nodes a matrix needs before a bad link can
// be blamed on a node: with three nodes each has two links a direction,
// and "most of them" is both — a bad link and a bad node look alike.
const minAttribution = 4

// Link is one ordered node pair of the matrix: what it measured in the
// first pass and on re-test, and the verdict on each value.
type Link struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Latency (µs, one way) and Bandwidth (MB/s) of the first pass: the
	// median over the runs that measured the pair; 0 when not measured.
	Latency   float64 `json:"latency,omitempty"`
	Bandwidth float64 `json:"bandwidth,omitempty"`
	// LatencyStatus and BandwidthStatus are the verdicts on each ("" when
	// not measured).
	LatencyStatus   Status `json:"latency_status,omitempty"`
	BandwidthStatus Status `json:"bandwidth_status,omitempty"`
	// Retests are the re-test passes of the pair, in run and pass order.
	Retests []Retest `json:"retests,omitempty"`
	// Runs is how many runs measured the pair; BadRuns in how many of
	// them it was bad.
	Runs    int `json:"runs"`
	BadRuns int `json:"bad_runs,omitempty"`
	// Round is the round of the schedule the pair was measured in (the
	// first run's), "" for a sequential matrix.
	Round string `json:"round,omitempty"`
	// Note says why a transient link is transient when no re-test of its
	// own does (a reference link the matrix measured within tolerance).
	Note string `json:"note,omitempty"`
	// latShort and bwShort are how far below the best the values are (0
	// for the best pair, 0.5 for half its bandwidth or twice its
	// latency), the measure the worst pairs are ranked by.
	latShort, bwShort float64
}

// Retest is one re-test of a link.
type Retest struct {
	Run       int64   `json:"run"`
	Pass      string  `json:"pass"`
	Latency   float64 `json:"latency,omitempty"`
	Bandwidth float64 `json:"bandwidth,omitempty"`
}

// Name is "from→to".
func (l *Link) Name() string { return l.From + "→" + l.To }

// Status is the worse of the link's two verdicts.
func (l *Link) Status() Status { return worse(l.LatencyStatus, l.BandwidthStatus) }

// Shortfall is how far the link is below the matrix's best pair, in
// whichever value is worse: 0 for the best pair, 0.5 for half its
// bandwidth or twice its latency.
func (l *Link) Shortfall() float64 { return max(l.latShort, l.bwShort) }

func worse(a, b Status) Status {
	if statusRank[b] > statusRank[a] {
		return b
	}
	return a
}

// statusRank orders the statuses from none ("", not measured) to Bad.
var statusRank = map[Status]int{OK: 1, Transient: 2, Bad: 3}

// MatrixCheck is the all-pairs matrix of a screening.
type MatrixCheck struct {
	Runs []int64 `json:"runs"`
	// Schedule is the runner's ("rounds" or "sequential"; "" in bundles
	// older than the tag).
	Schedule string `json:"schedule,omitempty"`
	Nodes    int    `json:"nodes"`
	// Pairs are the ordered pairs measured; Missing those of its nodes
	// that were not.
	Pairs   int `json:"pairs"`
	Missing int `json:"missing,omitempty"`
	Limits
	// Suspects were outside tolerance in the first pass; Retested of them
	// were re-tested (Passes passes at most); Bad stayed outside,
	// Transient came back.
	Suspects  int `json:"suspects"`
	Retested  int `json:"retested,omitempty"`
	Passes    int `json:"passes,omitempty"`
	Bad       int `json:"bad"`
	Transient int `json:"transient"`
	// BadLinks are the bad links, the worst first.
	BadLinks []Link `json:"bad_links,omitempty"`

	order  []string       // nodes, sorted
	index  map[string]int // node -> its place in order
	table  []*Link        // link from order[i] to order[j] at i*len(order)+j; nil if not measured
	sorted []*Link        // links by from, then to node
}

// Link returns the pair from→to, if measured (and m is not nil: no
// matrix, no pair).
func (m *MatrixCheck) Link(from, to string) (*Link, bool) {
	if m == nil {
		return nil, false
	}
	i, ok := m.index[from]
	j, ok2 := m.index[to]
	if !ok || !ok2 {
		return nil, false
	}
	l := m.at(i, j)
	return l, l != nil
}

// at is the link from the ith node to the jth, nil if not measured.
func (m *MatrixCheck) at(i, j int) *Link { return m.table[i*len(m.order)+j] }

// Links returns every measured pair, by from then to node.
func (m *MatrixCheck) Links() []*Link { return slices.Clone(m.sorted) }

// Worst returns the n pairs furthest below the best (Shortfall), flagged
// or not, the worst first.
func (m *MatrixCheck) Worst(n int) []*Link {
	all := m.Links()
	slices.SortStableFunc(all, func(a, b *Link) int { return cmp.Compare(b.Shortfall(), a.Shortfall()) })
	return all[:min(n, len(all))]
}

// pair is an ordered node pair, by the nodes' ids (their order of first
// appearance): 65,000 pairs are hashed and sorted as two ints, not two
// names.
type pair [2]int

// runLinks is one matrix run's samples.
type runLinks struct {
	run      int64
	schedule string
	first    map[pair]*kernels.LinkMeasure
	round    map[pair]string
	retest   map[string]map[pair]*kernels.LinkMeasure // pass -> pair
	latUnit  string
	bwUnit   string
	params   map[string]string
}

func newRunLinks(r store.Run) *runLinks {
	return &runLinks{run: r.ID, first: map[pair]*kernels.LinkMeasure{}, round: map[pair]string{},
		retest: map[string]map[pair]*kernels.LinkMeasure{}, params: r.Params}
}

func measureOf(m map[pair]*kernels.LinkMeasure, k pair) *kernels.LinkMeasure {
	lm := m[k]
	if lm == nil {
		lm = &kernels.LinkMeasure{Latency: math.NaN(), Bandwidth: math.NaN()}
		m[k] = lm
	}
	return lm
}

// sortedPairs are m's pairs in id order, each run judged in one order,
// and their measures in that order.
func sortedPairs(m map[pair]*kernels.LinkMeasure) ([]pair, []kernels.LinkMeasure) {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b pair) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	links := make([]kernels.LinkMeasure, len(keys))
	for i, k := range keys {
		links[i] = *m[k]
	}
	return keys, links
}

// matrix judges the matrix runs: each run against its own references (the
// links measured together), re-tests against the first pass's, and the
// runs together: a link is bad when it is bad in every run that measured
// it, transient when it is bad or transient in some.
func (b *builder) matrix(runs []store.Run, byRun map[int64][]store.Sample) {
	nodes := nodeIDs{ids: map[string]int{}}
	mrs := b.collectMatrix(runs, byRun, &nodes)
	if len(mrs) == 0 {
		return
	}
	mc := &MatrixCheck{}
	b.v.Matrix = mc
	per := map[pair][]perRun{}
	var minLats, maxBws, latLimits, bwLimits []float64
	for _, rl := range mrs {
		jv := b.judgeMatrixRun(mc, rl, per)
		if !math.IsNaN(jv.MinLatency) {
			minLats, latLimits = append(minLats, jv.MinLatency), append(latLimits, jv.LatencyLimit)
		}
		if !math.IsNaN(jv.MaxBandwidth) {
			maxBws, bwLimits = append(maxBws, jv.MaxBandwidth), append(bwLimits, jv.BandwidthLimit)
		}
	}
	mc.MinLatency, mc.LatencyLimit = medianOr0(minLats), medianOr0(latLimits)
	mc.MaxBandwidth, mc.BandwidthLimit = medianOr0(maxBws), medianOr0(bwLimits)
	b.matrixTable(mc, per, nodes.names)
	b.attributeMatrix(mc)
}

// nodeIDs numbers node names in their order of first appearance.
type nodeIDs struct {
	ids   map[string]int
	names []string
}

func (n *nodeIDs) id(name string) int {
	i, ok := n.ids[name]
	if !ok {
		i = len(n.names)
		n.ids[name] = i
		n.names = append(n.names, name)
	}
	return i
}

// collectMatrix gathers each matrix run's links, first pass and re-tests,
// warning of what it leaves out and of runs of several configurations.
func (b *builder) collectMatrix(runs []store.Run, byRun map[int64][]store.Sample, nodes *nodeIDs) []*runLinks {
	var mrs []*runLinks
	configs := map[string]bool{}
	for _, r := range runs {
		var rl *runLinks
		for _, s := range byRun[r.ID] {
			var m map[pair]*kernels.LinkMeasure
			first := false
			switch s.Metric {
			case kernels.MetricMatrixLatency, kernels.MetricMatrixBandwidth:
				first = true
			case kernels.MetricMatrixRetestLatency, kernels.MetricMatrixRetestBandwidth:
			default:
				continue
			}
			from, to := s.Tags["from"], s.Tags["to"]
			if from == "" || to == "" || from == to {
				b.warnf("run %d: a %s sample without from/to nodes is left out", r.ID, s.Metric)
				continue
			}
			if rl == nil {
				rl = newRunLinks(r)
				mrs = append(mrs, rl)
				configs[store.ConfigOf(&r).Without(store.AttrProcesses).Key()] = true
			}
			k := pair{nodes.id(from), nodes.id(to)}
			if first {
				m = rl.first
				if rd := s.Tags["round"]; rd != "" {
					rl.round[k] = rd
				}
				if sc := s.Tags["schedule"]; sc != "" {
					rl.schedule = sc
				}
			} else {
				pass := s.Tags["pass"]
				if rl.retest[pass] == nil {
					rl.retest[pass] = map[pair]*kernels.LinkMeasure{}
				}
				m = rl.retest[pass]
			}
			lm := measureOf(m, k)
			if strings.HasSuffix(s.Metric, "latency") {
				lm.Latency, rl.latUnit = s.Value, s.Unit
			} else {
				lm.Bandwidth, rl.bwUnit = s.Value, s.Unit
			}
		}
	}
	if len(configs) > 1 {
		b.warnf("the matrix runs are of %d configurations; they are judged together", len(configs))
	}
	return mrs
}

// perRun is one run's verdict on one link.
type perRun struct {
	lat, bw             float64
	latStatus, bwStatus Status
	round               string
	retests             []Retest
}

// judgeMatrixRun judges one run's links against its own references and
// its re-tests against the first pass's, adding each link's verdict to
// per; it returns the run's judgement.
func (b *builder) judgeMatrixRun(mc *MatrixCheck, rl *runLinks, per map[pair][]perRun) kernels.Verdict {
	mc.Runs = append(mc.Runs, rl.run)
	if mc.Schedule == "" || mc.Schedule == rl.schedule {
		mc.Schedule = rl.schedule
	} else {
		mc.Schedule = "mixed"
	}
	mc.LatencyUnit = cmp.Or(mc.LatencyUnit, rl.latUnit)
	mc.BandwidthUnit = cmp.Or(mc.BandwidthUnit, rl.bwUnit)
	b.runnerTolerance(rl)
	keys, links := sortedPairs(rl.first)
	jv := b.o.Tolerance.Judge(links)
	// Every pass's re-tests against the first pass's references.
	passes := slices.SortedFunc(maps.Keys(rl.retest), results.NaturalCompare)
	mc.Passes = max(mc.Passes, len(passes))
	stillLat := map[pair][]bool{}
	stillBw := map[pair][]bool{}
	retests := map[pair][]Retest{}
	for _, pass := range passes {
		rk, rlinks := sortedPairs(rl.retest[pass])
		rv := b.o.Tolerance.JudgeAgainst(rlinks, jv.MinLatency, jv.MaxBandwidth)
		for i, k := range rk {
			lm := rlinks[i]
			rt := Retest{Run: rl.run, Pass: pass}
			if measured(lm.Latency) {
				rt.Latency = lm.Latency
				stillLat[k] = append(stillLat[k], in(rv.SlowLatency, i))
			}
			if measured(lm.Bandwidth) {
				rt.Bandwidth = lm.Bandwidth
				stillBw[k] = append(stillBw[k], in(rv.LowBandwidth, i))
			}
			retests[k] = append(retests[k], rt)
		}
	}
	for i, k := range keys {
		lm := links[i]
		p := perRun{lat: lm.Latency, bw: lm.Bandwidth, round: rl.round[k], retests: retests[k]}
		if measured(lm.Latency) {
			p.latStatus = judged(in(jv.SlowLatency, i), stillLat[k])
		}
		if measured(lm.Bandwidth) {
			p.bwStatus = judged(in(jv.LowBandwidth, i), stillBw[k])
		}
		if in(jv.SlowLatency, i) || in(jv.LowBandwidth, i) {
			mc.Suspects++
			if len(retests[k]) > 0 {
				mc.Retested++
			}
		}
		per[k] = append(per[k], p)
	}
	return jv
}

// matrixTable combines each link's verdicts over the runs into the
// check's dense table of its nodes (in name order), its bad and transient
// links.
func (b *builder) matrixTable(mc *MatrixCheck, per map[pair][]perRun, names []string) {
	used := map[int]bool{}
	for k := range per {
		used[k[0]], used[k[1]] = true, true
	}
	for i := range names {
		if used[i] {
			mc.order = append(mc.order, names[i])
		}
	}
	slices.SortFunc(mc.order, hostlist.Compare)
	n := len(mc.order)
	mc.index = ranks(mc.order)
	mc.table = make([]*Link, n*n)
	for k, ps := range per {
		l := &Link{From: names[k[0]], To: names[k[1]], Runs: len(ps), Round: ps[0].round}
		var lats, bws []float64
		var latSt, bwSt []Status
		for _, p := range ps {
			if measured(p.lat) {
				lats, latSt = append(lats, p.lat), append(latSt, p.latStatus)
			}
			if measured(p.bw) {
				bws, bwSt = append(bws, p.bw), append(bwSt, p.bwStatus)
			}
			l.Retests = append(l.Retests, p.retests...)
			if p.latStatus == Bad || p.bwStatus == Bad {
				l.BadRuns++
			}
		}
		l.Latency, l.LatencyStatus = medianOr0(lats), combine(latSt)
		l.Bandwidth, l.BandwidthStatus = medianOr0(bws), combine(bwSt)
		if l.Latency > 0 && mc.MinLatency > 0 {
			l.latShort = 1 - mc.MinLatency/l.Latency
		}
		if l.Bandwidth > 0 && mc.MaxBandwidth > 0 {
			l.bwShort = 1 - l.Bandwidth/mc.MaxBandwidth
		}
		mc.table[mc.index[l.From]*n+mc.index[l.To]] = l
	}
	for _, l := range mc.table {
		if l == nil {
			continue
		}
		mc.sorted = append(mc.sorted, l)
		switch l.Status() {
		case Bad:
			mc.Bad++
			mc.BadLinks = append(mc.BadLinks, *l)
		case Transient:
			mc.Transient++
			b.v.Transient = append(b.v.Transient, *l)
		}
	}
	mc.Nodes = n
	mc.Pairs = len(mc.sorted)
	mc.Missing = n*(n-1) - mc.Pairs
	if mc.Missing > 0 {
		b.warnf("the matrix lacks %d of the %d ordered pairs of its %d nodes: they are not judged", mc.Missing, n*(n-1), n)
	}
	for _, name := range mc.order {
		b.see(name)
	}
	slices.SortStableFunc(mc.BadLinks, func(a, b Link) int { return cmp.Compare(b.Shortfall(), a.Shortfall()) })
}

// judged is a value's verdict in one run: bad when outside tolerance in
// the first pass and in every re-test of it (none is every), transient
// when a re-test came back.
func judged(first bool, retests []bool) Status {
	if !first {
		return OK
	}
	for _, still := range retests {
		if !still {
			return Transient
		}
	}
	return Bad
}

// combine is a value's verdict over runs: bad in every run is bad; bad
// or transient in some is transient.
func combine(sts []Status) Status {
	if len(sts) == 0 {
		return ""
	}
	bad, some := 0, false
	for _, s := range sts {
		switch s {
		case Bad:
			bad++
			some = true
		case Transient:
			some = true
		}
	}
	switch {
	case bad == len(sts):
		return Bad
	case some:
		return Transient
	}
	return OK
}

// runnerTolerance warns when the runner chose its re-tests by other
// tolerances than the screening judges by: a pair it did not re-test has
// only its first pass to go by.
func (b *builder) runnerTolerance(rl *runLinks) {
	lt, bt := rl.params[paramLatencyTolerance], rl.params[paramBandwidthTolerane]
	if lt == "" && bt == "" {
		return
	}
	l, _ := strconv.ParseFloat(lt, 64)
	f, _ := strconv.ParseFloat(bt, 64)
	t := b.o.Tolerance
	if (lt != "" && l != t.LatencyFactor) || (bt != "" && f != t.BandwidthFraction) {
		b.warnf("run %d re-tested the pairs outside latency %s× / bandwidth %s of the first pass; this screening judges by %s× / %s, so a pair the runner did not re-test is judged on its first pass alone",
			rl.run, dashIfEmpty(lt), dashIfEmpty(bt), ftoa(t.LatencyFactor), ftoa(t.BandwidthFraction))
	}
}

// attributeMatrix blames the bad links on nodes, one direction of a node,
// or the links themselves. A node is bad when more than half of its links
// in each direction are bad; the node with the largest share of bad links
// is blamed first, and its links no longer count for the others (a bad
// node makes one link of every other node bad, two bad nodes two). A node
// with more than half of its links bad in one direction only is one-way:
// its sending (or receiving) side. What is left are links.
func (b *builder) attributeMatrix(mc *MatrixCheck) {
	n := len(mc.order)
	a := &attribution{mc: mc, n: n, badNode: make([]bool, n), explained: make([]bool, n*n)}
	attribute := mc.Nodes >= minAttribution
	if !attribute && mc.Bad > 0 {
		b.warnf("with %d nodes a bad link cannot be told from a bad node (that takes %d): the bad links are listed as links", mc.Nodes, minAttribution)
	}
	if attribute {
		a.findBadNodes()
	}
	b.badNodeFindings(a)
	if attribute {
		b.oneWayFindings(a)
	}
	b.linkFindings(a)
	b.matrixStats(a)
}

// attribution is the matrix's links as attributeMatrix blames them: the
// nodes found bad, and the bad links a finding already explains.
type attribution struct {
	mc        *MatrixCheck
	n         int
	badNode   []bool
	anyBad    bool
	explained []bool // by from*n+to
}

// bad is the link i → j, if measured, and whether it is bad.
func (a *attribution) bad(i, j int) (*Link, bool) {
	l := a.mc.at(i, j)
	return l, l != nil && l.Status() == Bad
}

// dirs counts a node's links, and its bad links, each way.
type dirs struct{ out, in, badOut, badIn int }

// count counts node i's measured links from and to each other node (all
// of them, or those not found bad), and the bad ones; fn, if not nil, is
// called with each link, node by node, the one from i first.
func (a *attribution) count(i int, withBad bool, fn func(l *Link, from, to int, isBad bool)) dirs {
	var d dirs
	for j := 0; j < a.n; j++ {
		if j == i || a.badNode[j] && !withBad {
			continue
		}
		for _, k := range [][2]int{{i, j}, {j, i}} {
			l, isBad := a.bad(k[0], k[1])
			if l == nil {
				continue
			}
			if fn != nil {
				fn(l, k[0], k[1], isBad)
			}
			if k[0] == i {
				d.out++
				if isBad {
					d.badOut++
				}
			} else {
				d.in++
				if isBad {
					d.badIn++
				}
			}
		}
	}
	return d
}

// most reports whether bad is most of all.
func most(bad, all int) bool { return all > 0 && 2*bad > all }

// findBadNodes blames, one at a time, the node with the largest share of
// bad links when most of its links both ways are bad, not counting the
// links of the nodes already blamed.
func (a *attribution) findBadNodes() {
	for {
		best, bestShare := -1, 0.0
		for i := 0; i < a.n; i++ {
			if a.badNode[i] {
				continue
			}
			d := a.count(i, false, nil)
			if most(d.badOut, d.out) && most(d.badIn, d.in) {
				if share := float64(d.badOut+d.badIn) / float64(d.out+d.in); share > bestShare {
					best, bestShare = i, share
				}
			}
		}
		if best < 0 {
			return
		}
		a.badNode[best], a.anyBad = true, true
	}
}

// badNodeFindings is a node finding per bad node, with its bad links.
func (b *builder) badNodeFindings(a *attribution) {
	mc, n := a.mc, a.n
	for i := 0; i < n; i++ {
		if !a.badNode[i] {
			continue
		}
		var ls []*Link
		d := a.count(i, true, func(l *Link, from, to int, isBad bool) {
			if isBad {
				ls = append(ls, l)
				a.explained[from*n+to] = true
			}
		})
		head := fmt.Sprintf("%d of %d links from %s and %d of %d links to it are outside tolerance", d.badOut, d.out, mc.order[i], d.badIn, d.in)
		b.nodeFinding(mc.order[i], b.linkEvidence(CheckMatrix, head, ls, mc.Limits), ls...)
	}
}

// oneWayFindings blames one direction of a node's links when most links
// that way are bad and most the other way are not.
func (b *builder) oneWayFindings(a *attribution) {
	mc, n := a.mc, a.n
	for i := 0; i < n; i++ {
		if a.badNode[i] {
			continue
		}
		d := a.count(i, false, nil)
		for _, w := range []struct{ dir, away, back string }{{"out", "from", "to"}, {"in", "to", "from"}} {
			dir := w.dir
			nBad, all, otherBad, otherAll := d.badOut, d.out, d.badIn, d.in
			if dir == "in" {
				nBad, all, otherBad, otherAll = d.badIn, d.in, d.badOut, d.out
			}
			if !most(nBad, all) || most(otherBad, otherAll) {
				continue
			}
			var ls []*Link
			for j := 0; j < n; j++ {
				from, to := i, j
				if dir == "in" {
					from, to = j, i
				}
				if l, isBad := a.bad(from, to); isBad && !a.badNode[j] {
					ls = append(ls, l)
					a.explained[from*n+to] = true
				}
			}
			name := mc.order[i]
			head := fmt.Sprintf("%d of %d links %s %s are outside tolerance and %d of %d links %s it", nBad, all, w.away, name, otherBad, otherAll, w.back)
			if a.anyBad {
				head += " (links with bad nodes not counted)"
			}
			b.oneWayFinding(name, dir, ls, b.linkEvidence(CheckMatrix, head, ls, mc.Limits))
		}
	}
}

// linkFindings blames the bad links no other finding explains: one pair,
// in one direction or both (the pair once, from its first node).
func (b *builder) linkFindings(a *attribution) {
	n := a.n
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			l, isBad := a.bad(i, j)
			if !isBad || a.explained[i*n+j] {
				continue
			}
			if back, backBad := a.bad(j, i); backBad && !a.explained[j*n+i] {
				if i > j {
					continue
				}
				a.explained[j*n+i] = true
				b.linkFinding(l.From+"↔"+l.To, []*Link{l, back}, b.linkEvidence(CheckMatrix, fmt.Sprintf("both directions of %s↔%s are outside tolerance", l.From, l.To), []*Link{l, back}, a.mc.Limits))
				continue
			}
			b.linkFinding(l.Name(), []*Link{l}, b.linkEvidence(CheckMatrix, l.Name(), []*Link{l}, a.mc.Limits))
		}
	}
}

// matrixStats are every node's link statistics, for the ranked tables and
// the heatmap's order.
func (b *builder) matrixStats(a *attribution) {
	for i := 0; i < a.n; i++ {
		var bw, lat []float64
		d := a.count(i, true, func(l *Link, _, _ int, _ bool) {
			if l.Bandwidth > 0 {
				bw = append(bw, l.Bandwidth)
			}
			if l.Latency > 0 {
				lat = append(lat, l.Latency)
			}
		})
		st := b.stat(a.mc.order[i])
		st.OutLinks, st.InLinks, st.BadOut, st.BadIn = d.out, d.in, d.badOut, d.badIn
		st.MeanBandwidth, st.MeanLatency = mean(bw), mean(lat)
	}
}

// linkEvidence says what is wrong with a set of bad links: per value, how
// many are outside its limit, the worst of them, the limit and the
// reference it comes from.
func (b *builder) linkEvidence(check, head string, ls []*Link, lim Limits) []Evidence {
	t := b.o.Tolerance
	values := []struct {
		metric, unit string
		value        func(*Link) float64
		status       func(*Link) Status
		ref, bound   float64
		// below: the bound is a floor (bandwidth), else a ceiling.
		below bool
		// against writes a value against ref ("17%", "3.12×"); word says
		// what ref is; rule is the tolerance as against writes it.
		against func(v float64) string
		word    string
		rule    string
	}{
		{metric: "bandwidth", unit: lim.BandwidthUnit, below: true,
			value: func(l *Link) float64 { return l.Bandwidth }, status: func(l *Link) Status { return l.BandwidthStatus },
			ref: lim.MaxBandwidth, bound: lim.BandwidthLimit,
			against: func(v float64) string { return pct(v / lim.MaxBandwidth) }, word: "of the maximum", rule: pct(t.BandwidthFraction)},
		{metric: "latency", unit: lim.LatencyUnit,
			value: func(l *Link) float64 { return l.Latency }, status: func(l *Link) Status { return l.LatencyStatus },
			ref: lim.MinLatency, bound: lim.LatencyLimit,
			against: func(v float64) string { return times(v / lim.MinLatency) }, word: "the minimum", rule: times(t.LatencyFactor)},
	}
	var out []Evidence
	for _, m := range values {
		var bad []*Link
		worst := -1
		for _, l := range ls {
			if m.status(l) != Bad {
				continue
			}
			bad = append(bad, l)
			if v, w := m.value(l), len(bad)-1; worst < 0 || (m.below && v < m.value(bad[worst])) || (!m.below && v > m.value(bad[worst])) {
				worst = w
			}
		}
		if len(bad) == 0 {
			continue
		}
		wl := bad[worst]
		w := m.value(wl)
		side, extreme := "above", "up to"
		if m.below {
			side, extreme = "below", "down to"
		}
		what := fmt.Sprintf("%s %s %s (%s %s %s %s) is %s the limit %s %s (%s)",
			m.metric, ftoa(w), m.unit, m.against(w), m.word, ftoa(m.ref), m.unit, side, ftoa(m.bound), m.unit, m.rule)
		if len(bad) > 1 {
			what = fmt.Sprintf("the %s of %d of them is %s the limit %s %s (%s %s %s %s), %s %s %s (%s, %s)",
				m.metric, len(bad), side, ftoa(m.bound), m.unit, m.rule, m.word, ftoa(m.ref), m.unit, extreme, ftoa(w), m.unit, m.against(w), wl.Name())
		}
		out = append(out, Evidence{Check: check, Metric: m.metric, Text: head + ": " + what,
			Value: w, Reference: m.ref, Limit: m.bound, Unit: m.unit})
	}
	return out
}

// Limits are the references and limits a set of links was judged by:
// latency ≤ LatencyLimit = MinLatency × the factor, bandwidth ≥
// BandwidthLimit = MaxBandwidth × the fraction (the median over the runs
// when there are several).
type Limits struct {
	MinLatency     float64 `json:"min_latency,omitempty"`
	LatencyLimit   float64 `json:"latency_limit,omitempty"`
	MaxBandwidth   float64 `json:"max_bandwidth,omitempty"`
	BandwidthLimit float64 `json:"bandwidth_limit,omitempty"`
	LatencyUnit    string  `json:"latency_unit,omitempty"`
	BandwidthUnit  string  `json:"bandwidth_unit,omitempty"`
}

// sortPairs sorts node pairs by their first, then second node: with the
// nodes ranked once, not compared as names 65,000 times over.
func sortPairs(pairs [][2]string) [][2]string {
	set := map[string]bool{}
	for _, p := range pairs {
		set[p[0]], set[p[1]] = true, true
	}
	rank := ranks(slices.SortedFunc(maps.Keys(set), hostlist.Compare))
	slices.SortFunc(pairs, func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(rank[a[0]], rank[b[0]]), cmp.Compare(rank[a[1]], rank[b[1]]))
	})
	return pairs
}

// in reports whether i is in sorted, a verdict's ascending indices.
func in(sorted []int, i int) bool {
	_, ok := slices.BinarySearch(sorted, i)
	return ok
}

func ranks(sorted []string) map[string]int {
	r := make(map[string]int, len(sorted))
	for i, n := range sorted {
		r[n] = i
	}
	return r
}

func measured(x float64) bool { return x > 0 && !math.IsInf(x, 0) }

func medianOr0(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return compare.Median(xs)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}
