package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"syscall"
	"time"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
)

// patternSpan is how many distinct messages of one size the pattern holds;
// prime, so that a message arriving out of place is unlikely to match.
const patternSpan = 251

// pattern is the content of every message of one size: message i is
// base[i%patternSpan:][:n]. Slicing one buffer costs nothing per message,
// yet the content changes with the size and the iteration.
type pattern struct {
	base []byte
	n    int
}

// wireLen is a message's length on the wire: TCP has no empty messages, so
// a 0-byte message travels as a 1-byte marker.
func wireLen(size int) int { return max(size, 1) }

func newPattern(size int) pattern {
	n := wireLen(size)
	base := make([]byte, n+patternSpan)
	x := uint64(size)*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D
	for i := range base {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		base[i] = byte(x >> 32)
	}
	return pattern{base: base, n: n}
}

func (p pattern) msg(i int) []byte {
	o := i % patternSpan
	return p.base[o : o+p.n]
}

// verify checks message i as received: first and last byte always, every
// byte when full is set.
func (p pattern) verify(buf []byte, i int, full bool) error {
	want := p.msg(i)
	if buf[0] == want[0] && buf[p.n-1] == want[p.n-1] && (!full || bytes.Equal(buf, want)) {
		return nil
	}
	k := 0
	for buf[k] == want[k] {
		k++
	}
	return fmt.Errorf("byte %d is 0x%02x, want 0x%02x", k, buf[k], want[k])
}

// fullCheck says whether message i of total gets a byte-by-byte check.
func fullCheck(n, i, total int) bool {
	return n <= 4096 || i < 2 || i%16 == 0 || i == total-1
}

// testHooks lets tests corrupt data and kill ranks at chosen points.
type testHooks struct {
	// received runs on every message as soon as it is read; it may change it.
	received func(rank, size, iter int, buf []byte)
	// die, when it returns true, makes the rank drop every connection and
	// return, as a killed process would.
	die func(rank, size, iter int) bool
	// slow delays every measured message rank reads from peer on a
	// mesh (pingPong, streamWindows) by what it returns: a slow link.
	// pass is the matrix kernel's (0 first, then the re-test's number; 0
	// for the other kernels).
	slow func(rank, peer, pass int) time.Duration
	// pipe runs when a spliced stream of a mesh kernel (pairs, matrix)
	// has asked for its pipe, with the capacity it got: 0 when the
	// system left it too small to splice through and the stream writes.
	pipe func(rank, capacity int)
}

var errDied = errors.New("killed by a test hook")

// peerReasonWait is how long a kernel whose peer closed the connection
// waits for the reason to arrive on the control connection.
const peerReasonWait = time.Second

// link is a kernel connection with deadlines: each operation must progress
// within the I/O timeout (so a peer that hangs, or a node that vanished
// without a reset, fails the run) and the whole run within the context.
//
// Its reads and writes go through fastConn (raw system calls, see
// fastio.go) when the connection has a file descriptor, busy-polling by
// default; setPoll chooses the mode.
type link struct {
	ctx       context.Context
	conn      tcpConn
	c         *comm
	peer      int
	ioTimeout time.Duration
	deadline  time.Time // of the context, zero for none
	lastSet   time.Time
	expires   time.Time // the socket's deadline, as refresh last set it
	stop      func() bool
	fast      *fastConn // nil: plain tcpConn I/O
}

func newLink(ctx context.Context, c *comm, conn tcpConn, peer int) *link {
	l := &link{ctx: ctx, conn: conn, c: c, peer: peer, ioTimeout: c.ioTimeout}
	l.deadline, _ = ctx.Deadline()
	// A cancelled run (signal, abort, a rank gone) interrupts blocked I/O.
	l.stop = context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	l.refresh(time.Now())
	l.fast, _ = newFastConn(conn, PollSpin, l.expired)
	return l
}

// setPoll chooses how the link waits for data (PollSpin, PollBlock). Block
// mode binds the calling goroutine to its thread until close: call it from
// the goroutine that does the link's I/O.
func (l *link) setPoll(mode string) error {
	if l.fast == nil || mode == "" || mode == PollSpin {
		return nil
	}
	f, err := newFastConn(l.conn, mode, l.expired)
	if err != nil {
		return err
	}
	l.fast = f
	return nil
}

// expired reports whether the link's deadline has passed or its run is
// over; block mode's system calls ask it between slices.
func (l *link) expired() bool {
	return ctxOver(l.ctx) || !time.Now().Before(l.expires)
}

