package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/sbench/sbench/kernels"
)

// How a kernel waits for its peer's data (the poll parameter).
//
// Go's own reads cost a small message dearly: read, EAGAIN, park the
// goroutine, epoll_wait, wake, reschedule, read again. On loopback that
// doubled NPtcp's one-way latency. Both modes below read the socket with
// raw system calls instead, and both keep the link's failure semantics: a
// peer that stalls fails the run after the I/O timeout, a cancelled run
// stops at once (spin) or within blockSlice (block).
const (
	// PollSpin busy-polls non-blocking reads of up to spinMaxBytes for up
	// to spinFor, as MPI libraries poll their progress engine, then parks
	// the goroutine in the netpoller; larger reads park at once. Lowest
	// latency; a core busy while waiting. The default.
	PollSpin = kernels.PollSpin
	// PollBlock sleeps in blocking system calls on a locked thread, as
	// NPtcp does: no core burnt, the scheduler's wake-up in every message.
	PollBlock = kernels.PollBlock
)

// spinFor bounds a receive's busy-poll. It covers a small message's round
// trip with room to spare, so the ping-pong never parks; a longer wait (a
// large message, a slow peer) parks, and pays the netpoller's few
// microseconds where they no longer matter. It also keeps an
// oversubscribed node (two ranks on one core) from spinning for long
// against the peer it waits for.
const spinFor = 50 * time.Microsecond

// spinMaxBytes is the largest read that busy-polls. A larger message
// arrives over tens of microseconds at least, in pieces, from a sender
// that keeps the socket filling: a read that spins between the pieces
// saves one wake-up, a few microseconds, and costs the delivery its CPU
// and the socket's lock, which every read(2) takes (perf: the spinning
// reads of bw's receiver were most of its CPU time at 64 KiB). With such
// reads parking at once, bw's medians over loopback on the loaded 2-core
// test machine rose 1.1-1.3× from 64 KiB to 2 MiB (5 interleaved rounds,
// runs varying 2-5× in themselves: see bench/runner-vs-tools.sh).
const spinMaxBytes = 32 << 10

// blockSlice is how long one blocking system call may sleep before the
// link looks at its deadline and its context again (SO_RCVTIMEO and
// SO_SNDTIMEO): a cancelled run stops within it.
const blockSlice = 50 * time.Millisecond

// errWouldBlock ends a blocking system call's slice without data.
var errWouldBlock = errors.New("would block")

// fastConn does a kernel's I/O on the socket's file descriptor, through
// syscall.RawConn, so that Go's file descriptor stays in charge of the
// descriptor's life (a concurrent Close waits for a call in progress).
// One goroutine uses it at a time.
type fastConn struct {
	rc      syscall.RawConn
	block   bool
	restore func() // undoes block mode's settings
	// expired reports whether the link's deadline has passed or its
	// context is over (block mode only: the netpoller enforces both for
	// spin mode).
	expired func() bool

	// The operation in progress, for the callbacks below, which are bound
	// once: a closure per call would cost an allocation per message.
	buf       []byte
	done      int // bytes of buf moved
	err       error
	spinUntil time.Time
	onRead    func(fd uintptr) bool
	onWrite   func(fd uintptr) bool
}

// newFastConn prepares conn for the given poll mode. In block mode it
// locks the calling goroutine to its thread until close.
func newFastConn(conn tcpConn, mode string, expired func() bool) (*fastConn, error) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("fast I/O: %T has no file descriptor", conn)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("fast I/O: %w", err)
	}
	f := &fastConn{rc: rc, expired: expired, restore: func() {}}
	f.onRead, f.onWrite = f.spinRead, f.tryWrite
	switch mode {
	case PollSpin, "":
	case PollBlock:
		var serr error
		tv := syscall.NsecToTimeval(blockSlice.Nanoseconds())
		err := rc.Control(func(fd uintptr) {
			s := int(fd)
			for _, opt := range []int{syscall.SO_RCVTIMEO, syscall.SO_SNDTIMEO} {
				if serr == nil {
					serr = syscall.SetsockoptTimeval(s, syscall.SOL_SOCKET, opt, &tv)
				}
			}
			if serr == nil {
				serr = syscall.SetNonblock(s, false)
			}
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return nil, fmt.Errorf("fast I/O: block mode: %w", err)
		}
		runtime.LockOSThread()
		f.block = true
		f.onRead, f.onWrite = f.blockingRead, f.blockingWrite
		f.restore = func() {
			// Go's own reads and writes need the descriptor non-blocking
			// again: the control of the descriptor goes back to them.
			rc.Control(func(fd uintptr) { syscall.SetNonblock(int(fd), true) })
			runtime.UnlockOSThread()
		}
	default:
		return nil, fmt.Errorf("fast I/O: unknown poll mode %q", mode)
	}
	return f, nil
}

