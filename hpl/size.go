package hpl

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/sbench/sbench/sizes"
)

// Sizing defaults: HPL's matrix takes 80% of the memory (the rest is the
// OS, MPI's buffers and HPL's own workspace), in blocks of 192, a common
// good NB for today's BLAS libraries.
const (
	DefaultFraction = 0.8
	DefaultNB       = 192
)

// SizeRequest describes the machine an HPL run is sized for.
type SizeRequest struct {
	Nodes int
	// MemPerNode is each node's memory in bytes.
	MemPerNode   uint64
	RanksPerNode int
	// Fraction of the total memory the matrix may take; 0 means
	// DefaultFraction.
	Fraction float64
	// NB is the block size; 0 means DefaultNB.
	NB int
	// Gflops is an expected rate, to estimate the run time; 0 when unknown.
	Gflops float64
}

// Sizing is a problem size and process grid for a machine, with the
// reasoning behind it.
type Sizing struct {
	N, NB int
	Grid
	Ranks int
	// MemBytes is the machine's total memory, MatrixBytes the matrix's
	// 8·N² bytes, Fill their ratio.
	MemBytes, MatrixBytes uint64
	Fill                  float64
	// Seconds is the expected run time at the requested Gflops (0 without).
	Seconds float64
	// Reasons explain each figure, one sentence each.
	Reasons []string
}

// Size chooses N, NB, P and Q: N is the largest multiple of NB whose
// matrix (8·N² bytes) fits in the fraction of the nodes' memory, and P×Q
// is the grid over every rank nearest to a square with P ≤ Q, as HPL's
// tuning notes advise.
func Size(req SizeRequest) (Sizing, error) {
	var errs []error
	if req.Nodes < 1 {
		errs = append(errs, fmt.Errorf("nodes %d: want at least 1", req.Nodes))
	}
	if req.RanksPerNode < 1 {
		errs = append(errs, fmt.Errorf("ranks per node %d: want at least 1", req.RanksPerNode))
	}
	if req.MemPerNode == 0 {
		errs = append(errs, errors.New("memory per node: want more than 0 bytes"))
	}
	if req.Fraction == 0 {
		req.Fraction = DefaultFraction
	}
	if !(req.Fraction > 0 && req.Fraction <= 1) {
		errs = append(errs, fmt.Errorf("fraction %v: want more than 0 and at most 1", req.Fraction))
	}
	if req.NB == 0 {
		req.NB = DefaultNB
	}
	if req.NB < 1 || req.NB > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("NB %d: want at least 1", req.NB))
	}
	if req.Gflops < 0 || math.IsNaN(req.Gflops) || math.IsInf(req.Gflops, 0) {
		errs = append(errs, fmt.Errorf("Gflops %v: want a positive rate", req.Gflops))
	}
	if req.Nodes > 1<<20 || req.RanksPerNode > 1<<20 {
		errs = append(errs, errors.New("more than 2^20 nodes or ranks per node"))
	}
	if len(errs) > 0 {
		return Sizing{}, fmt.Errorf("size HPL: %w", errors.Join(errs...))
	}
	total := float64(req.MemPerNode) * float64(req.Nodes)
	if total > math.MaxUint64/2 {
		return Sizing{}, fmt.Errorf("size HPL: %d nodes × %s is more memory than sbench can count", req.Nodes, sizes.Approx(req.MemPerNode))
	}
	s := Sizing{NB: req.NB, Ranks: req.Nodes * req.RanksPerNode, MemBytes: req.MemPerNode * uint64(req.Nodes)}
	s.N = ProblemSize(s.MemBytes, req.Fraction, req.NB)
	if s.N == 0 {
		return Sizing{}, fmt.Errorf("size HPL: %s × %v holds no %d×%d block of doubles", sizes.Approx(s.MemBytes), req.Fraction, req.NB, req.NB)
	}
	s.Grid = GridFor(s.Ranks)
	s.MatrixBytes = 8 * uint64(s.N) * uint64(s.N)
	s.Fill = float64(s.MatrixBytes) / float64(s.MemBytes)
	say := func(format string, args ...any) { s.Reasons = append(s.Reasons, fmt.Sprintf(format, args...)) }
	say("memory: %d node(s) × %s = %s; the matrix may take %s of it (%s), the rest is for the OS, MPI and HPL's workspace",
		req.Nodes, sizes.Approx(req.MemPerNode), sizes.Approx(s.MemBytes), percent(req.Fraction), sizes.Approx(uint64(float64(s.MemBytes)*req.Fraction)))
	say("N: the largest multiple of NB=%d with 8·N² ≤ that: N=%d (%d blocks), %s, %s of memory, %s per rank",
		s.NB, s.N, s.N/s.NB, sizes.Approx(s.MatrixBytes), percent(s.Fill), sizes.Approx(s.MatrixBytes/uint64(s.Ranks)))
	say("grid: %d node(s) × %d rank(s) = %d ranks; P×Q=%d×%d, the factorization nearest a square with P ≤ Q",
		req.Nodes, req.RanksPerNode, s.Ranks, s.P, s.Q)
	if s.P == 1 && s.Ranks > 3 {
		say("warning: %d has no factor pair but 1×%d, a flat grid that communicates poorly; a rank count with a squarer grid (e.g. %d = %s) usually runs faster",
			s.Ranks, s.Ranks, s.Ranks-1, GridFor(s.Ranks-1))
	}
	if 2*s.P < s.Q && s.P > 1 {
		say("note: the grid is far from square; HPL prefers P and Q close (e.g. %d ranks = %s)", squarerRanks(s.Ranks), GridFor(squarerRanks(s.Ranks)))
	}
	say("work: 2/3·N³ + 3/2·N² = %.4g floating-point operations", Flops(s.N))
	if req.Gflops > 0 {
		s.Seconds = RunSeconds(s.N, req.Gflops)
		say("time: at %g Gflops the solve takes about %s", req.Gflops, formatSeconds(s.Seconds))
	}
	return s, nil
}

