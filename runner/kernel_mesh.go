package runner

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/sbench/sbench/results"
)

// syncSendMax is the largest message an exchange writes before it reads:
// both ends of an exchange fit that much in the kernel's socket buffers,
// so neither blocks, and a goroutine per message would cost more than the
// message. Larger messages are written by a goroutine while we read.
const syncSendMax = 4096

// mesh is one rank's kernel connections, by peer rank. Reads and writes on
// one connection may run at once (an exchange with the same peer), each
// with its own deadline.
type mesh struct {
	ctx    context.Context
	c      *comm
	kernel string
	hooks  *testHooks
	rank   int
	links  map[int]*plink
	// deadline is the run's, zero for none; every socket deadline stops
	// there.
	deadline time.Time
	// refreshEvery is how often a deadline moves forward: at most once a
	// second (a deadline per message would cost more than a small
	// message's transfer) and well before the last one expires.
	refreshEvery time.Duration
	// pass is the matrix kernel's pass (0 first, then the re-test's
	// number), for the test hooks.
	pass int
	// sendMode is how streams hand their messages to TCP (the send
	// parameter of the streaming kernels; "" writes), pipeSize the
	// capacity a spliced stream asks of its pipe.
	sendMode string
	pipeSize int
}

// openMesh connects this rank to peers, all at once (the higher rank of a
// pair dials, the lower accepts). Both ranks of a pair must list each
// other.
func openMesh(ctx context.Context, c *comm, kernel string, hooks *testHooks, peers []int) (*mesh, error) {
	if hooks == nil {
		hooks = &testHooks{}
	}
	m := &mesh{ctx: ctx, c: c, kernel: kernel, hooks: hooks, rank: c.id.Rank, links: map[int]*plink{},
		refreshEvery: min(time.Second, c.ioTimeout/4), pipeSize: splicePipeSize}
	m.deadline, _ = ctx.Deadline()
	peers = uniqueRanks(peers, c.id.Rank)
	type result struct {
		conn tcpConn
		err  error
	}
	res := make([]result, len(peers))
	done := make(chan struct{}, len(peers))
	for i, p := range peers {
		go func() {
			conn, err := c.connect(ctx, p)
			res[i] = result{conn, err}
			done <- struct{}{}
		}()
	}
	for range peers {
		<-done
	}
	var first error
	for i, p := range peers {
		if res[i].err != nil {
			if first == nil {
				first = res[i].err
			}
			continue
		}
		if err := tuneKernelConn(c, res[i].conn, p, 0); err != nil && first == nil {
			first = err
		}
		m.links[p] = newPlink(m, res[i].conn, p)
	}
	if first != nil {
		m.close()
		return nil, first
	}
	return m, nil
}

// uniqueRanks sorts ranks and drops repeats and self.
func uniqueRanks(ranks []int, self int) []int {
	out := slices.Compact(slices.Sorted(slices.Values(ranks)))
	return slices.DeleteFunc(out, func(r int) bool { return r == self })
}

// close stops watching the run's context. The connections stay open until
// the run ends: closing a socket with data still unread would reset it
// under a peer that has not read its last message yet.
func (m *mesh) close() {
	for _, l := range m.links {
		l.stop()
	}
}

// link returns the connection to peer; a kernel asking for one it did not
// open is a bug of the kernel's, reported as an error.
func (m *mesh) link(peer int) (*plink, error) {
	if l, ok := m.links[peer]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("%s kernel: rank %d has no connection to rank %d (a bug in sbench-runner)", m.kernel, m.rank, peer)
}

// got applies the test hooks to a message just read.
func (m *mesh) got(size, iter int, buf []byte) error {
	return m.hooks.apply(m.c, m.rank, size, iter, buf)
}

// arrived applies the test hooks to a measured message just read from
// peer: a slow link's delay first.
func (m *mesh) arrived(peer, size, iter int, buf []byte) error {
	if m.hooks.slow != nil {
		if d := m.hooks.slow(m.rank, peer, m.pass); d > 0 {
			time.Sleep(d)
		}
	}
	return m.got(size, iter, buf)
}

// at places an error in the sweep, unless it is the run's cause (a signal,
// another rank's failure), which stands on its own.
func (m *mesh) at(size, iter int, err error) error {
	if m.ctx.Err() != nil {
		return context.Cause(m.ctx)
	}
	if err == errDied {
		return err
	}
	return fmt.Errorf("%s kernel at %d bytes, iteration %d: %w", m.kernel, size, iter, err)
}

// corrupted reports data from peer that is not what was sent.
func (m *mesh) corrupted(peer, size, iter int, err error) error {
	return fmt.Errorf("%s kernel: data from %s corrupted: %d-byte message, iteration %d: %w",
		m.kernel, m.c.who(peer), size, iter, err)
}

