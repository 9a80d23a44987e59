package tcp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// pair returns both ends of a connection over l.
func pair(t *testing.T, l *Listener) (dialed, accepted *Conn) {
	t.Helper()
	got := make(chan *Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	dialed, err := Dial(context.Background(), l.Addr(), time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	accepted = <-got
	if accepted == nil {
		t.FailNow()
	}
	t.Cleanup(func() { dialed.Close(); accepted.Close() })
	return dialed, accepted
}

func listenLoopback(t *testing.T) *Listener {
	t.Helper()
	l, err := Listen(loopback)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func sockopt(t *testing.T, c *Conn, level, opt int) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), level, opt) }); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	return v
}

func TestRoundTrip(t *testing.T) {
	l := listenLoopback(t)
	if l.Addr().Addr() != loopback || l.Addr().Port() == 0 {
		t.Fatalf("listening on %s", l.Addr())
	}
	a, b := pair(t, l)
	if a.RemoteAddr() != l.Addr() || b.LocalAddr() != l.Addr() || a.LocalAddr() != b.RemoteAddr() {
		t.Errorf("ends: dialed %s->%s, accepted %s->%s", a.LocalAddr(), a.RemoteAddr(), b.LocalAddr(), b.RemoteAddr())
	}
	msg := make([]byte, 1<<20) // more than the socket buffers: Write waits in the poller
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	done := make(chan error, 1)
	go func() {
		_, err := a.Write(msg)
		done <- err
	}()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || !slices.Equal(got, msg) {
		t.Fatalf("write: %v; data equal: %v", err, slices.Equal(got, msg))
	}
	// The other way, then the peer's close is EOF.
	if _, err := b.Write([]byte("ok")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if data, err := io.ReadAll(a); err != nil || string(data) != "ok" {
		t.Errorf("read %q, %v", data, err)
	}
	// net's defaults, which the runner's control connections rely on.
	for _, c := range []*Conn{a} {
		if sockopt(t, c, syscall.IPPROTO_TCP, syscall.TCP_NODELAY) == 0 || sockopt(t, c, syscall.SOL_SOCKET, syscall.SO_KEEPALIVE) == 0 ||
			sockopt(t, c, syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE) != keepAliveIdle {
			t.Error("TCP_NODELAY or keep-alive not set")
		}
	}
	// Descriptors must not leak into the commands the exec kernel starts.
	rc, _ := a.SyscallConn()
	rc.Control(func(fd uintptr) {
		if flags, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFD, 0); e != 0 || flags&syscall.FD_CLOEXEC == 0 {
			t.Errorf("close-on-exec not set: flags %#x, %v", flags, e)
		}
	})
}

func TestDeadlines(t *testing.T) {
	a, _ := pair(t, listenLoopback(t))
	a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	start := time.Now()
	_, err := a.Read(make([]byte, 1))
	var timeout interface{ Timeout() bool }
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &timeout) || !timeout.Timeout() {
		t.Fatalf("read past the deadline: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the deadline took %s", d)
	}
	// The raw connection, as the kernels use it, keeps the deadline.
	rc, _ := a.SyscallConn()
	a.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	err = rc.Read(func(fd uintptr) bool {
		_, err := syscall.Read(int(fd), make([]byte, 1))
		return err != syscall.EAGAIN
	})
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("raw read past the deadline: %v", err)
	}
}

