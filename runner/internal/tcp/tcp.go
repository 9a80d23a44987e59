// Package tcp is the runner's TCP: listen, accept and dial over system
// calls, without package net, whose cgo resolver would link the C library
// into sbench-runner and make a plain `go build` of it dynamic. The runner
// needs no name lookups (ranks advertise IP literals), so what is left is a
// few system calls: sockets are created non-blocking and close-on-exec and
// wrapped with os.NewFile, which registers them with the Go runtime's
// poller, so that reads, writes and deadlines behave as net's do and a
// goroutine waiting on a socket costs no thread.
//
// Every connection has TCP_NODELAY and keep-alive probes (after 15s idle,
// every 15s, 9 of them), as Go's net gives its connections by default: a
// control connection that is idle while a kernel runs still notices a node
// that vanished.
//
// Linux only, like the runner.
package tcp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// Keep-alive settings, Go's net defaults.
const (
	keepAliveIdle     = 15 // seconds
	keepAliveInterval = 15 // seconds
	keepAliveCount    = 9
)

// listenBacklog asks for the longest accept queue; the kernel caps it at
// net.core.somaxconn (reading that file, as net does, costs every rank a
// file read at start-up).
const listenBacklog = 1<<16 - 1

// aLongTimeAgo is a deadline in the past: it interrupts a wait at once.
var aLongTimeAgo = time.Unix(1, 0)

// Conn is a TCP connection.
type Conn struct {
	f             *os.File
	local, remote netip.AddrPort
	closed        atomic.Bool
}

// newConn wraps a connected, non-blocking socket.
func newConn(fd int, local, remote netip.AddrPort) (*Conn, error) {
	if err := setConnOptions(fd); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "tcp "+local.String()+"->"+remote.String())
	// A descriptor the poller did not take would have no deadlines, and a
	// peer that stalls would hang the rank.
	if err := f.SetDeadline(time.Time{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("tcp %s->%s: %w", local, remote, err)
	}
	return &Conn{f: f, local: local, remote: remote}, nil
}

func setConnOptions(fd int) error {
	for _, o := range []struct{ level, opt, v int }{
		{syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
		{syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, keepAliveIdle},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, keepAliveInterval},
		{syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, keepAliveCount},
	} {
		if err := syscall.SetsockoptInt(fd, o.level, o.opt, o.v); err != nil {
			return os.NewSyscallError("setsockopt", err)
		}
	}
	return nil
}

// Read reads from the connection; a deadline that passed gives an error
// that is os.ErrDeadlineExceeded, a closed peer io.EOF.
func (c *Conn) Read(p []byte) (int, error) { return c.f.Read(p) }

// Write writes all of p unless an error (or the deadline) stops it.
func (c *Conn) Write(p []byte) (int, error) { return c.f.Write(p) }

// Close closes the connection; I/O in progress returns an error that is
// os.ErrClosed.
func (c *Conn) Close() error {
	c.closed.Store(true)
	return c.f.Close()
}

func (c *Conn) SetDeadline(t time.Time) error      { return c.f.SetDeadline(t) }
func (c *Conn) SetReadDeadline(t time.Time) error  { return c.f.SetReadDeadline(t) }
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.f.SetWriteDeadline(t) }

// LocalAddr and RemoteAddr are the connection's two ends.
func (c *Conn) LocalAddr() netip.AddrPort  { return c.local }
func (c *Conn) RemoteAddr() netip.AddrPort { return c.remote }

// SyscallConn gives raw access to the socket, with the poller's waits and
// deadlines (the runner's kernels read and write it with raw system calls).
// Its errors after Close are os.ErrClosed, as the connection's own are.
func (c *Conn) SyscallConn() (syscall.RawConn, error) {
	rc, err := c.f.SyscallConn()
	if err != nil {
		return nil, err
	}
	return rawConn{rc: rc, c: c}, nil
}

type rawConn struct {
	rc syscall.RawConn
	c  *Conn
}

func (r rawConn) Control(f func(fd uintptr)) error { return r.c.wrap("raw-control", r.rc.Control(f)) }
func (r rawConn) Read(f func(fd uintptr) bool) error {
	return r.c.wrap("raw-read", r.rc.Read(f))
}
func (r rawConn) Write(f func(fd uintptr) bool) error {
	return r.c.wrap("raw-write", r.rc.Write(f))
}

