package kernels

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
)

// The matrix kernel's schedules of node pairs: the runner measures by
// them, and the synthetic screenings of the tests (internal/fleet) are
// laid out by them.

// MatrixRounds is the round-robin tournament of n nodes by the circle
// method: rounds of disjoint pairs [a, b] (a < b), every pair of nodes in
// exactly one round. For even n, n-1 rounds of n/2 pairs: node n-1 stays
// in place and meets node r in round r, and the others pair up as x+y ≡ 2r
// (mod n-1). For odd n, the same with a phantom node n: n rounds of
// (n-1)/2 pairs, node r sitting out round r. Pairs are in order of a.
func MatrixRounds(n int) [][][2]int {
	if n < 2 {
		return nil
	}
	m := n + n%2 // nodes with the phantom
	rounds := make([][][2]int, m-1)
	for r := range rounds {
		round := make([][2]int, 0, n/2)
		if m == n {
			round = append(round, [2]int{r, m - 1})
		}
		for i := 1; i < m/2; i++ {
			a, b := (r+i)%(m-1), (r-i+m-1)%(m-1)
			round = append(round, [2]int{min(a, b), max(a, b)})
		}
		slices.SortFunc(round, cmpPair)
		rounds[r] = round
	}
	return rounds
}

// SequentialRounds is one pair per round, in node order: (0,1), (0,2) …
// (n-2,n-1).
func SequentialRounds(n int) [][][2]int {
	var rounds [][][2]int
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			rounds = append(rounds, [][2]int{{a, b}})
		}
	}
	return rounds
}

// PackRounds puts pairs of n nodes into rounds of disjoint pairs, in the
// given order, each into the first round where neither of its nodes is
// busy yet (a greedy edge colouring: at most 2d-1 rounds for nodes in d
// pairs at most). Pairs keep their order within a round.
func PackRounds(n int, pairs [][2]int) [][][2]int {
	busy := make([][]uint64, n) // per node, a bit per round
	var rounds [][][2]int
	for _, pr := range pairs {
		a, b := busy[pr[0]], busy[pr[1]]
		r := 0
		for w := 0; ; w++ {
			var used uint64
			if w < len(a) {
				used |= a[w]
			}
			if w < len(b) {
				used |= b[w]
			}
			if used != math.MaxUint64 {
				r = 64*w + bits.TrailingZeros64(^used)
				break
			}
		}
		for _, nd := range pr {
			for len(busy[nd]) <= r/64 {
				busy[nd] = append(busy[nd], 0)
			}
			busy[nd][r/64] |= 1 << (r % 64)
		}
		for len(rounds) <= r {
			rounds = append(rounds, nil)
		}
		rounds[r] = append(rounds[r], pr)
	}
	return rounds
}

func cmpPair(p, q [2]int) int { return cmp.Or(p[0]-q[0], p[1]-q[1]) }