// squarerRanks is the largest rank count below n whose grid is within a
// factor 2 of square, for advice.
func squarerRanks(n int) int {
	for m := n - 1; m > 1; m-- {
		if g := GridFor(m); 2*g.P >= g.Q {
			return m
		}
	}
	return 1
}

// ProblemSize is the largest multiple of nb whose N×N matrix of doubles
// fits in fraction of mem bytes; 0 when not even one block fits.
func ProblemSize(mem uint64, fraction float64, nb int) int {
	if nb < 1 || !(fraction > 0) || mem == 0 {
		return 0
	}
	budget := float64(mem) * fraction
	fits := func(n int) bool { return 8*float64(n)*float64(n) <= budget }
	k := int(math.Sqrt(budget/8)) / nb
	for k > 0 && !fits(k*nb) {
		k--
	}
	for fits((k+1)*nb) && (k+1)*nb <= math.MaxInt32 {
		k++
	}
	n := k * nb
	for n > math.MaxInt32 {
		n -= nb
	}
	return n
}

// GridFor is the process grid for ranks nearest to a square with P ≤ Q:
// P is the largest divisor of ranks not above its square root.
func GridFor(ranks int) Grid {
	if ranks < 1 {
		return Grid{1, 1}
	}
	p := int(math.Sqrt(float64(ranks)))
	for p*p > ranks {
		p--
	}
	for (p+1)*(p+1) <= ranks {
		p++
	}
	for ranks%p != 0 {
		p--
	}
	return Grid{P: p, Q: ranks / p}
}

// Flops is the operation count HPL credits a solve of order n with:
// 2/3·n³ + 3/2·n² (HPL_pdtest's formula).
func Flops(n int) float64 {
	x := float64(n)
	return 2.0/3.0*x*x*x + 1.5*x*x
}

// RunSeconds is how long a solve of order n takes at gflops.
func RunSeconds(n int, gflops float64) float64 {
	if gflops <= 0 {
		return 0
	}
	return Flops(n) / (gflops * 1e9)
}

func percent(f float64) string {
	return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) + "%"
}

func formatSeconds(s float64) string {
	switch {
	case s < 120:
		return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + " s"
	case s < 2*3600:
		return strconv.FormatFloat(math.Round(s/6)/10, 'f', -1, 64) + " min"
	}
	return strconv.FormatFloat(math.Round(s/360)/10, 'f', -1, 64) + " h"
}

// ParseBytes reads a memory size with its unit, as package sizes reads
// every size: "64GiB", "64 GiB", "64G" (binary, as Slurm means it), "64GB"
// (decimal), "1.5TiB". A bare number is refused: whether 64000 means MB or
// bytes is a guess sbench won't make. It is sizes.ParseIn(s, 0), kept for
// the command line's hpl size.
func ParseBytes(s string) (uint64, error) { return sizes.ParseIn(s, 0) }

// FormatBytes writes a size in the largest binary unit it fills, with at
// most two decimals: "64 GiB", "1.5 TiB", "512 B". It is sizes.Approx.
func FormatBytes(b uint64) string { return sizes.Approx(b) }
