package compare

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// matrixRun adds a run of the matrix kernel on nodes: every ordered pair
// in rounds, latency and bandwidth each (bw(from, to) gives the latter),
// as sbench-runner writes it. The round a pair was measured in differs
// from run to run; it only numbers the sample.
func (s *sideBuilder) matrixRun(nodes []string, shift int, bw func(from, to string) float64) int64 {
	id := s.run("matrix", "all-pairs", map[string]string{"fabric": "ib"})
	round := shift
	for a, from := range nodes {
		for b, to := range nodes {
			if a == b {
				continue
			}
			round++
			tags := func() map[string]string {
				return map[string]string{"from": from, "to": to, "round": strconv.Itoa(round % (len(nodes) - 1)), "schedule": "rounds"}
			}
			s.Samples = append(s.Samples,
				store.Sample{RunID: id, Sample: results.Sample{Metric: "matrix_latency", Unit: "us", Value: 1.2, Pair: []int{a, b}, Tags: tags()}},
				store.Sample{RunID: id, Sample: results.Sample{Metric: "matrix_bandwidth", Unit: "MB/s", Value: bw(from, to), Pair: []int{a, b}, Tags: tags()}})
		}
	}
	return id
}

func nodes(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%02d", prefix, i+1)
	}
	return out
}

// TestNodePairsAreRows: a matrix run's pairs are the rows of one table
// per metric, not a table each; the round a pair was measured in keeps
// nothing apart; the summary line names the worst pair. Each pair is
// tested on its runs: 4 nodes' 26 tested rows need 5 runs a side for the
// bad node's 6 pairs to stand out of the family, 16 nodes' 482 rows 6.
func TestNodePairsAreRows(t *testing.T) {
	for _, c := range []struct{ n, runs int }{{4, 5}, {16, 6}} {
		n := c.n
		a, b := newSides("week=1", "week=2")
		for k := range c.runs {
			a.matrixRun(nodes("n", n), k, func(string, string) float64 { return 12000 })
			b.matrixRun(nodes("n", n), 5+k, func(from, to string) float64 {
				if from == "n03" || to == "n03" {
					return 7000 // a bad cable on n03
				}
				return 12000
			})
		}
		res := mustBuild(t, a.Side, b.Side)
		if len(res.Tables) != 2 {
			t.Fatalf("%d nodes: %d tables, want one per metric", n, len(res.Tables))
		}
		bw := res.Tables[0]
		if bw.Metric != "matrix_bandwidth" || len(bw.Rows) != n*(n-1) || bw.Pairs == nil {
			t.Fatalf("%d nodes: table %s with %d rows, pairs %+v", n, bw.Metric, len(bw.Rows), bw.Pairs)
		}
		p := bw.Pairs
		if p.Pairs != n*(n-1) || p.Both != n*(n-1) || p.Worse != 2*(n-1) || p.Better != 0 || p.Worst == nil ||
			!strings.Contains(p.Worst.Pair.String(), "n03") || math.Abs(*p.Worst.Delta-(7000.0/12000-1)) > 1e-9 {
			t.Errorf("%d nodes: summary %+v", n, p)
		}
		if res.Regressions() != 2*(n-1) {
			t.Errorf("%d nodes: %d regressions, want the %d pairs of n03", n, res.Regressions(), 2*(n-1))
		}
		if lat := res.Tables[1]; lat.Pairs == nil || lat.Pairs.Worse != 0 || len(lat.Pairs.All) != 1 || lat.Pairs.All[0].Change != Same {
			t.Errorf("%d nodes: latency summary %+v", n, lat.Pairs)
		}
		if r := bw.Rows[0]; r.Old.N != c.runs || !r.Tested {
			t.Errorf("%d nodes: row %+v: want a pair's %d runs, tested", n, r, c.runs)
		}
	}
	// One run a side tells no pair from another: the rows are not judged,
	// and the pairs taken together (12 a side) are, but do not gate.
	a, b := newSides("week=1", "week=2")
	a.matrixRun(nodes("n", 4), 0, func(string, string) float64 { return 12000 })
	b.matrixRun(nodes("n", 4), 5, func(from, to string) float64 {
		if from == "n03" || to == "n03" {
			return 7000
		}
		return 12000
	})
	res := mustBuild(t, a.Side, b.Side)
	if p := res.Tables[0].Pairs; p.Worse != 0 || res.Regressions() != 0 || res.Tables[0].Rows[0].Tested || !p.All[0].Tested {
		t.Errorf("one run a side: summary %+v, %d regressions: want no pair judged", p, res.Regressions())
	}
}

