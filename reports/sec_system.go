package reports

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/sizes"
	"github.com/sbench/sbench/slurm/hostlist"
)

// hostGroup is a set of nodes that look the same in every respect the
// system table shows, so eight identical nodes take one column and the one
// with a slower port stands apart in its own.
type hostGroup struct {
	nodes  []string
	fields [][2]string
}

// hostGroups groups the nodes of every run by what they are, sorted by
// node list so the order does not depend on the archive's.
func (r *Report) hostGroups() []*hostGroup {
	if r.groups != nil {
		return r.groups
	}
	groups := map[string]*hostGroup{}
	var order []string
	seen := map[[2]string]bool{} // group key, node
	fc := fieldsCache{}
	keys := map[*results.Host]string{}
	for i := range r.runs {
		run := &r.runs[i]
		for j := range run.Hosts {
			h := &run.Hosts[j]
			fields := fc.of(h)
			key, ok := keys[h]
			if !ok {
				key = fmt.Sprint(fields)
				keys[h] = key
			}
			g := groups[key]
			if g == nil {
				g = &hostGroup{fields: fields}
				groups[key] = g
				order = append(order, key)
			}
			name := NodeName(*h)
			if !seen[[2]string{key, name}] {
				seen[[2]string{key, name}] = true
				g.nodes = append(g.nodes, name)
			}
		}
	}
	out := make([]*hostGroup, 0, len(order))
	for _, k := range order {
		slices.SortFunc(groups[k].nodes, hostlist.Compare)
		out = append(out, groups[k])
	}
	sort.SliceStable(out, func(i, j int) bool { return compressHosts(out[i].nodes) < compressHosts(out[j].nodes) })
	r.groups = out
	return out
}

// systemRows are the system table's rows, in the order article 001 lists
// its cluster.
var systemRows = []string{"CPU", "Cores", "Memory", "OS", "Kernel", "MPI", "MPI library", "InfiniBand", "Network", "Governor"}

// systemSection describes the nodes the runs ran on, from the provenance
// the runner recorded, as a table with one column per kind of node, and
// calls out in a box the ways the nodes of one run differ.
func (r *Report) systemSection(d *content) {
	d.heading("System", h1Size, 80)
	groups := r.hostGroups()
	bare := 0
	var bareNodes []string
	for _, run := range r.runs {
		if len(run.Hosts) == 0 {
			bare++
			bareNodes = append(bareNodes, run.Nodes...)
		}
	}
	if len(groups) == 0 && bare == 0 {
		d.para("No runs.", "", bodySize, black)
		return
	}
	var nodeDiffs, mpiDiffs []string
	for _, m := range r.mismatches() {
		if len(fieldsOf([]string{m})) > 0 {
			nodeDiffs = append(nodeDiffs, m)
		} else {
			mpiDiffs = append(mpiDiffs, m)
		}
	}
	if len(nodeDiffs) > 0 {
		d.warningBox("Warning: the nodes of a run are not alike — results between them may differ for that reason.", nodeDiffs)
	}
	if len(mpiDiffs) > 0 {
		d.warningBox("Warning: a tool ran with another MPI than its launcher's — the MPI row does not say what ran.", mpiDiffs)
	}
	const perTable = 3
	for start := 0; start < len(groups); start += perTable {
		end := min(start+perTable, len(groups))
		part := groups[start:end]
		cols := []column{{title: "", width: 74}}
		for _, g := range part {
			n := len(g.nodes)
			cols = append(cols, column{title: fmt.Sprintf("%s (%d node%s)", compressHosts(g.nodes), n, results.Plural(n))})
		}
		t := d.table(cols)
		t.maxLines = 4
		for _, row := range systemRows {
			cells := []string{row}
			anyValue := false
			for _, g := range part {
				v := fieldOf(g.fields, row)
				anyValue = anyValue || v != ""
				cells = append(cells, orDash(v))
			}
			if anyValue {
				t.row(cells, black, nil)
			}
		}
		d.space(8)
	}
	if bare > 0 {
		verb := "carry"
		if bare == 1 {
			verb = "carries"
		}
		text := fmt.Sprintf("%d run%s %s no host provenance (tool output ingested from files records none)", bare, results.Plural(bare), verb)
		if nodes := compressHosts(bareNodes); nodes != "" {
			text += "; their nodes: " + nodes
		}
		if s := r.systemLine(); s != "" && len(groups) == 0 {
			text += "; system: " + s
		}
		d.para(text+".", "", smallSize, grey)
	}
	d.space(6)
}

func fieldOf(fields [][2]string, key string) string {
	for _, f := range fields {
		if f[0] == key {
			return f[1]
		}
	}
	return ""
}

// NodeName is the name a node is known by in the report: Slurm's, else
// its hostname.
func NodeName(h results.Host) string {
	if h.NodeName != "" {
		return h.NodeName
	}
	return h.Hostname
}

// HostFields is what the report's system table says about a node (CPU,
// cores, memory, OS, kernel, MPI, the MPI library the tool loaded,
// InfiniBand, network, governor), in the table's order, empty fields left
// out.
func HostFields(h results.Host) [][2]string {
	var f [][2]string
	add := func(k, v string) {
		if v = strings.TrimSpace(v); v != "" {
			f = append(f, [2]string{k, v})
		}
	}
	add("CPU", h.CPUModel)
	var topo []string
	if h.Sockets > 0 {
		topo = append(topo, fmt.Sprintf("%d socket%s", h.Sockets, results.Plural(h.Sockets)))
	}
	if h.Cores > 0 {
		topo = append(topo, fmt.Sprintf("%d cores", h.Cores))
	}
	if h.Threads > 0 && h.Threads != h.Cores {
		topo = append(topo, fmt.Sprintf("%d threads", h.Threads))
	}
	add("Cores", strings.Join(topo, ", "))
	var mem []string
	if h.MemoryBytes > 0 {
		mem = append(mem, sizes.Approx(h.MemoryBytes))
	}
	if h.NUMANodes > 0 {
		mem = append(mem, fmt.Sprintf("%d NUMA node%s", h.NUMANodes, results.Plural(h.NUMANodes)))
	}
	add("Memory", strings.Join(mem, ", "))
	add("OS", h.OS)
	add("Kernel", h.Kernel)
	add("MPI", h.MPI)
	add("MPI library", mpiLibrary(h))
	var ib []string
	for _, p := range h.IB {
		s := fmt.Sprintf("%s port %d", p.Device, p.Port)
		for _, x := range []string{p.State, p.Rate, p.LinkLayer} {
			if x != "" {
				s += " " + x
			}
		}
		ib = append(ib, s)
	}
	add("InfiniBand", strings.Join(ib, "; "))
	var nets []string
	for _, n := range h.Net {
		s := n.Name
		if n.SpeedMbps > 0 {
			s += fmt.Sprintf(" %d Mb/s", n.SpeedMbps)
		}
		if n.MTU > 0 {
			s += fmt.Sprintf(" MTU %d", n.MTU)
		}
		nets = append(nets, s)
	}
	add("Network", strings.Join(nets, "; "))
	add("Governor", h.Governor)
	return f
}
