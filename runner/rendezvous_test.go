package runner

import (
	"net/netip"
	"slices"
	"strings"
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
