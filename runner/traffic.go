package runner

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
)

// What a run's traffic crossed. Every rank keeps the two ends of each of
// its kernel connections (connect); at the final barrier it names the
// interfaces they crossed on its machine, and rank 0 records them per node
// in the bundle (results.Host.Traffic), so that a report quotes the rate
// of a link the data could have crossed, and none for data that stayed on
// one machine: the fake nodes of sbench local, or ranks on one node, reach
// each other through the loopback interface whichever of the node's
// addresses they dialled.

// maxTraffic bounds the interfaces a rank may name (a node has few).
const maxTraffic = 64

// noteTraffic keeps the two ends of a kernel connection.
func (c *comm) noteTraffic(conn *net.TCPConn) {
	ends := [2]netip.Addr{addrOf(conn.LocalAddr()), addrOf(conn.RemoteAddr())}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.trafficEnds == nil {
		c.trafficEnds = map[[2]netip.Addr]bool{}
	}
	c.trafficEnds[ends] = true
}

// traffic names the interfaces this rank's kernel connections crossed,
// sorted; nil when it had none or the interfaces cannot be listed.
func (c *comm) traffic() []string {
	c.mu.Lock()
	ends := slices.Collect(maps.Keys(c.trafficEnds))
	c.mu.Unlock()
	if len(ends) == 0 {
		return nil
	}
	ifs, err := interfaceAddrs()
	if err != nil {
		c.log.Printf("warning: cannot list the network interfaces (%v): the bundle does not say which its traffic crossed", err)
		return nil
	}
	return crossed(ends, ifs)
}

// crossed names the interfaces that connections with the given (local,
// remote) ends crossed on a machine with the interface addresses ifs: the
// loopback interface for a remote end on this machine (a loopback address,
// or one of its own), else the interface that holds the local end. Ends
// whose interface is unknown name none.
func crossed(ends [][2]netip.Addr, ifs []ifAddr) []string {
	own := map[netip.Addr]string{}
	loopback := "lo" // Linux's name for it, unless the listing says otherwise
	for _, a := range ifs {
		if _, ok := own[a.Addr]; !ok {
			own[a.Addr] = a.Name
		}
		if a.Loopback && a.Name != "" {
			loopback = a.Name
		}
	}
	var out []string
	for _, e := range ends {
		local, remote := e[0], e[1]
		name := ""
		if _, mine := own[remote]; mine || remote.IsLoopback() {
			name = loopback
		} else {
			name = own[local]
		}
		if name != "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// storeTraffic keeps, on rank 0, the interfaces rank named.
func (c *comm) storeTraffic(rank int, names []string) {
	if len(names) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rankTraffic == nil {
		c.rankTraffic = map[int][]string{}
	}
	c.rankTraffic[rank] = names
}

// trafficOfNode merges the interfaces the ranks of one node named, rank
// 0's own included, sorted.
func (c *comm) trafficOfNode(ranks []int) []string {
	var out []string
	for _, r := range ranks {
		var names []string
		if r == c.id.Rank {
			names = c.traffic()
		} else {
			c.mu.Lock()
			names = c.rankTraffic[r]
			c.mu.Unlock()
		}
		out = append(out, names...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkTraffic bounds the interfaces a barrier message names.
func checkTraffic(names []string) error {
	if len(names) > maxTraffic {
		return fmt.Errorf("%d interfaces, want at most %d", len(names), maxTraffic)
	}
	for _, n := range names {
		if n == "" || len(n) > maxTextLen {
			return fmt.Errorf("bad interface name %.40q", n)
		}
	}
	return nil
}

// addrOf is a connection's end's IP address, IPv4 as such.
func addrOf(a net.Addr) netip.Addr {
	return a.(*net.TCPAddr).AddrPort().Addr().Unmap()
}
