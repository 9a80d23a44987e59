package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

func TestJudgePlacement(t *testing.T) {
	host := func(name string, ranks ...int) results.Host {
		return results.Host{Hostname: "h-" + name, NodeName: name, Ranks: ranks}
	}
	many := make([]results.Host, 10)
	for i := range many {
		many[i] = host(fmt.Sprintf("n%d", i+1), i)
	}
	for _, tt := range []struct {
		name  string
		plan  Placement
		hosts []results.Host
		want  string
	}{
		{"as planned, inter-node", Placement{2, 1}, []results.Host{host("n1", 0), host("n2", 1)}, ""},
		{"as planned, intra-node", Placement{1, 2}, []results.Host{host("n1", 0, 1)}, ""},
		// 3 ranks on 2 nodes of at most 2: srun's, ppr's and -ppn's 2+1.
		{"uneven, as planned", Placement{2, 2}, []results.Host{host("n1", 0, 1), host("n2", 2)}, ""},
		{"no plan", Placement{}, []results.Host{host("n1", 0, 1)}, ""},
		// The bug: mpirun -np 2 in an allocation of 2 nodes × 2.
		{"inter-node run on one node", Placement{2, 1}, []results.Host{host("n1", 0, 1)},
			"placement: planned 2 nodes × 1 rank; ran on 1 node: n1 ranks 0,1"},
		{"intra-node run on two nodes", Placement{1, 2}, []results.Host{host("n1", 0), host("n2", 1)},
			"placement: planned 1 node × 2 ranks; ran on 2 nodes: n1 rank 0, n2 rank 1"},
		{"as many nodes, one crowded", Placement{2, 2}, []results.Host{host("n1", 0, 1, 2), host("n2", 3)},
			"placement: planned 2 nodes × 2 ranks; ran on 2 nodes: n1 ranks 0-2, n2 rank 3"},
		{"no node name", Placement{2, 1}, []results.Host{{Hostname: "c001", Ranks: []int{0, 1}}},
			"placement: planned 2 nodes × 1 rank; ran on 1 node: c001 ranks 0,1"},
		{"ten nodes of eight", Placement{8, 1}, many,
			"placement: planned 8 nodes × 1 rank; ran on 10 nodes: n1 rank 0, n2 rank 1, n3 rank 2, n4 rank 3, n5 rank 4, n6 rank 5, n7 rank 6, n8 rank 7, … and 2 more nodes"},
	} {
		if got := judgePlacement(tt.plan, tt.hosts); got != tt.want {
			t.Errorf("%s: %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestRankList(t *testing.T) {
	for ranks, want := range map[string]string{"0": "0", "0 1": "0,1", "0 1 2 3 8": "0-3,8", "1 3 4 5 7 8": "1,3-5,7,8"} {
		var rs []int
		for _, f := range strings.Fields(ranks) {
			var r int
			fmt.Sscan(f, &r)
			rs = append(rs, r)
		}
		if got := rankList(rs); got != want {
			t.Errorf("%v: %q, want %q", rs, got, want)
		}
	}
}

// TestMisplacedRunIsInvalid: a run whose ranks ran elsewhere than its
// plan says is measured, and archived invalid with both placements in
// its reason, before the reasons of its failed checks; as planned, it is
// ok. For a native kernel and for a wrapped tool alike.
func TestMisplacedRunIsInvalid(t *testing.T) {
	fastStops(t)
	native := func(nodes []string, perNode int) *step {
		return newStep(t, nodes, perNode, "latency", map[string]string{"sizes": "1", "iterations": "10", "warmup": "1"})
	}
	tool := func(nodes []string, perNode int) *step {
		return execStep(t, nodes, perNode, &Exec{Argv: []string{"sh", "-c", "if [ {rank} = 0 ]; then " + osuLatency + "; fi"}})
	}
	for name, newRun := range map[string]func([]string, int) *step{"native": native, "tool": tool} {
		t.Run(name, func(t *testing.T) {
			s := newRun([]string{"n1"}, 2)
			planned := s.edit
			s.edit = func(rank int, cfg *Config) {
				if planned != nil {
					planned(rank, cfg)
				}
				cfg.Plan = Placement{Nodes: 2, PerNode: 1}
				cfg.Checks = []CheckSpec{mustCheck(t, "latency@1<0.001")}
			}
			b := s.bundle(s.run())
			want := "placement: planned 2 nodes × 1 rank; ran on 1 node: n1 ranks 0,1; check latency@1<0.001 failed"
			if b.Status != results.StatusInvalid || !strings.HasPrefix(b.Error, want) || len(b.Samples) == 0 {
				t.Errorf("status %s, %d samples, error %q; want invalid, measured, %q…", b.Status, len(b.Samples), b.Error, want)
			}

			s = newRun([]string{"n1", "n2"}, 1)
			planned = s.edit
			s.edit = func(rank int, cfg *Config) {
				if planned != nil {
					planned(rank, cfg)
				}
				cfg.Plan = Placement{Nodes: 2, PerNode: 1}
			}
			if b := s.runOK(t); len(b.Hosts) != 2 || fmt.Sprint(b.Hosts[0].Ranks, b.Hosts[1].Ranks) != "[0] [1]" {
				t.Errorf("hosts %+v", b.Hosts)
			}
		})
	}
}

func TestPlanMustBePositive(t *testing.T) {
	s := newStep(t, []string{"n1", "n2"}, 1, "latency", map[string]string{"sizes": "1"})
	cfg := s.config(0)
	cfg.Plan = Placement{Nodes: 2}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "planned placement 2 nodes × 0 ranks") {
		t.Errorf("%v", err)
	}
}
