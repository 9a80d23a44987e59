package hpl

import (
	"math"
	"strings"
	"testing"
)

const gib = 1 << 30

func TestSizeTable(t *testing.T) {
	for _, tc := range []struct {
		req      SizeRequest
		n        int
		grid     Grid
		reasons  []string
		noReason string
	}{
		// The acceptance case: 4 × 64 GiB, 36 ranks each, NB 192.
		{SizeRequest{Nodes: 4, MemPerNode: 64 * gib, RanksPerNode: 36, NB: 192}, 165696, Grid{12, 12},
			[]string{"4 node(s) × 64 GiB = 256 GiB", "N=165696 (863 blocks)", "144 ranks; P×Q=12×12"}, "time:"},
		// This machine: 24 GiB, 2 ranks, NB 128.
		{SizeRequest{Nodes: 1, MemPerNode: 24 * gib, RanksPerNode: 2, NB: 128}, 50688, Grid{1, 2}, nil, "warning"},
		{SizeRequest{Nodes: 2, MemPerNode: 16 * gib, RanksPerNode: 16, NB: 256, Fraction: 0.9}, 61952, Grid{4, 8},
			[]string{"may take 90%"}, "note:"},
		// Defaults: fraction 0.8, NB 192; a time from the Gflops estimate.
		{SizeRequest{Nodes: 1, MemPerNode: 1 << 20, RanksPerNode: 1, Gflops: 1}, 192, Grid{1, 1},
			[]string{"NB=192", "at 1 Gflops the solve takes about 0 s"}, ""},
		// A prime rank count has only the flat grid, and sbench says so.
		{SizeRequest{Nodes: 7, MemPerNode: 8 * gib, RanksPerNode: 1, NB: 200}, 77400, Grid{1, 7},
			[]string{"warning: 7 has no factor pair", "6 = 2x3"}, ""},
		{SizeRequest{Nodes: 2, MemPerNode: 8 * gib, RanksPerNode: 11, NB: 200}, 41400, Grid{2, 11},
			[]string{"note: the grid is far from square", "20 ranks = 4x5"}, "warning"},
	} {
		s, err := Size(tc.req)
		if err != nil {
			t.Errorf("%+v: %v", tc.req, err)
			continue
		}
		if s.N != tc.n || s.Grid != tc.grid {
			t.Errorf("%+v: N=%d grid %s, want N=%d grid %s", tc.req, s.N, s.Grid, tc.n, tc.grid)
		}
		checkSizing(t, tc.req, s)
		text := strings.Join(s.Reasons, "\n")
		for _, want := range tc.reasons {
			if !strings.Contains(text, want) {
				t.Errorf("%+v: reasons lack %q:\n%s", tc.req, want, text)
			}
		}
		if tc.noReason != "" && strings.Contains(text, tc.noReason) {
			t.Errorf("%+v: reasons hold %q:\n%s", tc.req, tc.noReason, text)
		}
	}
}

// checkSizing holds for every sizing: N is a multiple of NB, fits the
// budget, and one more block would not; the grid uses every rank.
func checkSizing(t *testing.T, req SizeRequest, s Sizing) {
	t.Helper()
	f := req.Fraction
	if f == 0 {
		f = DefaultFraction
	}
	budget := f * float64(req.MemPerNode) * float64(req.Nodes)
	next := float64(s.N + s.NB)
	if s.N%s.NB != 0 || 8*float64(s.N)*float64(s.N) > budget || 8*next*next <= budget {
		t.Errorf("%+v: N=%d NB=%d is not the largest multiple within %v bytes", req, s.N, s.NB, budget)
	}
	if s.P*s.Q != req.Nodes*req.RanksPerNode || s.P > s.Q || s.Ranks != s.P*s.Q {
		t.Errorf("%+v: grid %s for %d ranks", req, s.Grid, s.Ranks)
	}
	if s.MatrixBytes != 8*uint64(s.N)*uint64(s.N) || math.Abs(s.Fill-float64(s.MatrixBytes)/float64(s.MemBytes)) > 1e-12 || s.Fill > f {
		t.Errorf("%+v: matrix %d bytes, fill %v", req, s.MatrixBytes, s.Fill)
	}
}

