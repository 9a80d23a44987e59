package runner

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/sbench/sbench/kernels"

	"golang.org/x/sys/unix"
)

// Sending a stream without copying it (the send parameter).
//
// write(2) copies every byte into the socket's buffer; over loopback the
// sending core also runs the receiving half of TCP (doc.go), so a stream
// is bound by its sender, and the copy is its largest share. A stream of
// large messages goes through a pipe instead: vmsplice(2) puts references
// to the message's pages into the pipe and splice(2) moves them into the
// socket, which sends them as they are, as sendfile(2) (iperf3 -Z) does
// for a file's pages. The receiver still copies every byte out of its
// socket and checks it. Between nodes the card reads the pages itself.
//
// A spliced message must not change until the receiver has read it: the
// socket holds the pages, not a copy. Only the streaming kernels' senders
// splice, and only their pattern messages (kernel.go), which never change
// and stay referenced until the window's acknowledgement says the
// receiver has read every byte of them.
const (
	// SendSplice references the pages (vmsplice + splice).
	SendSplice = kernels.SendSplice
	// SendCopy writes with write(2), as NPtcp and iperf3 do; the default
	// (see doc.go).
	SendCopy = kernels.SendCopy
)

// A stream that fails (a peer gone or stalled, a cancelled run) may leave
// spliced pages in the peer's socket, which it may still read: their
// memory, handed to abandon, stays allocated for the rest of the process,
// which ends with the failed run. Reused, it would make the peer report
// corrupted data instead of the failure's cause.
var abandoned struct {
	sync.Mutex
	bufs [][]byte
}

// abandon keeps b allocated for the rest of the process.
func abandon(b []byte) {
	abandoned.Lock()
	abandoned.bufs = append(abandoned.bufs, b)
	abandoned.Unlock()
}

// inFlight is a stream's pattern while the peer may not have read all of
// its spliced pages: set when the stream of a size starts, cleared by its
// last acknowledgement. Holding it keeps the pattern allocated until
// then; a stream that ends with it set (a failure) abandons it, by
// `defer f.abandonIfSet()`.
type inFlight struct{ buf []byte }

func (f *inFlight) abandonIfSet() {
	if f.buf != nil {
		abandon(f.buf)
	}
}

// spliceMin is the smallest message sent through the pipe. Below it the
// second system call and the pinning of the pages cost more than the copy
// they save.
const spliceMin = 64 << 10

// splicePipeSize is the pipe's capacity asked for, the largest that
// /proc/sys/fs/pipe-max-size allows by default: a message of up to 1 MiB
// goes in with one vmsplice. When the user's pipe pages are used up
// (pipe-user-pages-soft) the pipe keeps the size it has.
const splicePipeSize = 1 << 20

// pipeUserPagesSoft is where Linux keeps how many pages a user's pipes may
// hold before a new pipe gets two pages and cannot grow (16384, 64 MiB, by
// default; 0 for no limit).
const pipeUserPagesSoft = "/proc/sys/fs/pipe-user-pages-soft"

// splicePipeFor is the pipe size for each of streams senders that splice
// at once on one node as one user, whose pipes may hold softPages pages
// (pipe-user-pages-soft, 0 for no limit): splicePipeSize while half of
// that budget covers them all, else an equal share of that half in whole
// pages, never below spliceMin. The other half is left to the user's
// other pipes. Sixty-four senders of 1 MiB would take the whole default
// budget, and those that came last would get pipes too small to splice
// through and write instead: one run measuring two ways at once.
func splicePipeFor(streams, softPages int) int {
	if softPages <= 0 || streams <= 1 {
		return splicePipeSize
	}
	// Linux rounds a pipe's pages up to a power of two: ask for one.
	pages := 1
	for pages*2 <= softPages/2/streams {
		pages *= 2
	}
	return max(spliceMin, min(splicePipeSize, pages*os.Getpagesize()))
}

// pipeUserPages is readPipeUserPagesSoft; tests set a budget of their own.
var pipeUserPages = readPipeUserPagesSoft

// readPipeUserPagesSoft reads pipe-user-pages-soft; 0 (no limit known)
// when it cannot.
func readPipeUserPagesSoft() int {
	if n, ok := readInt(pipeUserPagesSoft); ok && n > 0 {
		return n
	}
	return 0
}

// kernelPipe is a sender's pipe: its two ends, its capacity and the bytes
// of the message in progress that are in it and not yet in the socket.
type kernelPipe struct {
	r, w     int
	capacity int
	held     int
	spliced  int64 // bytes moved into sockets, for the tests
}

// errSmallPipe: the pipe holds less than spliceMin, as when the user's
// pipes already hold fs.pipe-user-pages-soft pages (a new one then gets
// two pages, and cannot grow): splicing through it would cost a pair of
// system calls per page, far more than the copy it saves.
var errSmallPipe = errors.New("the pipe holds less than 64 KiB")

// newKernelPipe returns a pipe of want bytes, or of the size it has when
// the system refuses that; errSmallPipe when that is below spliceMin.
func newKernelPipe(want int) (*kernelPipe, error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		return nil, err
	}
	p := &kernelPipe{r: fds[0], w: fds[1]}
	unix.FcntlInt(uintptr(p.w), unix.F_SETPIPE_SZ, want) // keeps the old size on failure
	c, err := unix.FcntlInt(uintptr(p.w), unix.F_GETPIPE_SZ, 0)
	if err == nil && c < spliceMin {
		err = fmt.Errorf("%w (%d bytes)", errSmallPipe, c)
	}
	if err != nil {
		p.close()
		return nil, err
	}
	p.capacity = c
	return p, nil
}

// smallPipeOnce says once per process that a sender writes because its
// pipe is too small.
var smallPipeOnce sync.Once

func (p *kernelPipe) close() {
	unix.Close(p.r)
	unix.Close(p.w)
}

// out moves the start of b, the unsent rest of a message, into the
// socket fd: it fills the empty pipe from b, then splices what the pipe
// holds. It returns the bytes that reached the socket. nonblock is spin
// mode's: splice(2) follows SPLICE_F_NONBLOCK, not the socket's
// O_NONBLOCK, and without it sleeps for SO_SNDTIMEO (block mode's slice).
func (p *kernelPipe) out(fd uintptr, b []byte, nonblock bool) (int, error) {
	if p.held == 0 {
		iov := unix.Iovec{Base: (*byte)(unsafe.Pointer(&b[0]))}
		iov.SetLen(min(len(b), p.capacity))
		n, err := unix.Vmsplice(p.w, []unix.Iovec{iov}, unix.SPLICE_F_NONBLOCK)
		if err != nil {
			return 0, err
		}
		p.held = n
	}
	flags := unix.SPLICE_F_MOVE
	if nonblock {
		flags |= unix.SPLICE_F_NONBLOCK
	}
	if p.held < len(b) {
		flags |= unix.SPLICE_F_MORE
	}
	n, err := unix.Splice(p.r, nil, int(fd), nil, p.held, flags)
	if err != nil {
		return 0, err
	}
	p.held -= int(n)
	p.spliced += n
	return int(n), nil
}
