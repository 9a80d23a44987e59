package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"time"

	"github.com/sbench/sbench/results"
)

// rendezvousSchema versions the address file rank 0 publishes.
const rendezvousSchema = "sbench.rendezvous/v2"

// addrFile is the content of <rundir>/<session>.addr. It holds no
// secret: connections are authenticated with the token.
type addrFile struct {
	Schema  string   `json:"schema"`
	Session string   `json:"session"`
	Node    string   `json:"node"`
	Addrs   []string `json:"addrs"`
	// Machine is rank 0's machine key: a node's local rank 0 with the same
	// one does not describe its node, rank 0's description stands for it.
	Machine string `json:"machine,omitempty"`
}

func addrPath(rundir string, id Identity) string {
	return filepath.Join(rundir, id.Session()+".addr")
}

func publishAddr(path string, f addrFile) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("publish address: %w", err)
	}
	return results.WriteAtomic(path, append(data, '\n'), 0o644)
}

// parseAddrFile decodes an address file; it comes from a shared directory
// anyone may write, so it is checked like any other input.
func parseAddrFile(data []byte) (addrFile, error) {
	var f addrFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return addrFile{}, fmt.Errorf("decode address file: %w", err)
	}
	if f.Schema != rendezvousSchema {
		return addrFile{}, fmt.Errorf("address file schema %.40q, want %q", f.Schema, rendezvousSchema)
	}
	if err := checkAddrs(f.Addrs); err != nil {
		return addrFile{}, fmt.Errorf("address file: %w", err)
	}
	return f, nil
}

// listen opens this rank's TCP listener on an ephemeral port and returns
// the addresses peers should try, in order. With bind set (an IP address:
// the runner looks up no names), that address is the only one. Without,
// the listener takes every interface and advertises the host's addresses
// on the interfaces that are up, IPv4 first (the usual compute network),
// then global IPv6 ones, then loopback for ranks on the same host. Ranks
// are told only IP literals, so no rank depends on a name service.
//
// Connections have Go's defaults: TCP_NODELAY, and keep-alive probes (after
// 15s idle, every 15s, 9 of them), so that a control connection idle while
// a kernel runs still notices a node that vanished.
func listen(bind string, log *logger) (*net.TCPListener, []string, error) {
	laddr := ":0" // every interface: IPv6 and IPv4 where the host has IPv6
	var ip netip.Addr
	if bind != "" {
		var err error
		if ip, err = parseBind(bind); err != nil {
			return nil, nil, err
		}
		laddr = netip.AddrPortFrom(ip, 0).String()
	}
	// Plain TCP, not the Multipath TCP Go's listeners default to where
	// the kernel has it.
	var lc net.ListenConfig
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(context.Background(), "tcp", laddr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %q: %w", bind, err)
	}
	ln := l.(*net.TCPListener)
	local := ln.Addr().(*net.TCPAddr).AddrPort()
	if bind != "" {
		return ln, []string{netip.AddrPortFrom(ip, local.Port()).String()}, nil
	}
	ifs, err := interfaceAddrs()
	if err != nil {
		log.Printf("warning: cannot list the network interfaces (%v): ranks on other nodes cannot reach this one; set --bind", err)
	}
	dualStack := local.Addr().Is6() && local.Addr().IsUnspecified()
	return ln, advertised(ifs, local.Port(), dualStack), nil
}

// dialTCP connects to addr, giving up at deadline or when ctx ends, whose
// cause is then the error.
func dialTCP(ctx context.Context, addr netip.AddrPort, deadline time.Time) (*net.TCPConn, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	d := net.Dialer{Deadline: deadline}
	d.SetMultipathTCP(false) // whatever GODEBUG says: plain TCP, as the listener
	conn, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		if cause := context.Cause(ctx); cause != nil {
			err = fmt.Errorf("dial tcp %s: %w", addr, cause)
		}
		return nil, err
	}
	return conn.(*net.TCPConn), nil
}

