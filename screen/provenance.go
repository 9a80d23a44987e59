package screen

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// memorySlack is how far a node's memory may be from the median before it
// counts as different: firmware and kernels reserve a little, and not
// the same amount on every node; a missing DIMM is an eighth or more.
const memorySlack = 0.03

// absent is the value of a field a node does not have (a port the others
// have).
const absent = "(absent)"

// FieldCheck is one provenance field some nodes differ in from the rest.
type FieldCheck struct {
	Field string `json:"field"`
	// Majority is the value most nodes have, on MajorityNodes of Nodes;
	// "" when no value has more than half of them.
	Majority      string `json:"majority,omitempty"`
	MajorityNodes int    `json:"majority_nodes"`
	Nodes         int    `json:"nodes"`
	// Odd maps each node that differs to its value.
	Odd map[string]string `json:"odd"`
}

// provenance compares what the runner recorded of every node (the newest
// run's record of it): CPU, cores, memory, OS, kernel, MPI, governor,
// every InfiniBand port's state, rate, firmware and link layer, every
// network interface's speed. A node that differs from a majority is
// blamed; a field without a majority is a warning (the partition is not
// uniform, but which side is wrong is not for sbench to say).
func (b *builder) provenance(runs []store.Run) {
	hosts := map[string]results.Host{}
	newest := map[string]int64{}
	for _, r := range runs {
		for _, h := range r.Hosts {
			n := cmp.Or(h.NodeName, h.Hostname)
			if n == "" {
				continue
			}
			if r.ID >= newest[n] {
				hosts[n], newest[n] = h, r.ID
			}
		}
	}
	if len(hosts) < minNodeValues {
		return
	}
	fields := map[string]map[string]string{} // field -> node -> value, never "" (hostFields)
	memory := map[string]uint64{}
	for n, h := range hosts {
		for f, val := range hostFields(h) {
			if fields[f] == nil {
				fields[f] = map[string]string{}
			}
			fields[f][n] = val
		}
		if h.MemoryBytes > 0 {
			memory[n] = h.MemoryBytes
		}
		b.see(n)
	}
	nodes := slices.SortedFunc(maps.Keys(hosts), hostlist.Compare)
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		byNode := fields[f]
		counts := map[string]int{}
		for _, n := range nodes {
			counts[cmp.Or(byNode[n], absent)]++
		}
		if len(counts) < 2 {
			continue
		}
		top := slices.MaxFunc(slices.Sorted(maps.Keys(counts)), func(a, b string) int { return cmp.Compare(counts[a], counts[b]) })
		fc := FieldCheck{Field: f, Nodes: len(nodes), Odd: map[string]string{}}
		for _, n := range nodes {
			if val := cmp.Or(byNode[n], absent); val != top {
				fc.Odd[n] = val
			}
		}
		if top == absent {
			// A port or interface few nodes have is an extra, not a fault.
			continue
		}
		if 2*counts[top] <= len(nodes) {
			b.warnf("%s differs between the nodes and no value is on more than half of them: %s", f, describeValues(nodes, byNode))
			fc.MajorityNodes = counts[top]
			b.v.Provenance = append(b.v.Provenance, fc)
			continue
		}
		fc.Majority, fc.MajorityNodes = top, counts[top]
		b.v.Provenance = append(b.v.Provenance, fc)
		for _, n := range slices.SortedFunc(maps.Keys(fc.Odd), hostlist.Compare) {
			b.nodeFinding(n, []Evidence{{Check: CheckProvenance, Metric: f,
				Text:  fmt.Sprintf("%s is %s, not %s as on %d of %d nodes", f, fc.Odd[n], top, counts[top], len(nodes)),
				Found: fc.Odd[n], Expected: top}})
		}
	}
	b.memory(nodes, memory)
}

// memory compares the nodes' memory with the median, within memorySlack.
func (b *builder) memory(nodes []string, memory map[string]uint64) {
	if len(memory) < minNodeValues {
		return
	}
	var all []float64
	for _, m := range memory {
		all = append(all, float64(m))
	}
	med := medianOr0(all)
	fc := FieldCheck{Field: "memory", Nodes: len(nodes), Majority: sizes.Approx(uint64(med)), Odd: map[string]string{}}
	for _, n := range nodes {
		m, ok := memory[n]
		switch {
		case !ok:
			fc.Odd[n] = absent
		case math.Abs(float64(m)-med) > memorySlack*med:
			fc.Odd[n] = sizes.Approx(m)
		}
	}
	if len(fc.Odd) == 0 {
		return
	}
	fc.MajorityNodes = len(nodes) - len(fc.Odd)
	b.v.Provenance = append(b.v.Provenance, fc)
	for _, n := range slices.SortedFunc(maps.Keys(fc.Odd), hostlist.Compare) {
		b.nodeFinding(n, []Evidence{{Check: CheckProvenance, Metric: "memory",
			Text:  fmt.Sprintf("memory is %s, not %s (the median of %d nodes, within %s)", fc.Odd[n], fc.Majority, len(nodes), pct(memorySlack)),
			Value: float64(memory[n]), Reference: med, Unit: "bytes", Found: fc.Odd[n], Expected: fc.Majority}})
	}
}

// hostFields are the fields of a host the nodes of a partition should
// agree on, by name. Memory is compared apart, within memorySlack.
func hostFields(h results.Host) map[string]string {
	f := map[string]string{}
	add := func(k, v string) {
		if v = strings.TrimSpace(v); v != "" {
			f[k] = v
		}
	}
	add("CPU", h.CPUModel)
	if h.Sockets > 0 || h.Cores > 0 {
		add("cores", fmt.Sprintf("%d sockets, %d cores, %d threads", h.Sockets, h.Cores, h.Threads))
	}
	add("OS", h.OS)
	add("kernel", h.Kernel)
	add("MPI", h.MPI)
	add("governor", h.Governor)
	if h.NUMANodes > 0 {
		add("NUMA nodes", strconv.Itoa(h.NUMANodes))
	}
	for _, p := range h.IB {
		port := fmt.Sprintf("InfiniBand %s port %d", p.Device, p.Port)
		add(port+" state", p.State)
		rate := p.Rate
		if rate == "" && p.RateGbps > 0 {
			rate = ftoa(p.RateGbps) + " Gb/s"
		}
		add(port+" rate", rate)
		add(port+" firmware", p.Firmware)
		add(port+" link layer", p.LinkLayer)
	}
	for _, ni := range h.Net {
		// Only interfaces up and with a speed: virtual ones have none.
		if ni.SpeedMbps <= 0 || !strings.EqualFold(ni.State, "up") {
			continue
		}
		add("network "+ni.Name+" speed", strconv.Itoa(ni.SpeedMbps)+" Mb/s")
	}
	return f
}

// describeValues writes which nodes have which value of a field.
func describeValues(nodes []string, byNode map[string]string) string {
	by := map[string][]string{}
	for _, n := range nodes {
		val := cmp.Or(byNode[n], absent)
		by[val] = append(by[val], n)
	}
	var parts []string
	for _, val := range slices.Sorted(maps.Keys(by)) {
		parts = append(parts, val+" on "+hostlist.Compress(by[val]))
	}
	return strings.Join(parts, "; ")
}