// TestNodePairsOfTwoSystems: two systems share no node pair; their pairs
// are compared taken together, and that comparison is the verdict.
func TestNodePairsOfTwoSystems(t *testing.T) {
	a, b := newSides("system=alpha", "system=beta")
	for week := range 3 {
		a.matrixRun(nodes("a", 6), week, func(from, to string) float64 { return 24000 + float64(len(from+to)*week) })
		b.matrixRun(nodes("b", 6), week, func(from, to string) float64 { return 12000 + float64(week) })
	}
	res := mustBuild(t, a.Side, b.Side)
	bw := res.Tables[0]
	if p := bw.Pairs; p == nil || p.Both != 0 || p.OnlyOld != 30 || p.OnlyNew != 30 || !p.Judges() || len(p.All) != 1 ||
		p.All[0].Change != Worse || p.All[0].Old.N != 30 || p.All[0].New.N != 30 || !p.All[0].Tested {
		t.Fatalf("summary %+v", bw.Pairs)
	}
	if res.Regressions() != 1 {
		t.Errorf("%d regressions, want the pairs taken together", res.Regressions())
	}
	var buf bytes.Buffer
	if err := res.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "compare-pairs.txt"), buf.Bytes())
	if n := strings.Count(buf.String(), "\n"); n > 40 {
		t.Errorf("%d lines for two tables of 30 pairs each side: the pairs of one side are listed", n)
	}
}

// TestPairsWithSizes: the pairs kernel's rows are pairs and sizes, in
// pair then size order; one pair only is named in the heading, as before.
func TestPairsWithSizes(t *testing.T) {
	a, b := newSides("run=a", "run=b")
	for _, s := range slices.Repeat([]*sideBuilder{a, b}, 5) {
		r := s.run("pairs", "inter", map[string]string{"fabric": "ib"})
		for p, pair := range [][2]string{{"n1", "n5"}, {"n2", "n6"}} {
			for _, x := range []float64{1024, 4096} {
				v := 5000.0
				if s == b && p == 1 && x == 4096 {
					v = 4000
				}
				s.Samples = append(s.Samples, store.Sample{RunID: r, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(x), XUnit: "bytes",
					Value: v, Pair: []int{p, p + 4}, Tags: map[string]string{"from": pair[0], "to": pair[1], "placement": "inter-node"}}})
			}
		}
		one := s.run("osu_bw", "", map[string]string{"fabric": "ib"})
		s.Samples = append(s.Samples, store.Sample{RunID: one, Sample: results.Sample{Metric: "bandwidth", Unit: "MB/s", X: results.F(8), XUnit: "bytes", Value: 100, Pair: []int{0, 1}}})
	}
	res := mustBuild(t, a.Side, b.Side)
	var got []string
	for _, tb := range res.Tables {
		got = append(got, tb.Heading())
	}
	if len(res.Tables) != 2 || res.Tables[0].Pairs != nil || strings.Join(res.Tables[0].Config, " ") != "pair=0:1" {
		t.Fatalf("tables %q", got)
	}
	var rows []string
	for _, r := range res.Tables[1].Rows {
		rows = append(rows, r.Pair.String()+"@"+formatX(r.X, "bytes")+":"+string(r.Change))
	}
	want := "n1→n5 (inter-node)@1 KiB:same n1→n5 (inter-node)@4 KiB:same n2→n6 (inter-node)@1 KiB:same n2→n6 (inter-node)@4 KiB:worse"
	if strings.Join(rows, " ") != want {
		t.Errorf("rows\n%s\nwant\n%s", strings.Join(rows, " "), want)
	}
	header, cells := res.Cells(res.Tables[1])
	if strings.Join(header, "|") != "pair|size|run=a|run=b|vs run=a|" || cells[4][0] != "all pairs" || cells[5][1] != "4 KiB" {
		t.Errorf("cells %q %q", header, cells)
	}
}
