package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sbench/sbench/results"
)

// rendezvousSchema versions the address file rank 0 publishes.
const rendezvousSchema = "sbench.rendezvous/v1"

// addrFile is the content of <rundir>/<session>.addr. It holds no
// secret: connections are authenticated with the token.
type addrFile struct {
	Schema  string   `json:"schema"`
	Session string   `json:"session"`
	Node    string   `json:"node"`
	Addrs   []string `json:"addrs"`
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
// the addresses peers should try, in order. With bind set, that address
// is the only one. Without, the listener takes every interface and
// advertises the host's non-loopback IPv4 addresses first (the usual
// compute network), then the hostname, then loopback for ranks on the
// same host.
func listen(bind string) (net.Listener, []string, error) {
	host := ""
	if bind != "" {
		host = bind
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %q: %w", bind, err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if bind != "" {
		return ln, []string{net.JoinHostPort(bind, port)}, nil
	}
	var addrs []string
	seen := map[string]bool{}
	add := func(h string) {
		a := net.JoinHostPort(h, port)
		if !seen[a] && len(addrs) < maxAddrs {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		ips, _ := ifc.Addrs()
		for _, a := range ips {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
				add(ipn.IP.String())
			}
		}
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		add(h)
	}
	add("127.0.0.1")
	return ln, addrs, nil
}