// wrap names the connection in a raw operation's error, and makes the one
// of a closed connection os.ErrClosed (the poller's own is internal).
// Deadline errors stay os.ErrDeadlineExceeded, which the kernels test.
func (c *Conn) wrap(op string, err error) error {
	switch {
	case err == nil, errors.Is(err, os.ErrDeadlineExceeded):
		return err
	case c.closed.Load():
		err = os.ErrClosed
	}
	return &os.PathError{Op: op, Path: c.f.Name(), Err: err}
}

// Listener is a listening TCP socket.
type Listener struct {
	f         *os.File
	rc        syscall.RawConn
	addr      netip.AddrPort
	dualStack bool
	closed    atomic.Bool
}

// Listen opens a listener on an ephemeral port of ip; the zero Addr means
// every interface, both IPv6 and IPv4 where the host has IPv6 (as net's
// Listen("tcp", ":0")), else IPv4.
func Listen(ip netip.Addr) (*Listener, error) {
	if !ip.IsValid() {
		l, err := listen(netip.IPv6Unspecified(), true)
		if errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.EADDRNOTAVAIL) {
			return listen(netip.IPv4Unspecified(), false)
		}
		return l, err
	}
	return listen(ip.Unmap(), false)
}

func listen(ip netip.Addr, dualStack bool) (*Listener, error) {
	errorf := func(call string, err error) error {
		return fmt.Errorf("listen tcp %s: %w", netip.AddrPortFrom(ip, 0), os.NewSyscallError(call, err))
	}
	fd, err := syscall.Socket(family(ip), syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, errorf("socket", err)
	}
	fail := func(call string, err error) (*Listener, error) {
		syscall.Close(fd)
		return nil, errorf(call, err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return fail("setsockopt", err)
	}
	if ip.Is6() {
		v6only := 1
		if dualStack {
			v6only = 0
		}
		if err := syscall.SetsockoptInt(fd, syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, v6only); err != nil {
			return fail("setsockopt", err)
		}
	}
	sa, err := sockaddr(netip.AddrPortFrom(ip, 0))
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("listen tcp %s: %w", ip, err)
	}
	if err := syscall.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if err := syscall.Listen(fd, listenBacklog); err != nil {
		return fail("listen", err)
	}
	local, err := sockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	f := os.NewFile(uintptr(fd), "tcp "+local.String())
	rc, err := f.SyscallConn()
	if err == nil {
		err = f.SetDeadline(time.Time{}) // not pollable: Accept would block a thread for good
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("listen tcp %s: %w", local, err)
	}
	return &Listener{f: f, rc: rc, addr: local, dualStack: dualStack}, nil
}

// Addr is the address the listener is bound to, its port the one to
// advertise.
func (l *Listener) Addr() netip.AddrPort { return l.addr }

// DualStack reports whether the listener takes IPv4 connections as well as
// IPv6 ones.
func (l *Listener) DualStack() bool { return l.dualStack }

