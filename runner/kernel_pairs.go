package runner

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// bibwOffset shifts rank 1's messages in the pattern, so that data echoed
// back instead of sent fails the check.
const bibwOffset = patternSpan / 2

// runBibw streams both ways at once between ranks 0 and 1, as osu_bibw:
// in every window each side writes its messages while reading the
// other's; rank 1 then acknowledges the window, so that rank 0's clock
// stops when both directions have arrived. Bandwidth counts both
// directions' bytes.
func runBibw(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	if c.id.Rank > 1 {
		return nil, nil
	}
	peer := 1 - c.id.Rank
	m, err := openMesh(ctx, c, p.Kernel, hooks, []int{peer})
	if err != nil {
		return nil, err
	}
	defer m.close()
	l := m.links[peer]
	var samples []results.Sample
	buf := make([]byte, wireLen(maxOf(p.Sizes)))
	window := p.Window
	myOff, peerOff := 0, bibwOffset
	if m.rank == 1 {
		myOff, peerOff = bibwOffset, 0
	}
	for _, size := range p.Sizes {
		windows, warm := bwCounts(p, size)
		if err := tuneKernelConn(c, l.conn, peer, size); err != nil {
			return samples, err
		}
		pat := newPattern(size)
		rbuf := buf[:pat.n]
		total := (warm + windows) * window
		times := make([]time.Duration, 0, windows)
		for w := 0; w < warm+windows; w++ {
			t0 := time.Now()
			sent := make(chan error, 1)
			go func() {
				for j := 0; j < window; j++ {
					if err := l.send(pat.msg(w*window + j + myOff)); err != nil {
						sent <- err
						return
					}
				}
				sent <- nil
			}()
			var rerr error
			for j := 0; j < window && rerr == nil; j++ {
				i := w*window + j
				if rerr = l.recv(rbuf); rerr != nil {
					rerr = m.at(size, i, rerr)
					break
				}
				if rerr = m.got(size, i, rbuf); rerr != nil {
					break
				}
				if err := pat.verify(rbuf, i+peerOff, fullCheck(pat.n, i, total)); err != nil {
					rerr = m.corrupted(peer, size, i, err)
				}
			}
			if rerr != nil {
				l.conn.SetWriteDeadline(time.Unix(1, 0))
			}
			serr := <-sent
			if rerr != nil {
				return samples, rerr
			}
			if serr != nil {
				return samples, m.at(size, w*window, serr)
			}
			if m.rank == 1 {
				if err := l.ack(size, w, window); err != nil {
					return nil, err
				}
				continue
			}
			d, err := l.awaitAck(size, w, window, t0)
			if err != nil {
				return samples, err
			}
			if w >= warm {
				times = append(times, d)
			}
		}
		if m.rank == 0 {
			s := rateSample("bidirectional_bandwidth", size, 2*float64(size)*float64(window), times)
			s.Pair = []int{0, 1}
			samples = append(samples, s)
		}
	}
	return samples, nil
}

// rankPair is a sender and its receiver.
type rankPair struct{ from, to int }

// pairRanks pairs the ranks of a step whose rank r is on node nodeOf[r]:
//
//   - half: rank i with rank i+n/2; with ranks laid out by block on two
//     nodes, every pair crosses between them (systest's default, and
//     osu_mbw_mr's);
//   - intra: within each node, local rank i with local rank i+k/2 of k;
//   - inter: node j with node j+m/2 of m, local rank i with local rank i.
//
// A rank left over (an odd count) sits out. Pairs are in sender order.
func pairRanks(nodeOf []int, placement string) ([]rankPair, error) {
	n := len(nodeOf)
	var out []rankPair
	switch placement {
	case kernels.PlacementHalf, "":
		for i := 0; i < n/2; i++ {
			out = append(out, rankPair{i, i + n/2})
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("the pairs kernel needs 2 ranks; the step has %d", n)
		}
	case kernels.PlacementIntra:
		for _, ranks := range ranksByNode(nodeOf) {
			h := len(ranks) / 2
			for i := 0; i < h; i++ {
				out = append(out, rankPair{ranks[i], ranks[i+h]})
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("placement=intra pairs ranks within a node, and no node of the step has 2 ranks")
		}
	case kernels.PlacementInter:
		nodes := ranksByNode(nodeOf)
		h := len(nodes) / 2
		for j := 0; j < h; j++ {
			a, b := nodes[j], nodes[j+h]
			for i := 0; i < min(len(a), len(b)); i++ {
				out = append(out, rankPair{a[i], b[i]})
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("placement=inter pairs ranks of different nodes, and the step has %d node", len(nodes))
		}
	default:
		return nil, fmt.Errorf("unknown placement %q", placement)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].from < out[j].from })
	return out, nil
}