// ioError turns an I/O error with peer into the run's error (see
// ioFailure).
func (m *mesh) ioError(op string, peer int, err error) error {
	return ioFailure(m.ctx, m.deadline, op, m.c.who(peer), m.c.ioTimeout, err)
}

// expiry is the deadline of an operation starting now.
func (m *mesh) expiry(now time.Time) time.Time {
	d := now.Add(m.c.ioTimeout)
	if !m.deadline.IsZero() && m.deadline.Before(d) {
		d = m.deadline
	}
	return d
}

// plink is one kernel connection of a mesh.
type plink struct {
	m    *mesh
	conn tcpConn
	peer int
	// When the read and the write deadline last moved; each is touched
	// only by the goroutine reading, or writing.
	rset, wset time.Time
	// The window acknowledgement read, and the one written.
	rack, wack [1]byte
	stop       func() bool
}

func newPlink(m *mesh, conn tcpConn, peer int) *plink {
	l := &plink{m: m, conn: conn, peer: peer}
	// A cancelled run (signal, abort, a rank gone) interrupts blocked I/O.
	l.stop = context.AfterFunc(m.ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	return l
}

func (l *plink) send(p []byte) error {
	l.refresh(true)
	if _, err := l.conn.Write(p); err != nil {
		return l.m.ioError("send to", l.peer, err)
	}
	return nil
}

// refresh moves the write (or read) deadline forward, at most every
// refreshEvery.
func (l *plink) refresh(write bool) {
	last := &l.rset
	if write {
		last = &l.wset
	}
	now := time.Now()
	if now.Sub(*last) < l.m.refreshEvery {
		return
	}
	if write {
		l.conn.SetWriteDeadline(l.m.expiry(now))
	} else {
		l.conn.SetReadDeadline(l.m.expiry(now))
	}
	*last = now
	if l.m.ctx.Err() != nil { // AfterFunc's past deadline may just have been overwritten
		l.conn.SetDeadline(time.Unix(1, 0))
	}
}

// streamer is what sends one stream's pattern messages of size bytes to
// the peer, as the mesh's sendMode says (splice.go): nil writes them. Its
// pipe is the stream's own, closed by its close when the stream ends, so
// that a rank streaming to many peers in turn (matrix) holds one at a
// time.
func (l *plink) streamer(size int) (*fastConn, error) {
	if l.m.sendMode != SendSplice || wireLen(size) < spliceMin {
		return nil, nil
	}
	f, err := newFastConn(l.conn, PollSpin, func() bool { return false })
	if err != nil {
		return nil, nil // not a socket (a test's pipe): nothing to splice into
	}
	if err := f.enableSpliceSized(l.m.pipeSize); err != nil {
		return nil, l.m.ioError("send to", l.peer, err)
	}
	if l.m.hooks.pipe != nil {
		got := 0
		if f.pipe != nil {
			got = f.pipe.capacity
		}
		l.m.hooks.pipe(l.m.rank, got)
	}
	return f, nil
}

// stream sends p, a pattern message, through f (nil: as send does). The
// netpoller keeps the write deadline, as for send.
func (l *plink) stream(f *fastConn, p []byte) error {
	if f == nil {
		return l.send(p)
	}
	l.refresh(true)
	if err := f.stream(p); err != nil {
		return l.m.ioError("send to", l.peer, err)
	}
	return nil
}

func (l *plink) recv(p []byte) error {
	l.refresh(false)
	if _, err := io.ReadFull(l.conn, p); err != nil {
		return l.m.ioError("receive from", l.peer, err)
	}
	return nil
}

// send writes p to peer.
func (m *mesh) send(peer int, p []byte) error {
	l, err := m.link(peer)
	if err != nil {
		return err
	}
	return l.send(p)
}

// recv reads len(p) bytes from peer.
func (m *mesh) recv(peer int, p []byte) error {
	l, err := m.link(peer)
	if err != nil {
		return err
	}
	return l.recv(p)
}

// exchange sends out to one peer while receiving in from another (or the
// same), as MPI_Sendrecv does: neither side waits for the other to read
// first, so two ranks exchanging large messages cannot deadlock.
func (m *mesh) exchange(to int, out []byte, from int, in []byte) error {
	lt, err := m.link(to)
	if err != nil {
		return err
	}
	lf, err := m.link(from)
	if err != nil {
		return err
	}
	if len(out) <= syncSendMax {
		if err := lt.send(out); err != nil {
			return err
		}
		return lf.recv(in)
	}
	sent := make(chan error, 1)
	go func() { sent <- lt.send(out) }()
	rerr := lf.recv(in)
	if rerr != nil {
		lt.conn.SetWriteDeadline(time.Unix(1, 0)) // the exchange is over: stop the send
	}
	serr := <-sent
	if rerr != nil {
		return rerr
	}
	return serr
}

// barrier is a dissemination barrier over group (ranks, in an order every
// member agrees on), me being this rank's index in it: in round k each
// member signals the one 2^k after it and waits for the one 2^k before,
// so that after ⌈log2 n⌉ rounds every member has heard, indirectly, from
// every other. seq numbers the barrier; its low byte and the round travel
// in the message, so that a message of another barrier is an error.
func (m *mesh) barrier(group []int, me, seq int) error {
	n := len(group)
	var out, in [2]byte
	round := 0
	for k := 1; k < n; k <<= 1 {
		to, from := group[(me+k)%n], group[(me-k%n+n)%n]
		out[0], out[1] = byte(seq), byte(round)
		if err := m.exchange(to, out[:], from, in[:]); err != nil {
			return err
		}
		if in != out {
			return fmt.Errorf("%s kernel: barrier %d, round %d: %s sent barrier %d's round %d", m.kernel, seq, round, m.c.who(from), in[0], in[1])
		}
		round++
	}
	return nil
}

// disseminationPeers are the ranks a member of group talks to in barrier.
func disseminationPeers(group []int, me int) []int {
	n := len(group)
	var out []int
	for k := 1; k < n; k <<= 1 {
		out = append(out, group[(me+k)%n], group[(me-k%n+n)%n])
	}
	return out
}

// Reports carry a rank's measurements to rank 0 on their kernel
// connection, after the measurement: a tag saying which measurement (both
// sides know it, so a report out of step is an error), a count, and the
// values as float64 bits, little-endian.
const maxReportValues = 1 << 24

// report sends values to rank 0.
func (m *mesh) report(tag int, vals []float64) error {
	buf := make([]byte, 16+8*len(vals))
	binary.LittleEndian.PutUint64(buf, uint64(tag))
	binary.LittleEndian.PutUint64(buf[8:], uint64(len(vals)))
	for i, v := range vals {
		binary.LittleEndian.PutUint64(buf[16+8*i:], math.Float64bits(v))
	}
	return m.send(0, buf)
}

// collect reads rank from's report of measurement tag, on rank 0.
func (m *mesh) collect(from, tag int) ([]float64, error) {
	var hdr [16]byte
	if err := m.recv(from, hdr[:]); err != nil {
		return nil, err
	}
	gotTag, n := binary.LittleEndian.Uint64(hdr[:]), binary.LittleEndian.Uint64(hdr[8:])
	if gotTag != uint64(tag) || n > maxReportValues {
		return nil, fmt.Errorf("%s kernel: %s reported measurement %d with %d values, want measurement %d", m.kernel, m.c.who(from), gotTag, n, tag)
	}
	buf := make([]byte, 8*n)
	if err := m.recv(from, buf); err != nil {
		return nil, err
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
	}
	return vals, nil
}

// pingPong times round trips with peer at one size: the initiator sends
// and times, the other echoes. Every message is checked as the latency
// kernel checks it. Only the initiator's times are returned.
func (m *mesh) pingPong(peer, size, iters, warm int, initiator bool) ([]time.Duration, error) {
	l, err := m.link(peer)
	if err != nil {
		return nil, err
	}
	pat := newPattern(size)
	buf := make([]byte, pat.n)
	total := warm + iters
	var times []time.Duration
	if initiator {
		times = make([]time.Duration, 0, iters)
	}
	for i := 0; i < total; i++ {
		var t0 time.Time
		if initiator {
			t0 = time.Now()
			if err := l.send(pat.msg(i)); err != nil {
				return times, m.at(size, i, err)
			}
		}
		if err := l.recv(buf); err != nil {
			return times, m.at(size, i, err)
		}
		d := time.Since(t0)
		if err := m.arrived(peer, size, i, buf); err != nil {
			return times, err
		}
		if err := pat.verify(buf, i, fullCheck(pat.n, i, total)); err != nil {
			return times, m.corrupted(peer, size, i, err)
		}
		if !initiator {
			if err := l.send(buf); err != nil {
				return times, m.at(size, i, err)
			}
			continue
		}
		if i >= warm {
			times = append(times, d)
		}
	}
	return times, nil
}

// streamWindows streams windows of messages to peer, as the bw kernel
// does: the sender writes a window back to back and waits for the
// receiver's one-byte acknowledgement of it. Only the sender's times (one
// per timed window) are returned.
func (m *mesh) streamWindows(peer, size, windows, warm, window int, sender bool) ([]time.Duration, error) {
	l, err := m.link(peer)
	if err != nil {
		return nil, err
	}
	pat := newPattern(size)
	total := (warm + windows) * window
	var times []time.Duration
	var buf []byte
	var out *fastConn
	var pending inFlight // splice.go
	defer pending.abandonIfSet()
	if sender {
		if err := tuneKernelConn(m.c, l.conn, peer, size); err != nil {
			return nil, err
		}
		if out, err = l.streamer(size); err != nil {
			return nil, err
		}
		if out != nil {
			defer out.close()
			pending.buf = pat.base
		}
		times = make([]time.Duration, 0, windows)
	} else {
		buf = make([]byte, pat.n)
	}
	for w := 0; w < warm+windows; w++ {
		if sender {
			t0 := time.Now()
			for j := 0; j < window; j++ {
				if err := l.stream(out, pat.msg(w*window+j)); err != nil {
					return times, m.at(size, w*window+j, err)
				}
			}
			d, err := l.awaitAck(size, w, window, t0)
			if err != nil {
				return times, err
			}
			if w >= warm {
				times = append(times, d)
			}
			continue
		}
		for j := 0; j < window; j++ {
			i := w*window + j
			if err := l.recv(buf); err != nil {
				return nil, m.at(size, i, err)
			}
			if err := m.arrived(peer, size, i, buf); err != nil {
				return nil, err
			}
			if err := pat.verify(buf, i, fullCheck(pat.n, i, total)); err != nil {
				return nil, m.corrupted(peer, size, i, err)
			}
		}
		if err := l.ack(size, w, window); err != nil {
			return nil, err
		}
	}
	// The last acknowledgement says the receiver has read every spliced
	// page of pat.
	pending.buf = nil
	return times, nil
}

// ack acknowledges window w of size-byte messages to the sender, with
// one byte: the window's number, mod 256.
func (l *plink) ack(size, w, window int) error {
	l.wack[0] = byte(w)
	if err := l.send(l.wack[:]); err != nil {
		return l.m.at(size, w*window, err)
	}
	return nil
}

// awaitAck waits for the peer's acknowledgement of window w and returns
// the time since t0 at which it came.
func (l *plink) awaitAck(size, w, window int, t0 time.Time) (time.Duration, error) {
	if err := l.recv(l.rack[:]); err != nil {
		return 0, l.m.at(size, w*window, err)
	}
	d := time.Since(t0)
	if l.rack[0] != byte(w) {
		return 0, l.m.corrupted(l.peer, size, w*window, fmt.Errorf("acknowledgement of window %d reads %d", w, l.rack[0]))
	}
	return d, nil
}

// rateSample is a bandwidth sample over windows of bytesPerWindow: the
// value is all bytes over all time (as osu_bw counts), min/max/p50/p99
// are over windows, in MB/s (10^6 bytes per second).
func rateSample(metric string, size int, bytesPerWindow float64, times []time.Duration) results.Sample {
	rates := make([]float64, len(times))
	var total time.Duration
	for i, d := range times {
		d = max(d, time.Nanosecond) // a coarse clock must not divide by zero
		rates[i] = bytesPerWindow / d.Seconds() / 1e6
		total += d
	}
	s := summarize(rates)
	if total > 0 {
		s.Value = round(bytesPerWindow * float64(len(times)) / total.Seconds() / 1e6)
	}
	s.Metric, s.Unit = metric, results.UnitMBps
	s.X, s.XUnit = results.F(float64(size)), results.UnitBytes
	return s
}

// seconds converts durations for a report.
func seconds(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

// durations converts a report's seconds back.
func durations(xs []float64) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x * 1e9)
	}
	return out
}

// nodeOfRanks returns every rank's node index, from the bootstrap's table.
func (c *comm) nodeOfRanks() []int {
	out := make([]int, len(c.members))
	for r, mb := range c.members {
		out[r] = mb.NodeIndex
	}
	return out
}

// sameNode reports whether peer runs on this rank's node.
func (c *comm) sameNode(peer int) bool {
	return c.members[peer].NodeIndex == c.members[c.id.Rank].NodeIndex
}

// ranksByNode lists the ranks of each node in rank order, nodes in index
// order (nodes without ranks left out).
func ranksByNode(nodeOf []int) [][]int {
	byNode := map[int][]int{}
	for r, n := range nodeOf {
		byNode[n] = append(byNode[n], r)
	}
	idx := slices.Sorted(maps.Keys(byNode))
	out := make([][]int, len(idx))
	for i, n := range idx {
		out[i] = byNode[n]
	}
	return out
}

func allRanks(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
