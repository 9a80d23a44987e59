package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
)

// machineKey says what a node's description (GatherHost) would be read
// from: the running kernel (its boot id), the hostname, and the
// namespaces that the description sees (network: the interfaces; mount:
// /etc and /sys; UTS: the hostname). Ranks with one key would describe the
// same thing, so only rank 0 does: the fake nodes of `sbench local` share
// rank 0's key, each node of a real cluster has its own, and so does each
// fake node of the netns test cluster (its own network namespace and
// hostname). "" when any part cannot be read (a provenance tree in a test,
// a kernel without /proc/self/ns): then every node describes itself, as
// it would without the key.
func machineKey(root string) string {
	p := func(elem ...string) string { return filepath.Join(append([]string{root}, elem...)...) }
	boot := readLine(p("proc/sys/kernel/random/boot_id"))
	if boot == "" {
		return ""
	}
	h := sha256.New()
	h.Write([]byte("sbench machine\x00" + boot + "\x00" + readLine(p("proc/sys/kernel/hostname"))))
	for _, ns := range []string{"net", "mnt", "uts"} {
		link, err := os.Readlink(p("proc/self/ns", ns))
		if err != nil || link == "" {
			return ""
		}
		h.Write([]byte("\x00" + link))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
