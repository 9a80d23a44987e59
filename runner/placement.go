package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
)

// Placement is how a launch's ranks were planned over nodes (--plan-nodes,
// --plan-ppn): on Nodes nodes, PerNode ranks on each at most (exactly, when
// the ranks fill them). The zero Placement is no plan: nothing to judge.
type Placement struct {
	Nodes, PerNode int
}

// IsZero reports whether there is no plan.
func (p Placement) IsZero() bool { return p == Placement{} }

// String says the plan as the reason of an invalid run does: "2 nodes ×
// 1 rank".
func (p Placement) String() string {
	return fmt.Sprintf("%d node%s × %d rank%s", p.Nodes, results.Plural(p.Nodes), p.PerNode, results.Plural(p.PerNode))
}

// check refuses a plan that no launch can have.
func (p Placement) check() error {
	if !p.IsZero() && (p.Nodes < 1 || p.PerNode < 1) {
		return fmt.Errorf("planned placement %d nodes × %d ranks: both must be at least 1", p.Nodes, p.PerNode)
	}
	return nil
}

// maxPlacementNodes is how many nodes the reason of a misplaced run names
// one by one; it sums up the rest.
const maxPlacementNodes = 8

// judgePlacement compares where the ranks ran (hosts, each with its
// ranks, as the bootstrap met them) with the plan, and says how they
// differ, or "" when they agree: the ranks were on as many nodes as
// planned, none holding more than planned. Under an MPI launcher the
// nodes are the ranks' hostnames; the tool a rank wraps runs beside it.
func judgePlacement(plan Placement, hosts []results.Host) string {
	if plan.IsZero() || len(hosts) == 0 {
		return ""
	}
	crowded := slices.ContainsFunc(hosts, func(h results.Host) bool { return len(h.Ranks) > plan.PerNode })
	if len(hosts) == plan.Nodes && !crowded {
		return ""
	}
	var where []string
	for i, h := range hosts {
		if i == maxPlacementNodes {
			where = append(where, fmt.Sprintf("… and %d more node%s", len(hosts)-i, results.Plural(len(hosts)-i)))
			break
		}
		name := h.NodeName
		if name == "" {
			name = h.Hostname
		}
		where = append(where, name+" rank"+results.Plural(len(h.Ranks))+" "+rankList(h.Ranks))
	}
	return fmt.Sprintf("placement: planned %s; ran on %d node%s: %s", plan, len(hosts), results.Plural(len(hosts)), strings.Join(where, ", "))
}

// rankList writes sorted ranks with runs of three or more as ranges:
// "0,1", "0-3,8".
func rankList(ranks []int) string {
	var parts []string
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, strconv.Itoa(ranks[i])+"-"+strconv.Itoa(ranks[j]))
		case j > i:
			parts = append(parts, strconv.Itoa(ranks[i]), strconv.Itoa(ranks[j]))
		default:
			parts = append(parts, strconv.Itoa(ranks[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// applyPlacement makes a bundle whose ranks did not run as planned
// invalid, the placements in its reason. A failed run keeps its own
// cause; its hosts still say where the ranks were.
func applyPlacement(b *results.Bundle, plan Placement) {
	if b.Status == results.StatusFailed {
		return
	}
	reason := judgePlacement(plan, b.Hosts)
	if reason == "" {
		return
	}
	b.Status = results.StatusInvalid
	if b.Error != "" {
		reason += "; " + b.Error
	}
	b.Error = reason
}