func TestCloseStopsWaits(t *testing.T) {
	l := listenLoopback(t)
	a, _ := pair(t, l)
	errs := make(chan error, 3)
	go func() {
		_, err := a.Read(make([]byte, 1))
		errs <- err
	}()
	go func() {
		rc, _ := a.SyscallConn()
		errs <- rc.Read(func(fd uintptr) bool {
			_, err := syscall.Read(int(fd), make([]byte, 1))
			return err != syscall.EAGAIN
		})
	}()
	go func() {
		_, err := l.Accept()
		errs <- err
	}()
	time.Sleep(50 * time.Millisecond)
	a.Close()
	l.Close()
	for i := 0; i < 3; i++ {
		select {
		case err := <-errs:
			if !errors.Is(err, os.ErrClosed) {
				t.Errorf("after close: %v, want os.ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("close did not end a wait")
		}
	}
}

func TestDialErrors(t *testing.T) {
	l := listenLoopback(t)
	addr := l.Addr()
	l.Close()
	_, err := Dial(context.Background(), addr, time.Now().Add(time.Second))
	if !errors.Is(err, syscall.ECONNREFUSED) || err.Error() != "dial tcp "+addr.String()+": connect: connection refused" {
		t.Errorf("closed port: %v", err)
	}

	// A listener whose accept queue is full drops the SYN: the connect
	// hangs until the deadline, or the context's end.
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: loopback.As4()}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	full, _ := sockname(fd)
	var held []*Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	var hung error
	for i := 0; i < 8 && hung == nil; i++ {
		c, err := Dial(context.Background(), full, time.Now().Add(200*time.Millisecond))
		if err != nil {
			hung = err
			break
		}
		held = append(held, c)
	}
	if !errors.Is(hung, os.ErrDeadlineExceeded) {
		t.Fatalf("the queue never filled (%d connections) or the dial failed otherwise: %v", len(held), hung)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	why := errors.New("the run was cancelled")
	time.AfterFunc(50*time.Millisecond, func() { cancel(why) })
	start := time.Now()
	if _, err := Dial(ctx, full, time.Time{}); !errors.Is(err, why) || time.Since(start) > 2*time.Second {
		t.Errorf("cancelled dial: %v after %s", err, time.Since(start))
	}
}

func TestDualStack(t *testing.T) {
	l, err := Listen(netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.DualStack() {
		t.Skip("no IPv6 on this host")
	}
	port := l.Addr().Port()
	for _, ip := range []netip.Addr{loopback, netip.IPv6Loopback()} {
		got := make(chan *Conn, 1)
		go func() {
			c, _ := l.Accept()
			got <- c
		}()
		a, err := Dial(context.Background(), netip.AddrPortFrom(ip, port), time.Now().Add(time.Second))
		if err != nil {
			if ip.Is6() {
				l.Close() // ends the Accept
				t.Skipf("no ::1: %v", err)
			}
			t.Fatal(err)
		}
		b := <-got
		// An IPv4 peer of a dual-stack listener is no ::ffff:a.b.c.d.
		if b == nil || b.RemoteAddr() != a.LocalAddr() || b.RemoteAddr().Addr().Is4() != ip.Is4() {
			t.Errorf("dialed from %s, accepted %v", a.LocalAddr(), b)
		}
		a.Close()
		if b != nil {
			b.Close()
		}
	}
}

// TestInterfaceAddrs holds the netlink reader to net's, which reads the
// same tables.
func TestInterfaceAddrs(t *testing.T) {
	got, err := InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var want []IfAddr
	for _, ifc := range ifaces {
		addrs, err := ifc.Addrs()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, _ := netip.AddrFromSlice(ipn.IP)
			want = append(want, IfAddr{Index: ifc.Index, Name: ifc.Name, Addr: ip.Unmap(), Up: ifc.Flags&net.FlagUp != 0, Loopback: ifc.Flags&net.FlagLoopback != 0})
		}
	}
	key := func(a IfAddr) string { return a.Addr.String() }
	slices.SortFunc(got, func(a, b IfAddr) int { return a.Addr.Compare(b.Addr) })
	slices.SortFunc(want, func(a, b IfAddr) int { return a.Addr.Compare(b.Addr) })
	if !slices.Equal(got, want) {
		t.Errorf("netlink:\n%v\nnet:\n%v", got, want)
	}
	if !slices.ContainsFunc(got, func(a IfAddr) bool { return key(a) == "127.0.0.1" && a.Up && a.Loopback && a.Name != "" }) {
		t.Errorf("no 127.0.0.1 on an up loopback interface: %v", got)
	}
}
