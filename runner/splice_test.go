package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// drain reads messages of the given sizes from conn, in turn, and checks
// each byte against the pattern; the first error goes to errs.
func drain(conn tcpConn, sizes []int, errs chan<- error) {
	for i, size := range sizes {
		pat := newPattern(size)
		buf := make([]byte, pat.n)
		if _, err := io.ReadFull(conn, buf); err != nil {
			errs <- fmt.Errorf("message %d (%d bytes): %w", i, size, err)
			return
		}
		if err := pat.verify(buf, i, true); err != nil {
			errs <- fmt.Errorf("message %d (%d bytes): %w", i, size, err)
			return
		}
	}
	errs <- nil
}

// enableSplice turns send=splice on for l, and stops the test when the
// system leaves its pipe below 64 KiB: the stream would write, and the
// test would test nothing. This process closes its pipes (TestMain
// checks): the user's other processes hold the pages then.
func enableSplice(t *testing.T, l *link) {
	t.Helper()
	if err := l.setSend(SendSplice); err != nil {
		t.Fatal(err)
	}
	if l.fast.pipe == nil {
		testenv.Require(t, "no pipe of 64 KiB for send=splice: the user's pipes hold fs.pipe-user-pages-soft pages")
	}
}

// TestStreamSplices: with splicing on, a stream's messages of spliceMin
// bytes and more go through the pipe, in one piece or, past the pipe's
// capacity, several, and arrive whole; smaller ones are written.
func TestStreamSplices(t *testing.T) {
	sizes := []int{4096, spliceMin, 1 << 20, 3<<20 + 5, spliceMin - 1, 8 << 20}
	for _, mode := range pollModes {
		t.Run(mode, func(t *testing.T) {
			a, b := tcpPair(t)
			errs := make(chan error, 1)
			go drain(b, sizes, errs)
			l := testLink(t, context.Background(), a, mode, 5*time.Second)
			defer l.close()
			enableSplice(t, l)
			var want int64
			// The patterns stay referenced until the peer has read them
			// all, as the kernels' do (with a newPattern(size).msg(i)
			// collected and reused in flight, this test saw corrupted data).
			pats := make([]pattern, len(sizes))
			for i, size := range sizes {
				pats[i] = newPattern(size)
				if err := l.stream(pats[i].msg(i)); err != nil {
					t.Fatalf("message %d (%d bytes): %v", i, size, err)
				}
				if size >= spliceMin {
					want += int64(size)
				}
			}
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
			runtime.KeepAlive(pats)
			if got := l.fast.pipe.spliced; got != want {
				t.Errorf("%d bytes went through the pipe, want %d (the messages of %d bytes and more)", got, want, spliceMin)
			}
			if l.fast.pipe.held != 0 {
				t.Errorf("%d bytes left in the pipe", l.fast.pipe.held)
			}
		})
	}
}

// TestStreamCopyWrites: send=copy never splices.
func TestStreamCopyWrites(t *testing.T) {
	a, b := tcpPair(t)
	errs := make(chan error, 1)
	go drain(b, []int{1 << 20}, errs)
	l := testLink(t, context.Background(), a, PollSpin, 5*time.Second)
	defer l.close()
	if err := l.setSend(SendCopy); err != nil {
		t.Fatal(err)
	}
	if err := l.stream(newPattern(1 << 20).msg(0)); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if l.fast.pipe != nil {
		t.Error("send=copy made a pipe")
	}
}

// TestStreamSmallPipeWrites: a pipe that stays below spliceMin (the
// user's pipe pages used up) leaves the stream writing, whole.
func TestStreamSmallPipeWrites(t *testing.T) {
	if _, err := newKernelPipe(4096); !errors.Is(err, errSmallPipe) {
		t.Fatalf("a 4 KiB pipe: %v, want errSmallPipe", err)
	}
	a, b := tcpPair(t)
	errs := make(chan error, 1)
	go drain(b, []int{1 << 20}, errs)
	l := testLink(t, context.Background(), a, PollSpin, 5*time.Second)
	defer l.close()
	if err := l.fast.enableSpliceSized(4096); err != nil {
		t.Fatal(err)
	}
	if l.fast.pipe != nil {
		t.Fatal("a 4 KiB pipe was kept")
	}
	pat := newPattern(1 << 20)
	if err := l.stream(pat.msg(0)); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
}