// sendersOn counts the pairs whose sender runs on node: the ranks there
// that splice at once, sharing one user's pipe pages.
func sendersOn(nodeOf []int, pairs []rankPair, node int) int {
	n := 0
	for _, pr := range pairs {
		if nodeOf[pr.from] == node {
			n++
		}
	}
	return n
}

func placementTag(nodeOf []int, p rankPair) string {
	if nodeOf[p.from] == nodeOf[p.to] {
		return "intra-node"
	}
	return "inter-node"
}

// runPairs streams between several pairs of ranks at once, as systest and
// osu_mbw_mr do: after a barrier, every sender streams windows to its
// receiver (as the bw kernel), then reports its window times to rank 0,
// which makes a sample per pair and the sums over pairs.
func runPairs(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	nodeOf := c.nodeOfRanks()
	pairs, err := pairRanks(nodeOf, p.Placement)
	if err != nil {
		return nil, err
	}
	me := c.id.Rank
	partner, sender := -1, false
	var peers []int
	for _, pr := range pairs {
		switch me {
		case pr.from:
			partner, sender = pr.to, true
		case pr.to:
			partner = pr.from
		}
		if me == 0 && pr.from != 0 {
			peers = append(peers, pr.from) // its reports
		}
	}
	if partner >= 0 {
		peers = append(peers, partner)
	}
	if sender && me != 0 {
		peers = append(peers, 0)
	}
	m, err := openMesh(ctx, c, p.Kernel, hooks, peers)
	if err != nil {
		return nil, err
	}
	defer m.close()
	m.sendMode = p.Send
	if sender && p.Send == SendSplice {
		m.pipeSize = splicePipeFor(sendersOn(nodeOf, pairs, nodeOf[me]), pipeUserPages())
	}
	var samples []results.Sample
	for _, size := range p.Sizes {
		windows, warm := bwCounts(p, size)
		// All pairs start together. Rank 0 waits the I/O timeout for the
		// others when it streams too (they do the same work); the others
		// wait for rank 0's word, whose watcher ends the wait if it goes.
		deadline := time.Time{}
		if me == 0 && partner >= 0 {
			deadline = time.Now().Add(c.ioTimeout)
		}
		if err := c.barrier(ctx, fmt.Sprintf("pairs %d", size), nil, deadline); err != nil {
			return samples, err
		}
		var times []time.Duration
		if partner >= 0 {
			if times, err = m.streamWindows(partner, size, windows, warm, p.Window, sender); err != nil {
				return samples, err
			}
		}
		if me != 0 {
			if sender {
				if err := m.report(size, seconds(times)); err != nil {
					return nil, m.at(size, 0, err)
				}
			}
			continue
		}
		var aggregate, rate float64
		kinds := map[string]bool{}
		for _, pr := range pairs {
			ts := times
			if pr.from != 0 {
				vals, err := m.collect(pr.from, size)
				if err != nil {
					return samples, m.at(size, 0, err)
				}
				ts = durations(vals)
			}
			s := rateSample("bandwidth", size, float64(size)*float64(p.Window), ts)
			kind := placementTag(nodeOf, pr)
			kinds[kind] = true
			s.Pair = []int{pr.from, pr.to}
			s.Tags = map[string]string{"placement": kind, "from": c.node(pr.from), "to": c.node(pr.to)}
			samples = append(samples, s)
			aggregate += s.Value
			var total time.Duration
			for _, d := range ts {
				total += max(d, time.Nanosecond)
			}
			if total > 0 {
				rate += float64(len(ts)*p.Window) / total.Seconds()
			}
		}
		tags := map[string]string{"pairs": strconv.Itoa(len(pairs)), "placement": "mixed"}
		if len(kinds) == 1 {
			for k := range kinds {
				tags["placement"] = k
			}
		}
		samples = append(samples,
			results.Sample{Metric: "aggregate_bandwidth", Unit: results.UnitMBps, X: results.F(float64(size)), XUnit: results.UnitBytes,
				Value: round(aggregate), Iterations: windows, Tags: tags},
			results.Sample{Metric: "message_rate", Unit: "messages/s", X: results.F(float64(size)), XUnit: results.UnitBytes,
				Value: round(rate), Iterations: windows, Tags: merge(nil, tags)})
	}
	return samples, nil
}

// bwCounts are the streaming kernels' windows for one size: bw's.
func bwCounts(p KernelParams, size int) (windows, warmup int) {
	p.Kernel = "bw"
	return p.Counts(size)
}
