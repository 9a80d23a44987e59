package runner

import (
	"bufio"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
)

// cpuFlagsOfInterest are the CPU features a performance engineer looks for
// first, in the order they are reported. x86 names come from the "flags"
// line of /proc/cpuinfo, Arm ones from "Features".
var cpuFlagsOfInterest = []string{
	"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
	"avx512_vnni", "avx512_bf16", "amx_tile", "asimd", "sve", "sve2",
}

// maxNetIfs bounds the interfaces recorded: a container host can have
// hundreds of veth pairs that say nothing about the benchmark.
const maxNetIfs = 64

// GatherHost describes the node it runs on, reading /proc, /sys and /etc
// under root ("/" in production, a fake tree in tests). LOADEDMODULES comes
// from getenv, the runner's revision (Extra["runner_revision"]) from its
// build information. Missing or unreadable files leave fields empty:
// provenance never fails a run.
func GatherHost(root string, getenv func(string) string) results.Host {
	p := func(elem ...string) string { return filepath.Join(append([]string{root}, elem...)...) }
	h := results.Host{
		Hostname: readLine(p("proc/sys/kernel/hostname")),
		Kernel:   readLine(p("proc/sys/kernel/osrelease")),
		OS:       osRelease(p("etc/os-release")),
		Governor: readLine(p("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")),
	}
	if h.Hostname == "" && root == "/" {
		h.Hostname, _ = os.Hostname()
	}
	cpuInfo(p("proc/cpuinfo"), &h)
	if s, c, t := sysTopology(p("sys/devices/system/cpu")); t > 0 {
		h.Sockets, h.Cores, h.Threads = s, c, t
	}
	h.MemoryBytes = memTotal(p("proc/meminfo"))
	h.NUMANodes = countDirs(p("sys/devices/system/node"), "node")
	h.IB = infiniband(p("sys/class/infiniband"))
	h.Net = netIfs(p("sys/class/net"))
	for _, m := range strings.Split(getenv("LOADEDMODULES"), ":") {
		if m = strings.TrimSpace(m); m != "" {
			h.Modules = append(h.Modules, m)
		}
	}
	// Each node's own binary says what it was built from: a stale copy on
	// one node shows here.
	if rev := RunnerRevision(); rev != "" {
		h.Extra = map[string]string{"runner_revision": rev}
	}
	// The clock, for Rpeak (hpl.Rpeak): a VM's CPU model often names none.
	CPUFrequency(&h, root)
	return h
}

// CPUFrequency records cpu0's base and maximum frequency from sysfs in
// h.Extra["cpu_base_mhz"] and ["cpu_max_mhz"], when the kernel exposes
// them (base_frequency is intel_pstate's; cpuinfo_max_freq any cpufreq
// driver's).
func CPUFrequency(h *results.Host, root string) {
	dir := filepath.Join(root, "sys/devices/system/cpu/cpu0/cpufreq")
	for _, f := range []struct{ file, key string }{{"base_frequency", "cpu_base_mhz"}, {"cpuinfo_max_freq", "cpu_max_mhz"}} {
		khz, err := strconv.ParseFloat(readLine(filepath.Join(dir, f.file)), 64)
		if err != nil || khz <= 0 {
			continue
		}
		if h.Extra == nil {
			h.Extra = map[string]string{}
		}
		h.Extra[f.key] = strconv.FormatFloat(khz/1000, 'f', -1, 64)
	}
}

func readLine(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line)
}

func readInt(path string) (int, bool) {
	n, err := strconv.Atoi(readLine(path))
	return n, err == nil
}

// lineValue is what follows prefix on the first line of the file that
// starts with it, spaces around the line trimmed; false for none.
func lineValue(path, prefix string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), prefix); ok {
			return v, true
		}
	}
	return "", false
}

func osRelease(path string) string {
	v, ok := lineValue(path, "PRETTY_NAME=")
	if u, err := strconv.Unquote(v); ok && err == nil {
		return u
	}
	return strings.Trim(v, `"'`)
}

