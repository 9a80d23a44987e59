package fleet

import "testing"

// Every unordered pair once, n/2 disjoint pairs a round (n−1 rounds for
// even n, n for odd), up to 1,024 nodes.
func TestRounds(t *testing.T) {
	for _, n := range []int{2, 3, 4, 7, 8, 64, 255, 1024} {
		rs := rounds(n)
		want := n - 1
		if n%2 == 1 {
			want = n
		}
		if len(rs) != want {
			t.Fatalf("n=%d: %d rounds, want %d", n, len(rs), want)
		}
		seen := map[[2]int]bool{}
		for r, round := range rs {
			if len(round) != n/2 {
				t.Fatalf("n=%d round %d: %d pairs, want %d", n, r, len(round), n/2)
			}
			busy := map[int]bool{}
			for _, p := range round {
				if busy[p[0]] || busy[p[1]] || p[0] == p[1] {
					t.Fatalf("n=%d round %d: pair %v not disjoint", n, r, p)
				}
				busy[p[0]], busy[p[1]] = true, true
				k := [2]int{min(p[0], p[1]), max(p[0], p[1])}
				if seen[k] {
					t.Fatalf("n=%d: pair %v twice", n, k)
				}
				seen[k] = true
			}
		}
		if len(seen) != n*(n-1)/2 {
			t.Fatalf("n=%d: %d pairs, want %d", n, len(seen), n*(n-1)/2)
		}
	}
}

func TestBundlesValidate(t *testing.T) {
	for _, b := range Bundles(Spec{Nodes: 8, SlowNodes: []string{"n3"}, Transient: [][2]string{{"n1", "n2"}}}) {
		if err := b.Validate(); err != nil {
			t.Fatalf("%s: %v", b.Benchmark.Name, err)
		}
	}
}
