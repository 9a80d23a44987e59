package runner

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
)

// TestCrossed: a connection crosses the interface of its local end, unless
// its peer is on the same machine, which Linux reaches through the
// loopback interface whichever of the machine's addresses was dialled
// (the fake nodes of sbench local dial each other's eth0 address).
func TestCrossed(t *testing.T) {
	a := func(index int, name, ip string, loopback bool) ifAddr {
		return ifAddr{Index: index, Name: name, Addr: netip.MustParseAddr(ip), Up: true, Loopback: loopback}
	}
	ifs := []ifAddr{
		a(1, "lo", "127.0.0.1", true), a(1, "lo", "::1", true),
		a(2, "eth0", "10.0.0.7", false), a(3, "ib0", "10.1.0.7", false),
	}
	ends := func(pairs ...string) [][2]netip.Addr {
		var out [][2]netip.Addr
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, [2]netip.Addr{netip.MustParseAddr(pairs[i]), netip.MustParseAddr(pairs[i+1])})
		}
		return out
	}
	for _, tt := range []struct {
		name string
		ends [][2]netip.Addr
		want []string
	}{
		{"another node over Ethernet", ends("10.0.0.7", "10.0.0.8"), []string{"eth0"}},
		{"another node over IPoIB", ends("10.1.0.7", "10.1.0.9"), []string{"ib0"}},
		{"both", ends("10.1.0.7", "10.1.0.9", "10.0.0.7", "10.0.0.9"), []string{"eth0", "ib0"}},
		{"this machine by its Ethernet address", ends("10.0.0.7", "10.0.0.7"), []string{"lo"}},
		{"this machine by another of its addresses", ends("10.0.0.7", "10.1.0.7"), []string{"lo"}},
		{"loopback", ends("127.0.0.1", "127.0.0.1", "::1", "::1"), []string{"lo"}},
		{"loopback and a node", ends("127.0.0.1", "127.0.0.1", "10.0.0.7", "10.0.0.8"), []string{"eth0", "lo"}},
		{"a local end on no interface listed", ends("192.0.2.1", "192.0.2.2"), nil},
	} {
		if got := crossed(tt.ends, ifs); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// A loopback interface of another name is named as it is.
	renamed := []ifAddr{a(1, "lo0", "127.0.0.1", true), a(2, "eth0", "10.0.0.7", false)}
	if got := crossed(ends("10.0.0.7", "10.0.0.7"), renamed); !slices.Equal(got, []string{"lo0"}) {
		t.Errorf("renamed loopback: %q", got)
	}
}

// TestBundleSaysWhatTrafficCrossed: every node whose ranks exchanged data
// says which interfaces it crossed. The test's ranks are processes of
// this machine bound to 127.0.0.1, as sbench local's fake nodes are: their
// traffic stayed on the machine, which a report must not hold against an
// interface's link rate. Nodes whose ranks had no part (the latency
// kernel's third node) say nothing.
func TestBundleSaysWhatTrafficCrossed(t *testing.T) {
	for _, tt := range []struct {
		kernel       string
		nodes        []string
		tasksPerNode int
		params       map[string]string
		want         [][]string // by node
	}{
		{"latency", []string{"n1", "n2"}, 1, map[string]string{"sizes": "1", "iterations": "2"}, [][]string{{"lo"}, {"lo"}}},
		{"bw", []string{"n1", "n2"}, 1, map[string]string{"sizes": "64K", "iterations": "2"}, [][]string{{"lo"}, {"lo"}}},
		{"latency", []string{"n1", "n2", "n3"}, 1, map[string]string{"sizes": "1", "iterations": "2"}, [][]string{{"lo"}, {"lo"}, nil}},
		{"latency", []string{"n1"}, 2, map[string]string{"sizes": "1", "iterations": "2"}, [][]string{{"lo"}}},
		{"allreduce", []string{"n1", "n2", "n3"}, 1, map[string]string{"sizes": "8", "iterations": "2"}, [][]string{{"lo"}, {"lo"}, {"lo"}}},
		// STREAM's barriers and reports cross too.
		{"stream", []string{"n1", "n2"}, 1, map[string]string{"array_size": "1000", "iterations": "1"}, [][]string{{"lo"}, {"lo"}}},
	} {
		t.Run(fmt.Sprintf("%s/%d×%d", tt.kernel, len(tt.nodes), tt.tasksPerNode), func(t *testing.T) {
			b := newStep(t, tt.nodes, tt.tasksPerNode, tt.kernel, tt.params).runOK(t)
			if len(b.Hosts) != len(tt.want) {
				t.Fatalf("%d hosts, want %d", len(b.Hosts), len(tt.want))
			}
			for i, h := range b.Hosts {
				if !slices.Equal(h.Traffic, tt.want[i]) {
					t.Errorf("node %s: traffic %q, want %q", h.NodeName, h.Traffic, tt.want[i])
				}
			}
		})
	}
}
