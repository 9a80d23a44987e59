package reports

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// fieldsCache keeps HostFields of hosts that runs share (store.EachRun
// decodes each host once): a year of runs on the same nodes is described
// once per node, not once per run.
type fieldsCache map[*results.Host][][2]string

func (c fieldsCache) of(h *results.Host) [][2]string {
	if f, ok := c[h]; ok {
		return f
	}
	f := HostFields(*h)
	c[h] = f
	return f
}

// hostMismatches finds the runs whose nodes differ in something the system
// table shows — one port at half rate, another kernel, less memory — which
// is what makes one node pair slower than the others. Each difference is
// one sentence naming the field and which nodes have which value. The
// MPI library a tool loaded (a field too: nodes that loaded different
// ones differ in it) is also held to its node's launcher (mpiMismatches).
func hostMismatches(runs []store.Run) []string {
	var out []string
	seen := map[string]bool{}
	fc := fieldsCache{}
	// Runs on the same nodes share their hosts (store.EachRun): one look
	// at each list of hosts is enough.
	type hostList struct {
		first *results.Host
		n     int
	}
	done := map[hostList]bool{}
	for _, run := range runs {
		if len(run.Hosts) < 2 {
			continue
		}
		if k := (hostList{&run.Hosts[0], len(run.Hosts)}); done[k] {
			continue
		} else {
			done[k] = true
		}
		values := map[string]map[string][]string{} // field -> value -> nodes
		var fields []string
		for i := range run.Hosts {
			h := &run.Hosts[i]
			got := map[string]string{}
			for _, f := range fc.of(h) {
				got[f[0]] = f[1]
			}
			for _, f := range systemRows {
				v := got[f]
				if v == "" {
					v = "(none)"
				}
				if values[f] == nil {
					values[f] = map[string][]string{}
					fields = append(fields, f)
				}
				values[f][v] = append(values[f][v], NodeName(*h))
			}
		}
		for _, f := range fields {
			if len(values[f]) < 2 {
				continue
			}
			var parts []string
			for _, v := range slices.Sorted(maps.Keys(values[f])) {
				nodes := values[f][v]
				slices.SortFunc(nodes, hostlist.Compare)
				parts = append(parts, fmt.Sprintf("%s on %s", v, compressHosts(nodes)))
			}
			msg := fmt.Sprintf("%s differs between the nodes of one run: %s.", f, strings.Join(parts, "; "))
			if !seen[msg] {
				seen[msg] = true
				out = append(out, msg)
			}
		}
	}
	return append(out, mpiMismatches(runs)...)
}

// mpiLibrary says which MPI library a node's tool loaded and from where:
// "Open MPI 4.1.4 (/usr/lib/x86_64-linux-gnu/libmpi.so.40)"; "" when
// the runner found none (a native kernel, a tool without MPI).
func mpiLibrary(h results.Host) string {
	switch {
	case h.MPILibraryPath == "":
		return h.MPILibrary
	case h.MPILibrary == "":
		return "unknown version (" + h.MPILibraryPath + ")"
	}
	return h.MPILibrary + " (" + h.MPILibraryPath + ")"
}

// mpiMismatches finds the nodes whose tool loaded another MPI than the
// one their launcher in PATH names (mpirun --version): the tool was built
// against, or finds through RPATH or LD_LIBRARY_PATH, another MPI than
// the job set up, and what the archive says ran would be wrong. Each
// pair of versions is one sentence naming the tools and their nodes.
func mpiMismatches(runs []store.Run) []string {
	type pair struct{ launcher, library string }
	nodes := map[pair][]string{}
	tools := map[pair][]string{}
	var order []pair
	for _, run := range runs {
		for _, h := range run.Hosts {
			if h.MPI == "" || h.MPILibrary == "" || sameMPI(h.MPI, h.MPILibrary) {
				continue
			}
			p := pair{h.MPI, mpiLibrary(h)}
			if _, ok := nodes[p]; !ok {
				order = append(order, p)
			}
			if n := NodeName(h); !slices.Contains(nodes[p], n) {
				nodes[p] = append(nodes[p], n)
			}
			tool := cmp.Or(run.Tool, run.Benchmark)
			if !slices.Contains(tools[p], tool) {
				tools[p] = append(tools[p], tool)
			}
		}
	}
	var out []string
	for _, p := range order {
		slices.SortFunc(nodes[p], hostlist.Compare)
		slices.Sort(tools[p])
		out = append(out, fmt.Sprintf("The MPI library the tool loaded is not the launcher's: %s loaded %s where the MPI in PATH is %s, on %s.",
			strings.Join(tools[p], ", "), p.library, p.launcher, compressHosts(nodes[p])))
	}
	return out
}

// sameMPI reports whether a launcher's MPI ("Open MPI 4.1.4", "MPICH
// (Hydra) 4.0", Intel MPI's "… Version 2021.10 Build …") and a library's
// ("MPICH 4.0.2") can be the same: the same family, and one version a
// prefix of the other at a dot (Hydra says 4.0 of MPICH 4.0.2). What
// cannot be told apart is taken as the same.
func sameMPI(launcher, library string) bool {
	fl, vl := mpiIdent(launcher)
	fb, vb := mpiIdent(library)
	if fl == "" || fb == "" || vl == "" || vb == "" {
		return true
	}
	if fl != fb {
		return false
	}
	short, long := vl, vb
	if len(short) > len(long) {
		short, long = long, short
	}
	return long == short || strings.HasPrefix(long, short+".")
}

var mpiVersionRE = regexp.MustCompile(`\d+(\.\d+)+`)

// mpiIdent is an MPI's family (openmpi, mpich, mvapich, intel) and
// dotted version, from how launchers and libraries name themselves.
func mpiIdent(s string) (family, version string) {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "open mpi"), strings.Contains(l, "openrte"):
		family = "openmpi"
	case strings.Contains(l, "intel"):
		family = "intel"
	case strings.Contains(l, "mvapich"):
		family = "mvapich"
	case strings.Contains(l, "mpich"), strings.Contains(l, "hydra"):
		family = "mpich"
	}
	return family, mpiVersionRE.FindString(s)
}

// fieldsOf names the fields hostMismatches' sentences are about, sorted.
func fieldsOf(mismatches []string) []string {
	set := map[string]bool{}
	for _, m := range mismatches {
		if f, _, ok := strings.Cut(m, " differs"); ok {
			set[f] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
