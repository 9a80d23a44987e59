package tcp

import (
	"net/netip"
	"os"
	"slices"
	"strings"
	"syscall"
	"unsafe"
)

// IfAddr is an address of one of the host's network interfaces.
type IfAddr struct {
	Index    int    // the interface's number
	Name     string // the interface's name ("eth0"), as /sys/class/net has it
	Addr     netip.Addr
	Up       bool // the interface is up
	Loopback bool // the interface is a loopback one
}

// InterfaceAddrs lists the host's interface addresses from the kernel's
// routing socket (netlink, as net.Interfaces reads them), by interface
// number, IPv4 before IPv6 on each.
func InterfaceAddrs() ([]IfAddr, error) {
	links, err := linkInfos()
	if err != nil {
		return nil, err
	}
	msgs, err := netlinkDump(syscall.RTM_GETADDR)
	if err != nil {
		return nil, err
	}
	var out []IfAddr
	for _, m := range msgs {
		if m.Header.Type != syscall.RTM_NEWADDR || len(m.Data) < syscall.SizeofIfAddrmsg {
			continue
		}
		ifam := (*syscall.IfAddrmsg)(unsafe.Pointer(&m.Data[0]))
		attrs, err := syscall.ParseNetlinkRouteAttr(&m)
		if err != nil {
			return nil, os.NewSyscallError("parsenetlinkrouteattr", err)
		}
		ip, ok := ifAddr(ifam.Family, attrs)
		if !ok {
			continue
		}
		l, known := links[int(ifam.Index)]
		out = append(out, IfAddr{
			Index: int(ifam.Index), Name: l.name, Addr: ip,
			Up:       known && l.flags&syscall.IFF_UP != 0,
			Loopback: known && l.flags&syscall.IFF_LOOPBACK != 0,
		})
	}
	slices.SortStableFunc(out, func(a, b IfAddr) int {
		if a.Index != b.Index {
			return a.Index - b.Index
		}
		return boolInt(a.Addr.Is6()) - boolInt(b.Addr.Is6())
	})
	return out, nil
}

// ifAddr is a message's address: IFA_LOCAL for IPv4 (the address of a
// point-to-point link's own end), IFA_ADDRESS for IPv6.
func ifAddr(family uint8, attrs []syscall.NetlinkRouteAttr) (netip.Addr, bool) {
	var addr, local netip.Addr
	for _, a := range attrs {
		ip, ok := netip.AddrFromSlice(a.Value)
		if !ok {
			continue
		}
		switch a.Attr.Type {
		case syscall.IFA_ADDRESS:
			addr = ip
		case syscall.IFA_LOCAL:
			local = ip
		}
	}
	if family == syscall.AF_INET && local.IsValid() {
		addr = local
	}
	if !addr.IsValid() || (family == syscall.AF_INET) != addr.Is4() {
		return netip.Addr{}, false
	}
	return addr, true
}

// linkInfo is what linkInfos knows of an interface.
type linkInfo struct {
	flags uint32
	name  string
}

// linkInfos returns every interface's flags (IFF_UP …) and name by
// number.
func linkInfos() (map[int]linkInfo, error) {
	msgs, err := netlinkDump(syscall.RTM_GETLINK)
	if err != nil {
		return nil, err
	}
	links := map[int]linkInfo{}
	for _, m := range msgs {
		if m.Header.Type != syscall.RTM_NEWLINK || len(m.Data) < syscall.SizeofIfInfomsg {
			continue
		}
		ifim := (*syscall.IfInfomsg)(unsafe.Pointer(&m.Data[0]))
		l := linkInfo{flags: ifim.Flags}
		attrs, err := syscall.ParseNetlinkRouteAttr(&m)
		if err != nil {
			return nil, os.NewSyscallError("parsenetlinkrouteattr", err)
		}
		for _, a := range attrs {
			if a.Attr.Type == syscall.IFLA_IFNAME {
				// A NUL-terminated string.
				name, _, _ := strings.Cut(string(a.Value), "\x00")
				l.name = name
			}
		}
		links[int(ifim.Index)] = l
	}
	return links, nil
}

// netlinkDump returns the messages of a routing table dump, up to its end.
func netlinkDump(typ int) ([]syscall.NetlinkMessage, error) {
	tab, err := syscall.NetlinkRIB(typ, syscall.AF_UNSPEC)
	if err != nil {
		return nil, os.NewSyscallError("netlinkrib", err)
	}
	msgs, err := syscall.ParseNetlinkMessage(tab)
	if err != nil {
		return nil, os.NewSyscallError("parsenetlinkmessage", err)
	}
	for i, m := range msgs {
		if m.Header.Type == syscall.NLMSG_DONE {
			return msgs[:i], nil
		}
	}
	return msgs, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
