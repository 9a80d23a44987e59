package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

var pollModes = []string{PollSpin, PollBlock}

// tcpPair returns both ends of a loopback TCP connection, made as the
// kernels' connections are (listen, dialTCP).
func tcpPair(t testing.TB) (a, b *net.TCPConn) {
	t.Helper()
	ln, addrs, err := listen("127.0.0.1", &logger{w: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan *net.TCPConn, 1)
	go func() {
		c, err := ln.AcceptTCP()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	a, err = dialTCP(context.Background(), netip.MustParseAddrPort(addrs[0]), time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b = <-accepted
	if b == nil {
		t.FailNow()
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// testLink is rank 0's end of a kernel connection to rank 1 on node n2.
func testLink(t testing.TB, ctx context.Context, conn tcpConn, mode string, ioTimeout time.Duration) *link {
	t.Helper()
	c := &comm{
		id:        Identity{Rank: 0, Size: 2, NodeName: "n1", Nodes: []string{"n1", "n2"}, NodeIndex: 0},
		members:   []member{{Rank: 0, Node: "n1"}, {Rank: 1, Node: "n2"}},
		ioTimeout: ioTimeout,
	}
	l := newLink(ctx, c, conn, 1)
	if err := l.setPoll(mode); err != nil {
		t.Fatal(err)
	}
	if l.fast == nil {
		t.Fatal("a TCP link does not use the fast path")
	}
	return l
}

// echo reads messages of n bytes from conn and sends them back, until
// conn closes.
func echo(conn tcpConn, n int) {
	buf := make([]byte, n)
	for {
		if _, err := io.ReadFull(conn, buf); err != nil {
			return
		}
		if _, err := conn.Write(buf); err != nil {
			return
		}
	}
}

func TestFastIORoundTrip(t *testing.T) {
	for _, mode := range pollModes {
		// Sizes past the socket buffers need partial reads and writes,
		// and waits for the peer in both directions.
		for _, size := range []int{1, 4096, 1 << 20, 8 << 20} {
			t.Run(fmt.Sprintf("%s/%d", mode, size), func(t *testing.T) {
				a, b := tcpPair(t)
				go echo(b, size)
				l := testLink(t, context.Background(), a, mode, 5*time.Second)
				defer l.close()
				pat := newPattern(size)
				got := make([]byte, size)
				for i := 0; i < 3; i++ {
					if err := l.write(pat.msg(i)); err != nil {
						t.Fatal(err)
					}
					if err := l.read(got); err != nil {
						t.Fatal(err)
					}
					if err := pat.verify(got, i, true); err != nil {
						t.Fatalf("message %d: %v", i, err)
					}
				}
			})
		}
	}
}

func TestFastIOPeerCloses(t *testing.T) {
	for _, mode := range pollModes {
		for _, tt := range []struct {
			name string
			sent int // bytes of the 4096-byte message the peer sends before closing
		}{{"before the message", 0}, {"within the message", 1000}} {
			t.Run(mode+"/read/"+tt.name, func(t *testing.T) {
				a, b := tcpPair(t)
				go func() {
					b.Write(make([]byte, tt.sent))
					b.Close()
				}()
				// The I/O timeout is long enough that a wait for it shows
				// even on a busy machine.
				l := testLink(t, context.Background(), a, mode, time.Minute)
				defer l.close()
				start := time.Now()
				err := l.read(make([]byte, 4096))
				want := "receive from rank 1 (node n2): connection closed (the process exited or was killed)"
				if err == nil || err.Error() != want {
					t.Fatalf("error %v, want %q", err, want)
				}
				// The link waits peerReasonWait for a better reason from the
				// control connection, and not for the I/O timeout.
				if took := time.Since(start); took > peerReasonWait+20*time.Second {
					t.Errorf("took %s", took)
				}
			})
		}
		t.Run(mode+"/write", func(t *testing.T) {
			a, b := tcpPair(t)
			b.Close()
			l := testLink(t, context.Background(), a, mode, 5*time.Second)
			defer l.close()
			// The first write may still land in the socket's buffer; the
			// peer's reset fails the next ones.
			var err error
			for i := 0; i < 100 && err == nil; i++ {
				err = l.write(make([]byte, 4096))
			}
			want := "send to rank 1 (node n2): connection closed (the process exited or was killed)"
			if err == nil || err.Error() != want {
				t.Errorf("error %v, want %q", err, want)
			}
		})
	}
}

// restartDeadline sets l's deadline to the I/O timeout from now, as the
// kernels' refresh does before a message: a test's deadline runs from the
// call it tests, not from the link's creation, which a busy machine may
// have left behind by more than the timeout.
func restartDeadline(l *link) {
	l.lastSet = time.Time{}
	l.refresh(time.Now())
}

// checkGaveUp checks that err, returned at end, is the I/O timeout's
// error want, and came no earlier than the link's deadline. A busy
// machine may make it late: the upper bound only catches a wait that
// never ends (or ends with the context, minutes later).
func checkGaveUp(t *testing.T, l *link, err error, end time.Time, want string) {
	t.Helper()
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
	if end.Before(l.expires) {
		t.Errorf("gave up %s before the deadline", l.expires.Sub(end))
	}
	if late := end.Sub(l.expires); late > 20*time.Second {
		t.Errorf("gave up %s after the deadline", late)
	}
}

func TestFastIOPeerStalls(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, mode := range pollModes {
		t.Run(mode+"/read", func(t *testing.T) {
			a, b := tcpPair(t)
			b.Write([]byte("x")) // a part of the message, then nothing
			l := testLink(t, context.Background(), a, mode, timeout)
			defer l.close()
			restartDeadline(l)
			err := l.read(make([]byte, 2))
			checkGaveUp(t, l, err, time.Now(), "receive from rank 1 (node n2): no progress for 300ms")
		})
		// A spliced stream (splice.go) gives up as a write does.
		for _, spliced := range []bool{false, true} {
			name := mode + "/write"
			if spliced {
				name = mode + "/stream, spliced"
			}
			t.Run(name, func(t *testing.T) {
				a, _ := tcpPair(t) // the peer never reads: the buffers fill up
				msg := make([]byte, 64<<20)
				l := testLink(t, context.Background(), a, mode, timeout)
				defer l.close()
				send := l.write
				if spliced {
					enableSplice(t, l)
					send = l.stream
				}
				// Before, the deadline ran from testLink, and the 64 MiB
				// message was made after it: on a busy machine that took
				// longer than the timeout, the send gave up before its first
				// system call, and nothing went through the pipe.
				restartDeadline(l)
				err := send(msg)
				checkGaveUp(t, l, err, time.Now(), "send to rank 1 (node n2): no progress for 300ms")
				if spliced && l.fast.pipe.spliced == 0 {
					t.Error("nothing went through the pipe")
				}
			})
		}
	}
}

func TestFastIOContextEndsAWait(t *testing.T) {
	for _, mode := range pollModes {
		t.Run(mode, func(t *testing.T) {
			a, _ := tcpPair(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			l := testLink(t, ctx, a, mode, time.Minute)
			defer l.close()
			cause := errors.New("rank 0 aborted the run: rank 3 failed")
			var cancelled atomic.Int64
			time.AfterFunc(100*time.Millisecond, func() {
				cancelled.Store(time.Now().UnixNano())
				cancel(cause)
			})
			err := l.read(make([]byte, 1))
			if err != cause {
				t.Errorf("error %v, want the run's cause", err)
			}
			// Not the I/O timeout's minute; a busy machine may make it
			// later than blockSlice.
			if took := time.Since(time.Unix(0, cancelled.Load())); took > 20*time.Second {
				t.Errorf("took %s to notice the cancellation", took)
			}
		})
	}
}

// TestFastIOBlockModeRestoresTheSocket: after the kernel, Go's own I/O
// (and its netpoller) must find the descriptor as it left it.
func TestFastIOBlockModeRestoresTheSocket(t *testing.T) {
	a, _ := tcpPair(t)
	nonblocking := func() bool {
		rc, err := a.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var flags int
		rc.Control(func(fd uintptr) {
			r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
			if e != 0 {
				t.Fatal(e)
			}
			flags = int(r)
		})
		return flags&syscall.O_NONBLOCK != 0
	}
	l := testLink(t, context.Background(), a, PollBlock, time.Minute)
	if nonblocking() {
		t.Error("block mode left the socket non-blocking")
	}
	l.close()
	if !nonblocking() {
		t.Error("the socket stayed blocking after the link closed")
	}
	a.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := a.Read(make([]byte, 1)); !isTimeout(err) {
		t.Errorf("Go's read after the link: %v, want its deadline", err)
	}
}

// TestFastIODoesNotAllocate: the timed loop must not feed the garbage
// collector, whose pauses would land in the percentiles.
func TestFastIODoesNotAllocate(t *testing.T) {
	for _, mode := range pollModes {
		t.Run(mode, func(t *testing.T) {
			a, b := tcpPair(t)
			go echo(b, 8)
			l := testLink(t, context.Background(), a, mode, time.Minute)
			defer l.close()
			msg, got := []byte("12345678"), make([]byte, 8)
			allocs := testing.AllocsPerRun(1000, func() {
				l.refresh(time.Now())
				if err := l.write(msg); err != nil {
					t.Fatal(err)
				}
				if err := l.read(got); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 || !bytes.Equal(got, msg) {
				t.Errorf("%v allocations per round trip, got %q", allocs, got)
			}
		})
	}
}

// The kernels in both poll modes: results, a stalled peer, a dead one.
func TestKernelPollModes(t *testing.T) {
	for _, mode := range pollModes {
		for _, kernel := range []string{"latency", "bw"} {
			t.Run(mode+"/"+kernel, func(t *testing.T) {
				s := newStep(t, []string{"n1", "n2"}, 1, kernel, map[string]string{"sizes": "1-1M", "iterations": "20", "poll": mode})
				b := s.runOK(t)
				metric, unit := "latency", results.UnitMicroseconds
				if kernel == "bw" {
					metric, unit = "bandwidth", results.UnitMBps
				}
				sizes := make([]int, 21)
				for i := range sizes {
					sizes[i] = 1 << i
				}
				checkSamples(t, b, metric, unit, sizes)
			})
			t.Run(mode+"/"+kernel+"/stalled peer", func(t *testing.T) {
				s := newStep(t, []string{"n1", "n2"}, 1, kernel, map[string]string{"sizes": "1-4096", "iterations": "20", "poll": mode})
				s.ioTimeout = 300 * time.Millisecond
				// Rank 1 stalls until rank 0 has given up: before, it slept
				// for a second, and a busy machine could keep rank 0 from
				// noticing the stall until it was over.
				rank0 := make(chan struct{})
				s.ended = func(rank int) {
					if rank == 0 {
						close(rank0)
					}
				}
				s.hooks = &testHooks{received: func(rank, size, iter int, buf []byte) {
					if rank == 1 && size == 64 && iter == 5 {
						select {
						case <-rank0:
						case <-time.After(time.Minute): // rank 0 waits for rank 1: the test fails
						}
					}
				}}
				res := s.run()
				b := s.bundle(res)
				want := "at 64 bytes, iteration 5: receive from rank 1 (node n2): no progress for 300ms"
				if kernel == "bw" {
					// Rank 0 waits for the acknowledgement of the window.
					want = "at 64 bytes, iteration 0: receive from rank 1 (node n2): no progress for 300ms"
				}
				if b.Status != results.StatusFailed || !strings.Contains(b.Error, want) {
					t.Fatalf("status %s, error %q; want %q", b.Status, b.Error, want)
				}
				// Not the stall's minute: rank 0 gives up on its own.
				if res[0].took > 30*time.Second {
					t.Errorf("rank 0 took %s with an I/O timeout of 300ms", res[0].took)
				}
			})
			t.Run(mode+"/"+kernel+"/dead peer", func(t *testing.T) {
				s := newStep(t, []string{"n1", "n2"}, 1, kernel, map[string]string{"sizes": "1-4096", "iterations": "20", "poll": mode})
				s.hooks = &testHooks{die: func(rank, size, iter int) bool { return rank == 1 && size == 256 && iter == 3 }}
				checkPeerDied(t, s, 8) // the sizes below 256
			})
		}
	}
}

// checkPeerDied runs s, whose rank 1 (node n2) dies, and checks that the
// run failed for it and kept the samples measured before: want of them.
func checkPeerDied(t *testing.T, s *step, want int) {
	t.Helper()
	b := s.bundle(s.run())
	if b.Status != results.StatusFailed || !strings.Contains(b.Error, "rank 1 (node n2)") ||
		!strings.Contains(b.Error, "connection closed (the process exited or was killed)") {
		t.Fatalf("status %s, error %q", b.Status, b.Error)
	}
	if len(b.Samples) != want {
		t.Errorf("%d samples kept, want %d", len(b.Samples), want)
	}
}

// TestIntraNodeSendBuffer: a kernel connection between two ranks of one
// node gets the capped send buffer (Linux reports it doubled), then, before
// each size a streaming kernel sends, one that grows with the message
// within the two bounds; one between nodes keeps the kernel's autotuned
// buffer throughout.
func TestIntraNodeSendBuffer(t *testing.T) {
	sndbuf := func(conn *net.TCPConn) int {
		rc, err := conn.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var v int
		var gerr error
		rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF) })
		if gerr != nil {
			t.Fatal(gerr)
		}
		return v
	}
	for _, tt := range []struct {
		name    string
		nodeOf1 int
		capped  bool
	}{{"same node", 0, true}, {"other node", 1, false}} {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := tcpPair(t)
			before := sndbuf(a)
			c := &comm{
				id:      Identity{Rank: 0, Size: 2, NodeName: "n1", Nodes: []string{"n1", "n2"}, NodeIndex: 0},
				members: []member{{Rank: 0, Node: "n1", NodeIndex: 0}, {Rank: 1, Node: "n2", NodeIndex: tt.nodeOf1}},
			}
			if err := tuneKernelConn(c, a, 1, 0); err != nil {
				t.Fatal(err)
			}
			got := sndbuf(a)
			if tt.capped && got != 2*intraNodeSendBuffer || !tt.capped && got != before {
				t.Errorf("send buffer %d (was %d), capped %v", got, before, tt.capped)
			}
			for _, sz := range []struct{ size, want int }{
				{1, 256 << 10}, {64 << 10, 256 << 10}, {128 << 10, 256 << 10}, {256 << 10, 512 << 10},
				{384 << 10, 768 << 10}, {512 << 10, 1 << 20}, {4 << 20, 1 << 20}, {64 << 10, 256 << 10},
			} {
				if err := tuneKernelConn(c, a, 1, sz.size); err != nil {
					t.Fatal(err)
				}
				got := sndbuf(a)
				if tt.capped && got != sz.want || !tt.capped && got != before {
					t.Errorf("messages of %d bytes: send buffer %d (was %d), capped %v", sz.size, got, before, tt.capped)
				}
			}
		})
	}
}
