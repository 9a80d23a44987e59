package kernels

import (
	"fmt"
	"slices"
	"testing"
)

// checkRounds checks a schedule of n nodes: no node twice in a round, no
// pair twice, pairs as [a, b] with a < b; it returns how many pairs came.
func checkRounds(t *testing.T, n int, rounds [][][2]int) int {
	t.Helper()
	seen := make([]bool, n*n)
	busy := make([]int, n) // the round a node was last in, +1
	pairs := 0
	for r, round := range rounds {
		for _, pr := range round {
			a, b := pr[0], pr[1]
			if a < 0 || b >= n || a >= b {
				t.Fatalf("n=%d round %d: pair %v", n, r, pr)
			}
			if busy[a] == r+1 || busy[b] == r+1 {
				t.Fatalf("n=%d round %d: a node of %v is in two pairs", n, r, pr)
			}
			if seen[a*n+b] {
				t.Fatalf("n=%d round %d: pair %v again", n, r, pr)
			}
			busy[a], busy[b], seen[a*n+b] = r+1, r+1, true
			pairs++
		}
	}
	return pairs
}

// TestMatrixRounds: the circle method up to 1,024 nodes — every pair of
// nodes in exactly one round (so every ordered pair measured once in each
// direction), no node twice in a round, n/2 pairs per round, n-1 rounds
// for even n and n for odd n, the node sitting out a different one each
// round.
func TestMatrixRounds(t *testing.T) {
	if MatrixRounds(1) != nil || MatrixRounds(0) != nil {
		t.Error("rounds for fewer than 2 nodes")
	}
	for n := 2; n <= 1024; n++ {
		if n > 64 && n%61 != 0 && n&(n-1) != 0 && n != 1023 && n != 1000 {
			continue // all up to 64, then a spread of odd, even and powers of 2
		}
		rounds := MatrixRounds(n)
		want := n - 1
		if n%2 == 1 {
			want = n
		}
		if len(rounds) != want {
			t.Fatalf("n=%d: %d rounds, want %d", n, len(rounds), want)
		}
		sitOut := map[int]bool{}
		for r, round := range rounds {
			if len(round) != n/2 {
				t.Fatalf("n=%d round %d: %d pairs, want %d", n, r, len(round), n/2)
			}
			if !slices.IsSortedFunc(round, cmpPair) {
				t.Fatalf("n=%d round %d: pairs not in order: %v", n, r, round)
			}
			if n%2 == 1 {
				in := map[int]bool{}
				for _, pr := range round {
					in[pr[0]], in[pr[1]] = true, true
				}
				for x := 0; x < n; x++ {
					if !in[x] {
						sitOut[x] = true
					}
				}
			}
		}
		if got := checkRounds(t, n, rounds); got != n*(n-1)/2 {
			t.Fatalf("n=%d: %d pairs, want %d", n, got, n*(n-1)/2)
		}
		if n%2 == 1 && len(sitOut) != n {
			t.Fatalf("n=%d: %d nodes sat out, want each once", n, len(sitOut))
		}
	}
	if got := fmt.Sprint(MatrixRounds(4)); got != "[[[0 3] [1 2]] [[0 2] [1 3]] [[0 1] [2 3]]]" {
		t.Errorf("4 nodes: %s", got)
	}
	if got := fmt.Sprint(MatrixRounds(3)); got != "[[[1 2]] [[0 2]] [[0 1]]]" {
		t.Errorf("3 nodes: %s", got)
	}
}

func TestSequentialRounds(t *testing.T) {
	for _, n := range []int{2, 3, 7, 64} {
		rounds := SequentialRounds(n)
		if got := checkRounds(t, n, rounds); len(rounds) != n*(n-1)/2 || got != len(rounds) {
			t.Errorf("n=%d: %d rounds, %d pairs", n, len(rounds), got)
		}
		for r, round := range rounds {
			if len(round) != 1 {
				t.Fatalf("n=%d round %d: %v", n, r, round)
			}
		}
	}
	if got := fmt.Sprint(SequentialRounds(3)); got != "[[[0 1]] [[0 2]] [[1 2]]]" {
		t.Errorf("3 nodes: %s", got)
	}
}

// TestPackRounds: the re-tests' rounds hold every suspect pair once,
// disjoint, in the order given, in at most 2d-1 rounds.
func TestPackRounds(t *testing.T) {
	for _, tt := range []struct {
		n     int
		pairs [][2]int
		want  string
	}{
		{4, nil, "[]"},
		// Disjoint pairs share one round.
		{8, [][2]int{{0, 1}, {2, 3}, {4, 7}}, "[[[0 1] [2 3] [4 7]]]"},
		// A bad node is in every pair: one round each.
		{5, [][2]int{{0, 2}, {1, 2}, {2, 3}, {2, 4}}, "[[[0 2]] [[1 2]] [[2 3]] [[2 4]]]"},
		{6, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 5}}, "[[[0 1] [2 3]] [[1 2] [3 4] [0 5]]]"},
	} {
		if got := fmt.Sprint(PackRounds(tt.n, tt.pairs)); got != tt.want && !(got == "[]" && tt.pairs == nil) {
			t.Errorf("PackRounds(%d, %v) = %s, want %s", tt.n, tt.pairs, got, tt.want)
		}
	}
	// Every pair of 200 nodes (degree 199): beyond 64 rounds, so the
	// bitmaps grow.
	n := 200
	var all [][2]int
	for _, round := range MatrixRounds(n) {
		all = append(all, round...)
	}
	rounds := PackRounds(n, all)
	if got := checkRounds(t, n, rounds); got != len(all) || len(rounds) > 2*(n-1)-1 {
		t.Errorf("%d pairs in %d rounds, want %d in at most %d", got, len(rounds), len(all), 2*(n-1)-1)
	}
}