// cpuInfo reads the model, flags and topology from /proc/cpuinfo. The
// topology is replaced by sysfs's when that is readable (cpuinfo has no
// "physical id" on Arm or in some VMs).
func cpuInfo(path string, h *results.Host) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sockets := map[string]bool{}
	cores := map[string]bool{}
	var physID string
	var flags map[string]bool
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			h.Threads++
		case "model name", "Model", "cpu model":
			if h.CPUModel == "" {
				h.CPUModel = val
			}
		case "physical id":
			physID = val
			sockets[val] = true
		case "core id":
			cores[physID+"/"+val] = true
		case "flags", "Features":
			if flags == nil {
				flags = map[string]bool{}
				for _, f := range strings.Fields(val) {
					flags[f] = true
				}
			}
		}
	}
	h.Sockets, h.Cores = len(sockets), len(cores)
	if h.Cores == 0 {
		h.Cores = h.Threads
	}
	if h.Sockets == 0 && h.Threads > 0 {
		h.Sockets = 1
	}
	for _, f := range cpuFlagsOfInterest {
		if flags[f] {
			h.CPUFlags = append(h.CPUFlags, f)
		}
	}
}

// sysTopology counts sockets, cores and hardware threads of the online
// CPUs from /sys/devices/system/cpu/cpuN/topology.
func sysTopology(dir string) (sockets, cores, threads int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0, 0
	}
	pkgs := map[int]bool{}
	coreIDs := map[[2]int]bool{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "cpu") {
			continue
		}
		if _, err := strconv.Atoi(name[3:]); err != nil {
			continue
		}
		if online, ok := readInt(filepath.Join(dir, name, "online")); ok && online == 0 {
			continue
		}
		pkg, ok1 := readInt(filepath.Join(dir, name, "topology/physical_package_id"))
		core, ok2 := readInt(filepath.Join(dir, name, "topology/core_id"))
		if !ok1 || !ok2 {
			return 0, 0, 0 // partial topology: trust /proc/cpuinfo instead
		}
		threads++
		pkgs[pkg] = true
		coreIDs[[2]int{pkg, core}] = true
	}
	return len(pkgs), len(coreIDs), threads
}

func memTotal(path string) uint64 {
	v, _ := lineValue(path, "MemTotal:")
	fields := strings.Fields(v)
	if len(fields) == 0 {
		return 0
	}
	kb, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return 0
	}
	return kb * 1024
}

// countDirs counts entries named prefix followed by a number.
func countDirs(dir, prefix string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.Name(), prefix); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				n++
			}
		}
	}
	return n
}

// infiniband lists the ports under /sys/class/infiniband, device by device
// and port by port in numeric order.
func infiniband(dir string) []results.IBPort {
	devs, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []results.IBPort
	for _, d := range devs { // ReadDir sorts by name
		fw := readLine(filepath.Join(dir, d.Name(), "fw_ver"))
		ports, err := os.ReadDir(filepath.Join(dir, d.Name(), "ports"))
		if err != nil {
			continue
		}
		var nums []int
		for _, p := range ports {
			if n, err := strconv.Atoi(p.Name()); err == nil {
				nums = append(nums, n)
			}
		}
		sort.Ints(nums)
		for _, n := range nums {
			pdir := filepath.Join(dir, d.Name(), "ports", strconv.Itoa(n))
			port := results.IBPort{
				Device:    d.Name(),
				Port:      n,
				State:     ibState(readLine(filepath.Join(pdir, "state"))),
				Rate:      readLine(filepath.Join(pdir, "rate")),
				LinkLayer: readLine(filepath.Join(pdir, "link_layer")),
				Firmware:  fw,
			}
			port.RateGbps = ibRateGbps(port.Rate)
			out = append(out, port)
		}
	}
	return out
}

// ibState turns sysfs's "4: ACTIVE" into "ACTIVE".
func ibState(s string) string {
	if _, name, ok := strings.Cut(s, ":"); ok {
		return strings.TrimSpace(name)
	}
	return s
}

// ibRateGbps reads the number in "100 Gb/sec (4X EDR)" or "2.5 Gb/sec (1X SDR)".
func ibRateGbps(rate string) float64 {
	fields := strings.Fields(rate)
	if len(fields) < 2 || !strings.HasPrefix(fields[1], "Gb/s") {
		return 0
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// netIfs lists the interfaces under /sys/class/net but loopback.
func netIfs(dir string) []results.NetIf {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []results.NetIf
	for _, e := range entries {
		if e.Name() == "lo" || len(out) == maxNetIfs {
			continue
		}
		d := filepath.Join(dir, e.Name())
		ni := results.NetIf{Name: e.Name(), State: readLine(filepath.Join(d, "operstate"))}
		// Virtual interfaces report speed -1 or fail the read with EINVAL.
		if v, ok := readInt(filepath.Join(d, "speed")); ok && v > 0 {
			ni.SpeedMbps = v
		}
		if v, ok := readInt(filepath.Join(d, "mtu")); ok && v > 0 {
			ni.MTU = v
		}
		out = append(out, ni)
	}
	return out
}
