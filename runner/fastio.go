package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
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
	// PollSpin busy-polls non-blocking reads for up to spinFor, as MPI
	// libraries poll their progress engine, then parks the goroutine in
	// the netpoller. Lowest latency and highest streaming bandwidth; a
	// core busy while waiting. The default.
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
//
// Reads of every size spin: a streamed message arrives in 64 KiB pieces
// some 10 us apart, and parking for each cost bw a fifth to a third from
// 64 KiB to 512 KiB (bench/runner-vs-tools.sh); MPI's progress engines
// poll whatever the message size too.
const spinFor = 50 * time.Microsecond

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

	// pipe, when set, carries stream's large messages (splice.go);
	// onSplice and spliceOut are bound once, as onWrite is.
	pipe      *kernelPipe
	onSplice  func(fd uintptr) bool
	spliceOut func(fd uintptr, b []byte) (int, error)
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

func (f *fastConn) close() {
	f.restore()
	if f.pipe != nil {
		f.pipe.close()
		f.pipe = nil
	}
}

// enableSplice makes stream send messages of spliceMin bytes and more
// through a pipe (splice.go).
func (f *fastConn) enableSplice() error { return f.enableSpliceSized(splicePipeSize) }

// enableSpliceSized is enableSplice with a pipe of want bytes. A pipe the
// system keeps below spliceMin (errSmallPipe) leaves the sender writing,
// with a warning, rather than failing the run.
func (f *fastConn) enableSpliceSized(want int) error {
	p, err := newKernelPipe(want)
	if errors.Is(err, errSmallPipe) {
		smallPipeOnce.Do(func() {
			log.Printf("warning: send=%s: %v; streams write instead (as send=%s): raise fs.pipe-user-pages-soft", SendSplice, err, SendCopy)
		})
		return nil
	}
	if err != nil {
		return fmt.Errorf("send=%s: create a pipe: %w", SendSplice, err)
	}
	f.pipe = p
	again := againPark
	if f.block {
		again = againSlice
	}
	f.spliceOut = func(fd uintptr, b []byte) (int, error) { return f.pipe.out(fd, b, !f.block) }
	f.onSplice = func(fd uintptr) bool { return f.transfer(fd, f.spliceOut, false, again) }
	return nil
}

// read fills p. It returns io.EOF when the peer closed before p's first
// byte, io.ErrUnexpectedEOF after it, a timeout error (os.ErrDeadlineExceeded)
// when the link's deadline passed or its context ended, or the system
// call's error.
func (f *fastConn) read(p []byte) error {
	f.spinUntil = time.Time{}
	return f.move(p, f.onRead, true)
}

// write sends all of p; in spin mode the netpoller waits (within the
// deadline) while the socket's buffer is full.
func (f *fastConn) write(p []byte) error { return f.move(p, f.onWrite, false) }

// stream sends all of p as write does, through the pipe when splicing is
// on and p is large enough. p must not change until the peer has read it.
func (f *fastConn) stream(p []byte) error {
	if f.pipe == nil || len(p) < spliceMin {
		return f.write(p)
	}
	return f.move(p, f.onSplice, false)
}

// move runs op (onRead, onWrite, onSplice: fields, bound once, since a
// method value would cost an allocation per message) on p until it is
// done, failed or timed out; reading says which way the netpoller waits.
func (f *fastConn) move(p []byte, op func(fd uintptr) bool, reading bool) error {
	f.buf, f.done, f.err = p, 0, nil
	defer f.reset()
	for {
		// Read (Write) calls the callback again each time the netpoller
		// finds the socket ready, after the callback returned false.
		var err error
		if reading {
			err = f.rc.Read(op)
		} else {
			err = f.rc.Write(op)
		}
		if err != nil {
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

// onAgain is what a transfer does when the socket is not ready (EAGAIN).
type onAgain int

const (
	againPark  onAgain = iota // return false: park until the socket is ready
	againSpin                 // busy-poll a small read for up to spinFor, then park
	againSlice                // end the blocking slice with errWouldBlock
)

// The four callbacks differ only in their system call and in what EAGAIN
// means; transfer is their loop.

// spinRead reads non-blocking until buf is full, busy-polling for up to
// spinFor, then returns false to park until the socket is readable.
func (f *fastConn) spinRead(fd uintptr) bool { return f.transfer(fd, rawRead, true, againSpin) }

// tryWrite writes non-blocking until buf is sent, or returns false to park
// until the socket is writable.
func (f *fastConn) tryWrite(fd uintptr) bool { return f.transfer(fd, rawWrite, false, againPark) }

// blockingRead reads until buf is full, sleeping in read(2) for at most
// blockSlice at a time; errWouldBlock says a slice ended empty-handed.
func (f *fastConn) blockingRead(fd uintptr) bool {
	return f.transfer(fd, blockRead, true, againSlice)
}

// blockingWrite is blockingRead's counterpart. A slice that ends with
// part of buf sent returns the count, not EAGAIN: the loop goes on.
func (f *fastConn) blockingWrite(fd uintptr) bool {
	return f.transfer(fd, blockWrite, false, againSlice)
}

// transfer moves f.buf[f.done:] through fd with sys until buf is done
// (true, f.err nil), the peer closed a read (true, f.err io.EOF or
// io.ErrUnexpectedEOF), the call failed (true, f.err its error), or the
// socket is not ready and again says to park (false).
func (f *fastConn) transfer(fd uintptr, sys func(uintptr, []byte) (int, error), reading bool, again onAgain) bool {
	spins := 0
	for f.done < len(f.buf) {
		n, e := sys(fd, f.buf[f.done:])
		switch {
		case e == nil && (n > 0 || !reading):
			f.done += n
		case e == nil:
			f.err = eof(f.done)
			return true
		case e == syscall.EAGAIN:
			switch again {
			case againSlice:
				f.err = errWouldBlock
				return true
			case againSpin:
				// Reading the clock costs a tenth of a read: look at it
				// every few tries only.
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
			}
			return false
		case e == syscall.EINTR:
		default:
			f.err = e
			return true
		}
	}
	// A blocking slice may have left errWouldBlock behind.
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
func rawRead(fd uintptr, p []byte) (int, error)  { return rawIO(syscall.SYS_READ, fd, p) }
func rawWrite(fd uintptr, p []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, p) }

func rawIO(trap, fd uintptr, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(trap, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// blockRead and blockWrite are read(2) and write(2) through the
// scheduler's bookkeeping, for a descriptor in blocking mode.
func blockRead(fd uintptr, p []byte) (int, error)  { return syscall.Read(int(fd), p) }
func blockWrite(fd uintptr, p []byte) (int, error) { return syscall.Write(int(fd), p) }

// ctxOver reports whether ctx has ended, without a lock.
func ctxOver(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}