// refresh moves the deadline forward: at most once a second (a deadline
// per message would cost more than a small message's transfer), and well
// before the last one expires.
func (l *link) refresh(now time.Time) {
	if now.Sub(l.lastSet) < min(time.Second, l.ioTimeout/4) {
		return
	}
	d := now.Add(l.ioTimeout)
	if !l.deadline.IsZero() && l.deadline.Before(d) {
		d = l.deadline
	}
	l.conn.SetDeadline(d)
	l.lastSet, l.expires = now, d
	// Cancelled meanwhile: AfterFunc's past deadline may just have been
	// overwritten; put it back.
	if l.ctx.Err() != nil {
		l.conn.SetDeadline(time.Unix(1, 0))
	}
}

func (l *link) close() {
	l.stop()
	if l.fast != nil {
		l.fast.close()
	}
}

// fail turns an I/O error into the run's error (see ioFailure).
func (l *link) fail(op string, err error) error {
	return ioFailure(l.ctx, l.deadline, op, l.c.who(l.peer), l.ioTimeout, err)
}

// ioFailure turns an I/O error with the peer who into the run's error: the
// cause of a cancelled run, or what happened to the peer. deadline is the
// run's (zero for none).
func ioFailure(ctx context.Context, deadline time.Time, op, who string, ioTimeout time.Duration, err error) error {
	if isTimeout(err) && !deadline.IsZero() && !time.Now().Before(deadline) {
		// The socket's deadline was the run's, and may expire a moment
		// before the context notices: the run's cause is the answer.
		<-ctx.Done()
	}
	if !isTimeout(err) && ctx.Err() == nil {
		// The peer closed the connection. If it failed, it said why on its
		// control connection, and if it died that connection closes too:
		// either way the watcher ends the run with a better reason, soon.
		t := time.NewTimer(peerReasonWait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if isTimeout(err) {
		return fmt.Errorf("%s %s: no progress for %s", op, who, ioTimeout)
	}
	return fmt.Errorf("%s %s: %s", op, who, describeIOError(err))
}

func (l *link) write(p []byte) error { return l.send(p, false) }

// stream sends p, a message that does not change until the peer has
// read it (the streaming kernels' pattern messages), as setSend chose.
func (l *link) stream(p []byte) error { return l.send(p, true) }

// send writes p, or streams it when stream is set.
func (l *link) send(p []byte, stream bool) error {
	var err error
	switch {
	case l.fast == nil:
		_, err = l.conn.Write(p)
	case stream:
		err = l.fast.stream(p)
	default:
		err = l.fast.write(p)
	}
	if err != nil {
		return l.fail("send to", err)
	}
	return nil
}

// setSend chooses how stream sends large messages (SendSplice,
// SendCopy); call it after setPoll.
func (l *link) setSend(mode string) error {
	if l.fast == nil || mode != SendSplice {
		return nil
	}
	return l.fast.enableSplice()
}

func (l *link) read(p []byte) error {
	var err error
	if l.fast != nil {
		err = l.fast.read(p)
	} else {
		_, err = io.ReadFull(l.conn, p)
	}
	if err != nil {
		return l.fail("receive from", err)
	}
	return nil
}

// intraNodeSendBuffer is the send buffer (SO_SNDBUF, which Linux doubles)
// of a kernel connection between two ranks of one node. Over loopback TCP's
// autotuning would grow it to megabytes, beyond a core's L2 cache, and every
// byte would be copied through memory instead of cache. Between nodes the
// buffer stays the kernel's. The measurements are in docs/performance.md.
const intraNodeSendBuffer = 128 << 10

// maxIntraNodeSendBuffer bounds intraNodeSendBufferFor (1 MiB as Linux
// doubles it).
const maxIntraNodeSendBuffer = 512 << 10

// intraNodeSendBufferFor is the send buffer of an intra-node connection
// for messages of size bytes: the message itself, within
// intraNodeSendBuffer and maxIntraNodeSendBuffer, so that a large message
// does not fill the buffer several times over. A connection gets it for
// size 0 when it is connected, and the streaming kernels' senders again
// before each size.
func intraNodeSendBufferFor(size int) int {
	return min(max(size, intraNodeSendBuffer), maxIntraNodeSendBuffer)
}

// tuneKernelConn prepares a kernel connection to peer for messages of
// size bytes (0 when it is connected): within a node, the send buffer of
// intraNodeSendBufferFor; between nodes it leaves the connection as it is.
func tuneKernelConn(c *comm, conn tcpConn, peer, size int) error {
	if !c.sameNode(peer) {
		return nil
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil // not a socket (a test's pipe): nothing to size
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("kernel connection to %s: %w", c.who(peer), err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, intraNodeSendBufferFor(size))
	}); err != nil {
		return fmt.Errorf("kernel connection to %s: %w", c.who(peer), err)
	}
	if serr != nil {
		return fmt.Errorf("kernel connection to %s: set its send buffer: %w", c.who(peer), serr)
	}
	return nil
}

// kernelFunc runs one rank's part of a kernel; only rank 0 returns
// samples, those measured before a failure included.
type kernelFunc func(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error)

// nativeKernel is the runner's side of a native kernel: its run
// function, and what it adds to rank 0's bundle once the run is over
// (finish; nil for nothing), failed or not.
type nativeKernel struct {
	run    kernelFunc
	finish func(b *results.Bundle, p KernelParams)
}

// kernelRuns are the native kernels, by the names of package kernels'
// table (a test holds the two to each other). latency and bw run over one
// link between ranks 0 and 1; the others over a mesh of kernel
// connections, each rank to the few peers its kernel needs
// (kernel_mesh.go).
var kernelRuns = map[string]nativeKernel{
	"latency":   {run: runPointToPoint},
	"bw":        {run: runPointToPoint},
	"bibw":      {run: runBibw},
	"pairs":     {run: runPairs},
	"matrix":    {run: runMatrix, finish: finishMatrix},
	"barrier":   {run: runBarrier},
	"allreduce": {run: runAllreduce},
	"alltoall":  {run: runAlltoall},
	"bcast":     {run: runBcast},
	"stream":    {run: runStream},
	"hpl":       {run: runHPL, finish: func(b *results.Bundle, _ KernelParams) { finishHPL(b) }},
}

// runKernel runs the configured kernel on this rank. Only rank 0 returns
// samples, including those measured before a failure.
func runKernel(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	k, known := kernels.Lookup(p.Kernel)
	nk, ok := kernelRuns[p.Kernel]
	if !known || !ok {
		return nil, fmt.Errorf("no native kernel %q (a bug in sbench-runner: Validate lets only known kernels run)", p.Kernel)
	}
	if c.id.Size < k.MinRanks {
		return nil, fmt.Errorf("the %s kernel needs %d ranks; the step has %d", p.Kernel, k.MinRanks, c.id.Size)
	}
	return nk.run(ctx, c, p, hooks)
}

// runPointToPoint runs latency or bw: ranks 0 and 1 measure; the others
// have nothing to do until the final barrier.
func runPointToPoint(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	if c.id.Rank > 1 {
		return nil, nil
	}
	peer := 1 - c.id.Rank
	conn, err := c.connect(ctx, peer)
	if err != nil {
		return nil, err
	}
	if err := tuneKernelConn(c, conn, peer, 0); err != nil {
		return nil, err
	}
	l := newLink(ctx, c, conn, peer)
	defer l.close()
	if err := l.setPoll(p.Poll); err != nil {
		return nil, err
	}
	if p.Kernel == "bw" && c.id.Rank == 0 {
		if err := l.setSend(p.Send); err != nil {
			return nil, err
		}
	}
	if hooks == nil {
		hooks = &testHooks{}
	}
	k := kernelRun{l: l, p: p, hooks: hooks, rank: c.id.Rank, c: c}
	if p.Kernel == "bw" {
		return k.bandwidth()
	}
	return k.latency()
}

type kernelRun struct {
	l     *link
	c     *comm
	p     KernelParams
	hooks *testHooks
	rank  int
}

// apply runs the hooks on a message rank just read: received sees (or
// corrupts) it, die may kill the rank there.
func (h *testHooks) apply(c *comm, rank, size, iter int, buf []byte) error {
	if h.received != nil {
		h.received(rank, size, iter, buf)
	}
	if h.die != nil && h.die(rank, size, iter) {
		c.kill()
		return errDied
	}
	return nil
}

// check applies the test hooks to message i of total just read into buf,
// then checks it against pat.
func (k *kernelRun) check(pat pattern, buf []byte, size, i, total int) error {
	if err := k.hooks.apply(k.c, k.rank, size, i, buf); err != nil {
		return err
	}
	if err := pat.verify(buf, i, fullCheck(pat.n, i, total)); err != nil {
		return k.corrupted(size, i, err)
	}
	return nil
}

func (k *kernelRun) corrupted(size, iter int, err error) error {
	return fmt.Errorf("%s kernel: data from %s corrupted: %d-byte message, iteration %d: %w",
		k.p.Kernel, k.c.who(1-k.rank), size, iter, err)
}

// latency is the ping-pong: rank 0 sends and times, rank 1 echoes.
func (k *kernelRun) latency() ([]results.Sample, error) {
	var samples []results.Sample
	buf := make([]byte, wireLen(maxOf(k.p.Sizes)))
	for _, size := range k.p.Sizes {
		iters, warm := k.p.Counts(size)
		pat := newPattern(size)
		rbuf := buf[:pat.n]
		total := warm + iters
		times := make([]time.Duration, 0, min(iters, 1<<16))
		for i := 0; i < total; i++ {
			if k.rank == 0 {
				t0 := time.Now()
				k.l.refresh(t0)
				if err := k.l.write(pat.msg(i)); err != nil {
					return samples, k.at(size, i, err)
				}
				if err := k.l.read(rbuf); err != nil {
					return samples, k.at(size, i, err)
				}
				d := time.Since(t0)
				if err := k.check(pat, rbuf, size, i, total); err != nil {
					return samples, err
				}
				if i >= warm {
					times = append(times, d)
				}
				continue
			}
			k.l.refresh(time.Now())
			if err := k.l.read(rbuf); err != nil {
				return nil, k.at(size, i, err)
			}
			if err := k.check(pat, rbuf, size, i, total); err != nil {
				return nil, err
			}
			if err := k.l.write(rbuf); err != nil {
				return nil, k.at(size, i, err)
			}
		}
		if k.rank == 0 {
			samples = append(samples, latencySample(size, times))
		}
	}
	return samples, nil
}

// bandwidth streams windows: rank 0 writes a window of messages back to
// back and waits for rank 1's one-byte acknowledgement of the window.
func (k *kernelRun) bandwidth() ([]results.Sample, error) {
	var samples []results.Sample
	buf := make([]byte, wireLen(maxOf(k.p.Sizes)))
	window := k.p.Window
	var ack [1]byte
	var pending inFlight // splice.go
	defer pending.abandonIfSet()
	for _, size := range k.p.Sizes {
		iters, warm := k.p.Counts(size)
		pat := newPattern(size)
		if k.rank == 0 && k.l.fast != nil && k.l.fast.pipe != nil {
			pending.buf = pat.base
		}
		rbuf := buf[:pat.n]
		total := (warm + iters) * window
		if k.rank == 0 {
			if err := tuneKernelConn(k.l.c, k.l.conn, k.l.peer, size); err != nil {
				return samples, err
			}
		}
		times := make([]time.Duration, 0, min(iters, 1<<16))
		for w := 0; w < warm+iters; w++ {
			if k.rank == 0 {
				t0 := time.Now()
				k.l.refresh(t0)
				for j := 0; j < window; j++ {
					if err := k.l.stream(pat.msg(w*window + j)); err != nil {
						return samples, k.at(size, w*window+j, err)
					}
				}
				if err := k.l.read(ack[:]); err != nil {
					return samples, k.at(size, w*window, err)
				}
				d := time.Since(t0)
				if ack[0] != byte(w) {
					return samples, k.corrupted(size, w*window, fmt.Errorf("acknowledgement of window %d reads %d", w, ack[0]))
				}
				if w >= warm {
					times = append(times, d)
				}
				continue
			}
			for j := 0; j < window; j++ {
				i := w*window + j
				k.l.refresh(time.Now())
				if err := k.l.read(rbuf); err != nil {
					return nil, k.at(size, i, err)
				}
				if err := k.check(pat, rbuf, size, i, total); err != nil {
					return nil, err
				}
			}
			ack[0] = byte(w)
			if err := k.l.write(ack[:]); err != nil {
				return nil, k.at(size, w*window, err)
			}
		}
		// The last acknowledgement says the receiver has read every spliced
		// page of pat.
		pending.buf = nil
		if k.rank == 0 {
			samples = append(samples, bandwidthSample(size, window, times))
		}
	}
	return samples, nil
}

// at places an I/O error in the sweep, unless it is the run's cause (a
// signal, another rank's failure), which stands on its own.
func (k *kernelRun) at(size, iter int, err error) error {
	if k.l.ctx.Err() != nil {
		return context.Cause(k.l.ctx)
	}
	return fmt.Errorf("%s kernel at %d bytes, iteration %d: %w", k.p.Kernel, size, iter, err)
}

func latencySample(size int, times []time.Duration) results.Sample {
	s := oneWayLatency(times)
	s.Metric, s.Unit = "latency", results.UnitMicroseconds
	s.X, s.XUnit = results.F(float64(size)), results.UnitBytes
	s.Pair = []int{0, 1}
	return s
}

func bandwidthSample(size, window int, times []time.Duration) results.Sample {
	s := rateSample("bandwidth", size, float64(size)*float64(window), times)
	s.Pair = []int{0, 1}
	return s
}

// summarize returns a sample with the mean as value and the order
// statistics of xs, rounded so that bundles do not carry noise digits.
func summarize(xs []float64) results.Sample {
	if len(xs) == 0 {
		return results.Sample{}
	}
	sorted := slices.Sorted(slices.Values(xs))
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return results.Sample{
		Value:      round(sum / float64(len(xs))),
		Min:        results.F(round(sorted[0])),
		Max:        results.F(round(sorted[len(sorted)-1])),
		P50:        results.F(round(percentile(sorted, 0.50))),
		P99:        results.F(round(percentile(sorted, 0.99))),
		Iterations: len(xs),
	}
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// round keeps 6 significant digits: more than any timer here resolves.
func round(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	p := math.Pow(10, 5-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// maxOf is the largest of xs, 0 for none.
func maxOf(xs []int) int { return slices.Max(append([]int{0}, xs...)) }