// ifAddr is an address of one of the host's network interfaces.
type ifAddr struct {
	Index    int    // the interface's number
	Name     string // the interface's name ("eth0")
	Addr     netip.Addr
	Up       bool // the interface is up
	Loopback bool // the interface is a loopback one
}

// interfaceAddrs lists the host's interface addresses by interface
// number, IPv4 before IPv6 on each.
func interfaceAddrs() ([]ifAddr, error) {
	ifis, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []ifAddr
	for _, ifi := range ifis {
		addrs, err := ifi.Addrs()
		if err != nil {
			return nil, err
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			ip, ok2 := netip.AddrFromSlice(ipn.IP)
			if !ok || !ok2 {
				continue
			}
			out = append(out, ifAddr{Index: ifi.Index, Name: ifi.Name, Addr: ip.Unmap(),
				Up: ifi.Flags&net.FlagUp != 0, Loopback: ifi.Flags&net.FlagLoopback != 0})
		}
	}
	slices.SortStableFunc(out, func(a, b ifAddr) int {
		return cmp.Or(a.Index-b.Index, a.Addr.BitLen()-b.Addr.BitLen()) // IPv4's 32 bits first
	})
	return out, nil
}

// advertised orders a listener's addresses as listen says.
func advertised(ifs []ifAddr, port uint16, dualStack bool) []string {
	var addrs []string
	seen := map[netip.Addr]bool{}
	add := func(ip netip.Addr) {
		if !seen[ip] && len(addrs) < maxAddrs {
			seen[ip] = true
			addrs = append(addrs, netip.AddrPortFrom(ip, port).String())
		}
	}
	usable := func(a ifAddr) bool {
		return a.Up && !a.Loopback && !a.Addr.IsLoopback() && !a.Addr.IsLinkLocalUnicast() && !a.Addr.IsUnspecified()
	}
	for _, a := range ifs {
		if usable(a) && a.Addr.Is4() {
			add(a.Addr)
		}
	}
	if dualStack {
		for _, a := range ifs {
			if usable(a) && a.Addr.Is6() && a.Addr.IsGlobalUnicast() {
				add(a.Addr)
			}
		}
	}
	add(netip.AddrFrom4([4]byte{127, 0, 0, 1}))
	return addrs
}

// bindAddr is the address this rank listens on: Bind, or Interface's
// address on this node (interfaceBind); "" for every interface.
func (cfg *Config) bindAddr() (string, error) {
	switch {
	case cfg.Interface != "" && cfg.Bind != "":
		return "", fmt.Errorf("bind address %.80q and interface %.40q: give one", cfg.Bind, cfg.Interface)
	case cfg.Interface != "":
		ip, err := interfaceBind(cfg.Interface)
		if err != nil {
			return "", err
		}
		return ip.String(), nil
	case cfg.Bind != "":
		if _, err := parseBind(cfg.Bind); err != nil {
			return "", err
		}
	}
	return cfg.Bind, nil
}

// interfaceBind is the address of the network interface name on this
// node: its first IPv4 address, else its first IPv6 one that is not
// link-local (which would need a zone), if the interface is up.
func interfaceBind(name string) (netip.Addr, error) {
	ifs, err := interfaceAddrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("interface %.40q: %w", name, err)
	}
	found := false
	for _, a := range ifs { // IPv4 first within an interface
		if a.Name != name {
			continue
		}
		found = true
		if a.Up && !a.Addr.IsLinkLocalUnicast() {
			return a.Addr, nil
		}
	}
	if !found {
		return netip.Addr{}, fmt.Errorf("interface %.40q: no such network interface with an address on this node", name)
	}
	return netip.Addr{}, fmt.Errorf("interface %.40q is down, or has only link-local addresses, on this node", name)
}

// parseBind reads the --bind address.
func parseBind(bind string) (netip.Addr, error) {
	ip, err := netip.ParseAddr(bind)
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("bind address %.80q: want an IP address such as 10.1.0.5 (sbench-runner looks up no host names)", bind)
	}
	return ip.Unmap(), nil
}