func (f *fastConn) close() { f.restore() }

// read fills p. It returns io.EOF when the peer closed before p's first
// byte, io.ErrUnexpectedEOF after it, a timeout error (os.ErrDeadlineExceeded)
// when the link's deadline passed or its context ended, or the system
// call's error.
func (f *fastConn) read(p []byte) error {
	f.buf, f.done, f.err, f.spinUntil = p, 0, nil, time.Time{}
	defer f.reset()
	for {
		// Read calls onRead again each time the netpoller finds the
		// socket readable, after onRead returned false.
		if err := f.rc.Read(f.onRead); err != nil {
			return err
		}
		if f.err != errWouldBlock {
			return f.err
		}
		if f.expired() {
			return os.ErrDeadlineExceeded
		}
	}
}

// write sends all of p; in spin mode the netpoller waits (within the
// deadline) while the socket's buffer is full.
func (f *fastConn) write(p []byte) error {
	f.buf, f.done, f.err = p, 0, nil
	defer f.reset()
	for {
		if err := f.rc.Write(f.onWrite); err != nil {
			return err
		}
		if f.err != errWouldBlock {
			return f.err
		}
		if f.expired() {
			return os.ErrDeadlineExceeded
		}
	}
}

// reset drops the caller's buffer.
func (f *fastConn) reset() { f.buf = nil }

// spinRead reads non-blocking until buf is full, busy-polling for up to
// spinFor, then returns false to park until the socket is readable.
func (f *fastConn) spinRead(fd uintptr) bool {
	spins := 0
	for f.done < len(f.buf) {
		n, e := rawRead(fd, f.buf[f.done:])
		switch {
		case e == nil && n > 0:
			f.done += n
		case e == nil:
			f.err = eof(f.done)
			return true
		case e == syscall.EAGAIN:
			if len(f.buf) > spinMaxBytes {
				return false
			}
			// Reading the clock costs a tenth of a read: look at it every
			// few tries only.
			if spins++; spins&7 != 1 {
				continue
			}
			now := time.Now()
			if f.spinUntil.IsZero() {
				f.spinUntil = now.Add(spinFor)
			}
			if now.Before(f.spinUntil) {
				continue
			}
			return false
		case e == syscall.EINTR:
		default:
			f.err = e
			return true
		}
	}
	return true
}

// tryWrite writes non-blocking until buf is sent, or returns false to park
// until the socket is writable.
func (f *fastConn) tryWrite(fd uintptr) bool {
	for f.done < len(f.buf) {
		n, e := rawWrite(fd, f.buf[f.done:])
		switch {
		case e == nil:
			f.done += n
		case e == syscall.EAGAIN:
			return false
		case e == syscall.EINTR:
		default:
			f.err = e
			return true
		}
	}
	return true
}

// blockingRead reads until buf is full, sleeping in read(2) for at most
// blockSlice at a time; errWouldBlock says a slice ended empty-handed.
func (f *fastConn) blockingRead(fd uintptr) bool {
	for f.done < len(f.buf) {
		n, e := syscall.Read(int(fd), f.buf[f.done:])
		switch {
		case e == nil && n > 0:
			f.done += n
		case e == nil:
			f.err = eof(f.done)
			return true
		case e == syscall.EAGAIN:
			f.err = errWouldBlock
			return true
		case e == syscall.EINTR:
		default:
			f.err = e
			return true
		}
	}
	f.err = nil
	return true
}

// blockingWrite is blockingRead's counterpart. A slice that ends with
// part of buf sent returns the count, not EAGAIN: the loop goes on.
func (f *fastConn) blockingWrite(fd uintptr) bool {
	for f.done < len(f.buf) {
		n, e := syscall.Write(int(fd), f.buf[f.done:])
		switch {
		case e == nil:
			f.done += n
		case e == syscall.EAGAIN:
			f.err = errWouldBlock
			return true
		case e == syscall.EINTR:
		default:
			f.err = e
			return true
		}
	}
	f.err = nil
	return true
}

func eof(got int) error {
	if got > 0 {
		return io.ErrUnexpectedEOF
	}
	return io.EOF
}

// rawRead and rawWrite are read(2) and write(2) on a non-blocking
// descriptor without the scheduler's bookkeeping of a system call that may
// block (entersyscall, exitsyscall): they return at once, and the
// ping-pong makes millions of them.
func rawRead(fd uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// ctxOver reports whether ctx has ended, without a lock.
func ctxOver(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}