// TestStreamSpliceDoesNotAllocate: the timed loop must not feed the
// garbage collector.
func TestStreamSpliceDoesNotAllocate(t *testing.T) {
	for _, mode := range pollModes {
		t.Run(mode, func(t *testing.T) {
			a, b := tcpPair(t)
			go io.Copy(io.Discard, b)
			l := testLink(t, context.Background(), a, mode, time.Minute)
			defer l.close()
			enableSplice(t, l)
			msg := newPattern(256 << 10).msg(0)
			allocs := testing.AllocsPerRun(200, func() {
				l.refresh(time.Now())
				if err := l.stream(msg); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per message", allocs)
			}
		})
	}
}

// The streaming kernels with both send modes: results, a corrupted
// spliced message, a receiver that dies or stalls in the middle of a
// spliced size.
func TestKernelSendModes(t *testing.T) {
	for _, send := range []string{SendSplice, SendCopy} {
		for _, kernel := range []string{"bw", "pairs"} {
			t.Run(send+"/"+kernel, func(t *testing.T) {
				s := newStep(t, []string{"n1", "n2"}, 1, kernel, map[string]string{"sizes": "16K-4M", "iterations": "5", "send": send})
				b := s.runOK(t)
				var bw []results.Sample
				for _, x := range b.Samples {
					if x.Metric == "bandwidth" {
						bw = append(bw, x)
					}
				}
				b.Samples = bw
				checkSamples(t, b, "bandwidth", results.UnitMBps, []int{16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20})
			})
		}
		t.Run(send+"/matrix", func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2", "n3"}, 1, "matrix", map[string]string{"iterations": "4", "send": send})
			b := s.runOK(t)
			n := 0
			for _, x := range b.Samples {
				if x.Metric == "matrix_bandwidth" {
					n++
					if x.Value <= 0 {
						t.Errorf("pair %v: %v MB/s", x.Pair, x.Value)
					}
				}
			}
			if n != 6 {
				t.Errorf("%d matrix_bandwidth samples, want 6", n)
			}
		})
		t.Run(send+"/bw/corrupted", func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2"}, 1, "bw", map[string]string{"sizes": "1M", "iterations": "5", "send": send})
			s.hooks = &testHooks{received: func(rank, size, iter int, buf []byte) {
				if rank == 1 && iter == 64 { // a message checked byte by byte
					buf[len(buf)/2] ^= 0xff
				}
			}}
			b := s.bundle(s.run())
			want := "bw kernel: data from rank 0 (node n1) corrupted: 1048576-byte message, iteration 64: byte 524288"
			if b.Status != results.StatusFailed || !strings.Contains(b.Error, want) {
				t.Fatalf("status %s, error %q; want %q", b.Status, b.Error, want)
			}
		})
		t.Run(send+"/bw/dead peer", func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2"}, 1, "bw", map[string]string{"sizes": "512K,1M", "iterations": "5", "send": send})
			s.hooks = &testHooks{die: func(rank, size, iter int) bool { return rank == 1 && size == 1<<20 && iter == 100 }}
			checkPeerDied(t, s, 1) // 512 KiB's
		})
		t.Run(send+"/bw/stalled peer", func(t *testing.T) {
			s := newStep(t, []string{"n1", "n2"}, 1, "bw", map[string]string{"sizes": "1M", "iterations": "5", "send": send})
			s.ioTimeout = 300 * time.Millisecond
			s.hooks = &testHooks{received: func(rank, size, iter int, buf []byte) {
				if rank == 1 && iter == 100 {
					time.Sleep(time.Second)
				}
			}}
			res := s.run()
			b := s.bundle(res)
			if b.Status != results.StatusFailed || !strings.Contains(b.Error, "no progress for 300ms") {
				t.Fatalf("status %s, error %q", b.Status, b.Error)
			}
			if res[0].took > 3*time.Second {
				t.Errorf("rank 0 took %s with an I/O timeout of 300ms", res[0].took)
			}
		})
	}
}

