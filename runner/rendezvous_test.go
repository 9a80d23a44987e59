package runner

import (
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestAdvertised: a rank advertises IP literals only, its compute
// networks' IPv4 first, then global IPv6 (on a dual-stack listener), then
// loopback; nothing of an interface that is down, no loopback or
// link-local address of the host's.
func TestAdvertised(t *testing.T) {
	a := func(index int, ip string, up, loopback bool) ifAddr {
		return ifAddr{Index: index, Addr: netip.MustParseAddr(ip), Up: up, Loopback: loopback}
	}
	ifs := []ifAddr{
		a(1, "127.0.0.1", true, true), a(1, "::1", true, true),
		a(2, "10.0.0.7", true, false), a(2, "fe80::1", true, false), a(2, "2001:db8::7", true, false),
		a(3, "192.168.9.9", false, false), // down
		a(4, "169.254.1.1", true, false),  // link-local
		a(5, "10.1.0.7", true, false), a(5, "10.0.0.7", true, false),
	}
	got := advertised(ifs, 4000, true)
	want := []string{"10.0.0.7:4000", "10.1.0.7:4000", "[2001:db8::7]:4000", "127.0.0.1:4000"}
	if !slices.Equal(got, want) {
		t.Errorf("dual stack: %q, want %q", got, want)
	}
	if got := advertised(ifs, 4000, false); !slices.Equal(got, []string{"10.0.0.7:4000", "10.1.0.7:4000", "127.0.0.1:4000"}) {
		t.Errorf("IPv4 only: %q", got)
	}
	// No interfaces known (netlink failed): loopback, for ranks on the host.
	if got := advertised(nil, 4000, true); !slices.Equal(got, []string{"127.0.0.1:4000"}) {
		t.Errorf("no interfaces: %q", got)
	}
}

// TestBindIsAnIP: the runner resolves no names, so --bind takes an IP
// and says so for anything else, before the run starts.
func TestBindIsAnIP(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1"})
	for _, bind := range []string{"127.0.0.1", "::1", "10.1.0.5"} {
		cfg := s.config(0)
		cfg.Bind = bind
		if err := cfg.Validate(); err != nil {
			t.Errorf("bind %s: %v", bind, err)
		}
	}
	for _, bind := range []string{"localhost", "node01-ib", "10.1.0.5:80", "fe80::1%eth0"} {
		cfg := s.config(0)
		cfg.Bind = bind
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "want an IP address") {
			t.Errorf("bind %s: %v", bind, err)
		}
	}
}

// TestBindInterface: --interface is resolved on the rank's own node to
// the interface's address; an interface this node lacks, or both --bind
// and --interface, are refused before the run starts.
func TestBindInterface(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1"})
	cfg := s.config(0)
	cfg.Bind, cfg.Interface = "", "lo" // the steps of these tests bind 127.0.0.1
	if got, err := cfg.bindAddr(); err != nil || got != "127.0.0.1" {
		t.Errorf("interface lo: %q, %v; want 127.0.0.1", got, err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("interface lo: %v", err)
	}
	cfg.Interface = "nosuch0"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `interface "nosuch0": no such network interface`) {
		t.Errorf("interface nosuch0: %v", err)
	}
	cfg.Interface, cfg.Bind = "lo", "127.0.0.1"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Errorf("bind and interface: %v", err)
	}
}

// TestConnOptions: both ends of a connection the runner makes (listen,
// dialTCP: tcpPair) are plain TCP sockets, with TCP_NODELAY and keep-alive probes after 15s idle, every
// 15s, 9 of them, so that an idle control connection notices a node that
// vanished.
func TestConnOptions(t *testing.T) {
	// The listener too, for every bind.
	for _, bind := range []string{"127.0.0.1", ""} {
		ln, _, err := listen(bind, &logger{w: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		if p := sockopt(t, ln, syscall.SOL_SOCKET, syscall.SO_PROTOCOL); p != syscall.IPPROTO_TCP {
			t.Errorf("listener on %q: protocol %d, want TCP (%d)", bind, p, syscall.IPPROTO_TCP)
		}
		ln.Close()
	}
	dialed, server := tcpPair(t)
	want := []struct {
		name       string
		level, opt int
		v          int
	}{
		// Plain TCP, as the kernels were measured with: not Multipath
		// TCP, which Go's listeners use by default since Go 1.24 where
		// the kernel has it (a TCP peer then meets an MPTCP socket in
		// fallback, whose data path and socket options differ).
		{"SO_PROTOCOL", syscall.SOL_SOCKET, syscall.SO_PROTOCOL, syscall.IPPROTO_TCP},
		{"TCP_NODELAY", syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1},
		{"SO_KEEPALIVE", syscall.SOL_SOCKET, syscall.SO_KEEPALIVE, 1},
		{"TCP_KEEPIDLE", syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE, 15},
		{"TCP_KEEPINTVL", syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL, 15},
		{"TCP_KEEPCNT", syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT, 9},
	}
	for end, conn := range map[string]*net.TCPConn{"dialled": dialed, "accepted": server} {
		for _, o := range want {
			if v := sockopt(t, conn, o.level, o.opt); v != o.v {
				t.Errorf("%s connection: %s = %d, want %d", end, o.name, v, o.v)
			}
		}
	}
}

// sockopt reads an integer socket option of c.
func sockopt(t *testing.T, c syscall.Conn, level, opt int) int {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), level, opt) }); err != nil || gerr != nil {
		t.Fatalf("getsockopt %d/%d: %v %v", level, opt, err, gerr)
	}
	return v
}