// Accept waits for the next connection. After Close it returns an error
// that is os.ErrClosed; other errors (EMFILE, ENFILE, ENOBUFS) leave the
// listener usable, the connection queued.
func (l *Listener) Accept() (*Conn, error) {
	var nfd int
	var rsa syscall.Sockaddr
	var aerr error
	err := l.rc.Read(func(fd uintptr) bool {
		for {
			nfd, rsa, aerr = syscall.Accept4(int(fd), syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
			switch aerr {
			case syscall.EAGAIN:
				return false
			case syscall.EINTR, syscall.ECONNABORTED:
				// A signal, or a connection reset while queued: the
				// next one, as net does.
				continue
			}
			return true
		}
	})
	switch {
	case err != nil && l.closed.Load():
		return nil, &os.PathError{Op: "accept", Path: l.f.Name(), Err: os.ErrClosed}
	case err != nil:
		return nil, &os.PathError{Op: "accept", Path: l.f.Name(), Err: err}
	case aerr != nil:
		return nil, &os.PathError{Op: "accept", Path: l.f.Name(), Err: os.NewSyscallError("accept4", aerr)}
	}
	local, err := sockname(nfd)
	if err != nil {
		syscall.Close(nfd)
		return nil, &os.PathError{Op: "accept", Path: l.f.Name(), Err: os.NewSyscallError("getsockname", err)}
	}
	return newConn(nfd, local, addrPort(rsa))
}

// Close stops the listener; an Accept waiting returns.
func (l *Listener) Close() error {
	l.closed.Store(true)
	return l.f.Close()
}

// Dial connects to addr, giving up at deadline (zero: none) or when ctx
// ends, whose cause is then the error.
func Dial(ctx context.Context, addr netip.AddrPort, deadline time.Time) (*Conn, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	errorf := func(err error) error { return fmt.Errorf("dial tcp %s: %w", addr, err) }
	sa, err := sockaddr(addr)
	if err != nil {
		return nil, errorf(err)
	}
	if err := context.Cause(ctx); err != nil {
		return nil, errorf(err)
	}
	fd, err := syscall.Socket(family(addr.Addr()), syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return nil, errorf(os.NewSyscallError("socket", err))
	}
	pending := false
	switch err := syscall.Connect(fd, sa); err {
	case nil:
	case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
		pending = true
	default:
		syscall.Close(fd)
		return nil, errorf(os.NewSyscallError("connect", err))
	}
	// The kernel picked the local port at connect.
	local, err := sockname(fd)
	if err != nil {
		syscall.Close(fd)
		return nil, errorf(os.NewSyscallError("getsockname", err))
	}
	c, err := newConn(fd, local, addr)
	if err != nil {
		return nil, errorf(err)
	}
	if !pending {
		return c, nil
	}
	if err := c.awaitConnect(ctx, deadline); err != nil {
		c.Close()
		if cause := context.Cause(ctx); cause != nil {
			err = cause
		}
		return nil, errorf(err)
	}
	return c, nil
}

// awaitConnect waits for a non-blocking connect to finish: the socket
// becomes writable, and SO_ERROR says how it went.
func (c *Conn) awaitConnect(ctx context.Context, deadline time.Time) error {
	c.f.SetWriteDeadline(deadline)
	defer c.f.SetWriteDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { c.f.SetWriteDeadline(aLongTimeAgo) })
	defer stop()
	rc, err := c.f.SyscallConn()
	if err != nil {
		return err
	}
	var cerr error
	err = rc.Write(func(fd uintptr) bool {
		n, err := syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err != nil {
			cerr = os.NewSyscallError("getsockopt", err)
			return true
		}
		switch e := syscall.Errno(n); e {
		case 0:
			// Writable with no error may be a spurious wake-up (or the
			// first look, before the handshake ended): connected only
			// once the kernel knows the peer.
			_, err := syscall.Getpeername(int(fd))
			return err == nil
		case syscall.EINPROGRESS, syscall.EALREADY, syscall.EINTR:
			return false
		case syscall.EISCONN:
			return true
		default:
			cerr = os.NewSyscallError("connect", e)
			return true
		}
	})
	if err != nil {
		return err
	}
	return cerr
}

func family(ip netip.Addr) int {
	if ip.Is4() {
		return syscall.AF_INET
	}
	return syscall.AF_INET6
}

// sockaddr converts an address; IPv6 zones must be interface numbers (the
// runner never advertises link-local addresses).
func sockaddr(ap netip.AddrPort) (syscall.Sockaddr, error) {
	ip := ap.Addr()
	switch {
	case !ip.IsValid():
		return nil, errors.New("no IP address")
	case ip.Is4():
		return &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ip.As4()}, nil
	}
	sa := &syscall.SockaddrInet6{Port: int(ap.Port()), Addr: ip.As16()}
	if z := ip.Zone(); z != "" {
		var id uint32
		if _, err := fmt.Sscanf(z, "%d", &id); err != nil || fmt.Sprint(id) != z {
			return nil, fmt.Errorf("IPv6 zone %q: only interface numbers are supported", z)
		}
		sa.ZoneId = id
	}
	return sa, nil
}

func sockname(fd int) (netip.AddrPort, error) {
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return addrPort(sa), nil
}

func addrPort(sa syscall.Sockaddr) netip.AddrPort {
	switch sa := sa.(type) {
	case *syscall.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port))
	case *syscall.SockaddrInet6:
		ip := netip.AddrFrom16(sa.Addr)
		if sa.ZoneId != 0 {
			ip = ip.WithZone(fmt.Sprint(sa.ZoneId))
		}
		// A dual-stack listener sees IPv4 peers as ::ffff:a.b.c.d.
		return netip.AddrPortFrom(ip.Unmap(), uint16(sa.Port))
	}
	return netip.AddrPort{}
}