// TestSplicePipeFor: the spliced senders of one node share half of the
// user's pipe budget (pipe-user-pages-soft), each a power of two pages,
// never more than splicePipeSize nor less than splicing needs.
func TestSplicePipeFor(t *testing.T) {
	page := os.Getpagesize()
	for _, tt := range []struct{ streams, soft, pages int }{
		{1, 16384, 1 << 30},
		{32, 16384, 256}, // 32 pipes of 256 pages: half the default budget
		{33, 16384, 128},
		{64, 16384, 128},
		{100, 16384, 64}, // 81 pages each would fit: a power of two below
		{128, 16384, 64},
		{5000, 16384, 0},
		{500, 0, 1 << 30}, // no limit
		{2, 1 << 30, 1 << 30},
	} {
		want := max(spliceMin, min(splicePipeSize, tt.pages*page))
		if got := splicePipeFor(tt.streams, tt.soft); got != want {
			t.Errorf("%d senders, %d pages: %d bytes, want %d", tt.streams, tt.soft, got, want)
		}
	}
	if n := readPipeUserPagesSoft(); n < 0 {
		t.Errorf("pipe-user-pages-soft reads %d", n)
	}
}

// TestPairsShareThePipeBudget: pairs' senders on one node ask for pipes
// that fit half the user's pipe budget between them. Each asking for
// splicePipeSize, the last of 64 senders on a node with the default budget
// (16384 pages) got pipes of two pages and wrote: one run measuring two
// ways. Here 4 senders share a budget of 256 pages (as root the budget does
// not bind, so what each asked for is what it got).
func TestPairsShareThePipeBudget(t *testing.T) {
	const senders = 4
	defer func(f func() int) { pipeUserPages = f }(pipeUserPages)
	pipeUserPages = func() int { return 2 * senders * 32 }
	var mu sync.Mutex
	got := map[int]int{}
	s := newStep(t, []string{"n1"}, 2*senders, "pairs",
		map[string]string{"sizes": "256K,1M", "iterations": "3", "send": SendSplice, "placement": "intra"})
	s.hooks = &testHooks{pipe: func(rank, capacity int) {
		mu.Lock()
		defer mu.Unlock()
		if c, ok := got[rank]; ok && c != capacity {
			t.Errorf("rank %d: a pipe of %d bytes, then of %d", rank, c, capacity)
		}
		got[rank] = capacity
	}}
	s.runOK(t)
	if len(got) != senders {
		t.Fatalf("pipes of ranks %v, want one for each of %d senders", got, senders)
	}
	for rank, c := range got {
		if c != 32*os.Getpagesize() {
			t.Errorf("rank %d: a pipe of %d bytes, want %d (32 pages)", rank, c, 32*os.Getpagesize())
		}
	}
}

// TestBundleSaysSplice: a streaming kernel that spliced says so in its
// bundle's params (send=splice), so that its runs are a configuration of
// their own: runs without the param wrote (send=copy, the default, as
// every archived run before splicing and most since), and a comparison of
// the two would credit the system with what the method changed. A run that
// wrote, by default or by asking, and the kernels that do not stream, say
// nothing: their configuration is the one archived runs have.
func TestBundleSaysSplice(t *testing.T) {
	for _, tt := range []struct {
		kernel string
		params map[string]string
		want   string
	}{
		{"bw", map[string]string{"sizes": "64K", "iterations": "2"}, ""},
		{"bw", map[string]string{"sizes": "64K", "iterations": "2", "send": SendCopy}, ""},
		{"bw", map[string]string{"sizes": "64K", "iterations": "2", "send": SendSplice}, SendSplice},
		{"pairs", map[string]string{"sizes": "64K", "iterations": "2"}, ""},
		{"pairs", map[string]string{"sizes": "64K", "iterations": "2", "send": SendSplice}, SendSplice},
		{"matrix", map[string]string{"iterations": "2", "retests": "0"}, ""},
		{"matrix", map[string]string{"iterations": "2", "retests": "0", "send": SendSplice}, SendSplice},
		{"latency", map[string]string{"sizes": "64K", "iterations": "2"}, ""},
	} {
		t.Run(fmt.Sprint(tt.kernel, tt.params["send"]), func(t *testing.T) {
			b := newStep(t, []string{"n1", "n2"}, 1, tt.kernel, tt.params).runOK(t)
			if got, ok := b.Params["send"]; got != tt.want || ok != (tt.want != "") {
				t.Errorf("params %v: send %q, want %q", b.Params, got, tt.want)
			}
		})
	}
}
