package reports

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sbench/sbench/slurm/hostlist"
	"github.com/sbench/sbench/store"
)

// hostMismatches finds the runs whose nodes differ in something the system
// table shows — one port at half rate, another kernel, less memory — which
// is what makes one node pair slower than the others. Each difference is
// one sentence naming the field and which nodes have which value.
func hostMismatches(runs []store.Run) []string {
	var out []string
	seen := map[string]bool{}
	for _, run := range runs {
		if len(run.Hosts) < 2 {
			continue
		}
		values := map[string]map[string][]string{} // field -> value -> nodes
		var fields []string
		for _, h := range run.Hosts {
			got := map[string]string{}
			for _, f := range hostFields(h) {
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
				values[f][v] = append(values[f][v], nodeName(h))
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
	return out
}

// mismatchFields names the fields the nodes of some run differ in, sorted.
func mismatchFields(runs []store.Run) []string {
	set := map[string]bool{}
	for _, m := range hostMismatches(runs) {
		if f, _, ok := strings.Cut(m, " differs"); ok {
			set[f] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