func TestSizeRefusesNonsense(t *testing.T) {
	for _, tc := range []struct {
		req  SizeRequest
		want string
	}{
		{SizeRequest{Nodes: 0, MemPerNode: gib, RanksPerNode: 1}, "nodes 0"},
		{SizeRequest{Nodes: 1, MemPerNode: gib, RanksPerNode: 0}, "ranks per node 0"},
		{SizeRequest{Nodes: 1, MemPerNode: 0, RanksPerNode: 1}, "memory per node"},
		{SizeRequest{Nodes: 1, MemPerNode: gib, RanksPerNode: 1, Fraction: 1.5}, "fraction 1.5"},
		{SizeRequest{Nodes: 1, MemPerNode: gib, RanksPerNode: 1, Fraction: -0.1}, "fraction -0.1"},
		{SizeRequest{Nodes: 1, MemPerNode: gib, RanksPerNode: 1, NB: -4}, "NB -4"},
		{SizeRequest{Nodes: 1, MemPerNode: gib, RanksPerNode: 1, Gflops: math.NaN()}, "Gflops NaN"},
		{SizeRequest{Nodes: 1, MemPerNode: 256 << 10, RanksPerNode: 1}, "holds no 192×192 block"},
		{SizeRequest{Nodes: 1 << 20, MemPerNode: 1 << 62, RanksPerNode: 1}, "more memory than sbench can count"},
	} {
		if _, err := Size(tc.req); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "size HPL: ") {
			t.Errorf("%+v: error %v, want %q", tc.req, err, tc.want)
		}
	}
}

// Sizes of every shape: the invariants hold, N never overflows HPL's int.
func TestSizeInvariants(t *testing.T) {
	for _, nodes := range []int{1, 2, 3, 5, 16, 1000} {
		for _, mem := range []uint64{1 << 20, 3 * gib, 64 * gib, 1536 * gib} {
			for _, rpn := range []int{1, 2, 36, 128} {
				for _, nb := range []int{1, 64, 192, 384} {
					req := SizeRequest{Nodes: nodes, MemPerNode: mem, RanksPerNode: rpn, NB: nb, Fraction: 0.85}
					s, err := Size(req)
					if tooSmall := 8*float64(nb)*float64(nb) > 0.85*float64(mem)*float64(nodes); tooSmall {
						if err == nil {
							t.Errorf("%+v: N=%d, though not one block fits", req, s.N)
						}
						continue
					}
					if err != nil {
						t.Errorf("%+v: %v", req, err)
						continue
					}
					if s.N > math.MaxInt32 {
						t.Errorf("%+v: N=%d overflows HPL's int", req, s.N)
					}
					checkSizing(t, req, s)
				}
			}
		}
	}
}

func TestGridFor(t *testing.T) {
	for ranks, want := range map[int]Grid{
		0: {1, 1}, 1: {1, 1}, 2: {1, 2}, 4: {2, 2}, 6: {2, 3}, 7: {1, 7}, 12: {3, 4}, 36: {6, 6},
		72: {8, 9}, 144: {12, 12}, 1000: {25, 40}, 1024: {32, 32}, 2 * 1021: {2, 1021},
	} {
		if got := GridFor(ranks); got != want {
			t.Errorf("GridFor(%d) = %s, want %s", ranks, got, want)
		}
	}
}

func TestFlopsAndTime(t *testing.T) {
	if got, want := Flops(1000), 2.0/3.0*1e9+1.5e6; got != want {
		t.Errorf("Flops(1000) = %v, want %v", got, want)
	}
	// Article 000's HPL: N=20000 in 736.91 s was reported as 7.24 Gflops.
	if got := RunSeconds(20000, 7.24); math.Abs(got-736.91) > 0.5 {
		t.Errorf("RunSeconds(20000, 7.24) = %v, want about 736.91", got)
	}
	if RunSeconds(1000, 0) != 0 {
		t.Error("RunSeconds without a rate is not 0")
	}
}

// Memory sizes need a unit; one letter is binary, as Slurm means it, and
// "GB" decimal. Package sizes tests the rest of the syntax.
func TestParseBytes(t *testing.T) {
	for in, want := range map[string]uint64{
		"64GiB": 64 * gib, "64 GiB": 64 * gib, "64G": 64 * gib, "64g": 64 * gib, "64GB": 64e9, "1.5TiB": 1536 * gib,
		"512MiB": 512 << 20, "100 B": 100, "2Ki": 2048, "3kb": 3000, "1P": 1 << 50,
	} {
		if got, err := ParseBytes(in); err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"64000": "give a unit", "": "want a number of bytes", "GiB": "want a number of bytes", "64 gigs": `unknown unit "gigs"`,
		"1e3G": "unknown unit", "99999999PiB": "too large", "8EiB": "too large", "-1G": "want a number of bytes", "1.2.3G": "want a number of bytes",
	} {
		if _, err := ParseBytes(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseBytes(%q): %v, want %q", in, err, want)
		}
	}
	for in, want := range map[uint64]string{0: "0 B", 512: "512 B", 64 * gib: "64 GiB", 1536 * gib: "1.5 TiB", 1<<20 + 1<<18: "1.25 MiB"} {
		if got := FormatBytes(in); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", in, got, want)
		}
	}
}
