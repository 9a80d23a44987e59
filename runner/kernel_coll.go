package runner

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/sbench/sbench/results"
)

// allreduceRingMin is the vector size from which allreduce runs a ring
// (reduce-scatter then all-gather: 2(n-1)/n of the vector per rank)
// instead of recursive doubling (log2 n whole vectors per rank, but only
// log2 n steps): as MPI libraries do, short vectors go by latency, long
// ones by bandwidth.
const allreduceRingMin = 64 << 10

// alltoallMemLimit bounds alltoall's receive buffer (n messages), as OSU
// bounds its buffers (512 MB by default).
const alltoallMemLimit = 512 << 20

// coll is one rank's part of a collective kernel: every rank takes part,
// over connections to the peers of its algorithm, the peers of the
// dissemination barrier, and rank 0 (for the reports).
type coll struct {
	*mesh
	p   KernelParams
	n   int
	all []int
	seq int // barriers passed
}

func openColl(ctx context.Context, c *comm, p KernelParams, hooks *testHooks, peers []int) (*coll, error) {
	n, r := c.id.Size, c.id.Rank
	all := allRanks(n)
	peers = append(peers, disseminationPeers(all, r)...)
	if r == 0 {
		peers = append(peers, all...)
	} else {
		peers = append(peers, 0)
	}
	m, err := openMesh(ctx, c, p.Kernel, hooks, peers)
	if err != nil {
		return nil, err
	}
	return &coll{mesh: m, p: p, n: n, all: all}, nil
}

// sync is a barrier of every rank, over the mesh.
func (k *coll) sync() error {
	err := k.barrier(k.all, k.rank, k.seq)
	k.seq++
	return err
}

// measure runs op for the warm-up and timed iterations of size, with a
// barrier before each, as OSU's collective benchmarks do (so that one
// iteration's stragglers do not overlap the next), and returns this rank's
// mean time of op over the timed iterations, in us. op times itself, so
// that it can leave its set-up out.
func (k *coll) measure(size int, op func(iter, total int) (time.Duration, error)) (float64, int, error) {
	iters, warm := k.p.Counts(size)
	var sum time.Duration
	for i := 0; i < warm+iters; i++ {
		if err := k.sync(); err != nil {
			return 0, 0, k.at(size, i, err)
		}
		d, err := op(i, warm+iters)
		if err != nil {
			return 0, 0, err
		}
		if i >= warm {
			sum += d
		}
	}
	return float64(sum.Nanoseconds()) / 1e3 / float64(max(iters, 1)), iters, nil
}

// sample gathers every rank's mean time at rank 0 and makes the sample:
// the value is the mean over ranks of each rank's mean over iterations,
// min and max are the fastest and slowest rank's means. That is what OSU's
// collective benchmarks print (Avg, Min, Max Latency), so that the
// runner's curves and OSU's plot together. Other ranks return nil.
func (k *coll) sample(size int, withX bool, mine float64, iters int) (*results.Sample, error) {
	if k.rank != 0 {
		if err := k.report(size, []float64{mine}); err != nil {
			return nil, k.at(size, iters, err)
		}
		return nil, nil
	}
	sum, lo, hi := mine, mine, mine
	for r := 1; r < k.n; r++ {
		vals, err := k.collect(r, size)
		if err == nil && len(vals) != 1 {
			err = fmt.Errorf("%s kernel: %s reported %d values, want 1", k.kernel, k.c.who(r), len(vals))
		}
		if err != nil {
			return nil, k.at(size, iters, err)
		}
		sum += vals[0]
		lo, hi = min(lo, vals[0]), max(hi, vals[0])
	}
	s := results.Sample{Metric: "latency", Unit: results.UnitMicroseconds, Value: round(sum / float64(k.n)),
		Min: results.F(round(lo)), Max: results.F(round(hi)), Iterations: iters}
	if withX {
		s.X, s.XUnit = results.F(float64(size)), results.UnitBytes
	}
	return &s, nil
}

// sweep measures op at every size and returns rank 0's samples.
func (k *coll) sweep(op func(size int) func(iter, total int) (time.Duration, error)) ([]results.Sample, error) {
	var samples []results.Sample
	for _, size := range k.p.Sizes {
		mine, iters, err := k.measure(size, op(size))
		if err != nil {
			return samples, err
		}
		s, err := k.sample(size, true, mine, iters)
		if err != nil {
			return samples, err
		}
		if s != nil {
			samples = append(samples, *s)
		}
	}
	return samples, nil
}

// runBarrier times the dissemination barrier itself: ⌈log2 n⌉ rounds of
// 2-byte messages. Each rank times its loop of barriers, as osu_barrier.
func runBarrier(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	k, err := openColl(ctx, c, p, hooks, nil)
	if err != nil {
		return nil, err
	}
	defer k.close()
	iters, warm := p.Counts(0)
	for i := 0; i < warm+1; i++ {
		if err := k.sync(); err != nil {
			return nil, k.at(0, i, err)
		}
	}
	t0 := time.Now()
	for i := 0; i < iters; i++ {
		if err := k.sync(); err != nil {
			return nil, k.at(0, warm+i, err)
		}
	}
	mine := float64(time.Since(t0).Nanoseconds()) / 1e3 / float64(max(iters, 1))
	s, err := k.sample(0, false, mine, iters)
	if err != nil || s == nil {
		return nil, err
	}
	return []results.Sample{*s}, nil
}

// runAllreduce sums vectors of float64 over every rank, in place. Rank r's
// element i at iteration t is (r+1)·((i+t) mod 1009 + 1): whole numbers,
// so the sum is exact in any order, and every rank checks its result
// against n(n+1)/2·((i+t) mod 1009 + 1), every element on the iterations
// the latency kernel checks in full, the first and last otherwise.
func runAllreduce(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	n, r := c.id.Size, c.id.Rank
	k, err := openColl(ctx, c, p, hooks, append(rdPeers(r, n), (r+1)%n, (r-1+n)%n))
	if err != nil {
		return nil, err
	}
	defer k.close()
	largest := maxOf(p.Sizes)
	vec, tmp := make([]byte, largest), make([]byte, largest)
	return k.sweep(func(size int) func(iter, total int) (time.Duration, error) {
		ring := size >= allreduceRingMin && size/8 >= n
		return func(iter, total int) (time.Duration, error) {
			v := vec[:size]
			fillAllreduce(v, r, iter)
			t0 := time.Now()
			var err error
			if ring {
				err = k.ringAllreduce(v, tmp, size, iter)
			} else {
				err = k.rdAllreduce(v, tmp[:size], size, iter)
			}
			d := time.Since(t0)
			if err != nil {
				return 0, k.at(size, iter, err)
			}
			if err := checkAllreduce(v, n, iter, fullCheck(size, iter, total)); err != nil {
				return 0, fmt.Errorf("allreduce kernel: wrong sum on %s: %d-byte vector, iteration %d: %w", c.who(r), size, iter, err)
			}
			return d, nil
		}
	})
}

func allreduceElement(r, i, iter int) float64 { return float64((r + 1) * ((i+iter)%1009 + 1)) }

func fillAllreduce(v []byte, r, iter int) {
	for i := 0; i < len(v)/8; i++ {
		binary.LittleEndian.PutUint64(v[8*i:], math.Float64bits(allreduceElement(r, i, iter)))
	}
}

// checkAllreduce checks a result: every element when full is set, else
// the first and the last.
func checkAllreduce(v []byte, n, iter int, full bool) error {
	count := len(v) / 8
	check := func(i int) error {
		got := math.Float64frombits(binary.LittleEndian.Uint64(v[8*i:]))
		if want := float64(n*(n+1)/2) * float64((i+iter)%1009+1); got != want {
			return fmt.Errorf("element %d is %g, want %g", i, got, want)
		}
		return nil
	}
	if !full {
		if err := check(0); err != nil {
			return err
		}
		return check(count - 1)
	}
	for i := 0; i < count; i++ {
		if err := check(i); err != nil {
			return err
		}
	}
	return nil
}

// addFloats adds the float64 vector src into dst.
func addFloats(dst, src []byte) {
	src = src[:len(dst)]
	for j := 0; j+8 <= len(dst); j += 8 {
		x := math.Float64frombits(binary.LittleEndian.Uint64(dst[j:])) + math.Float64frombits(binary.LittleEndian.Uint64(src[j:]))
		binary.LittleEndian.PutUint64(dst[j:], math.Float64bits(x))
	}
}

// rdLayout places a rank in recursive doubling over n ranks, as MPICH
// does for any n: of the largest power of two p2 ≤ n, the first 2·rem
// ranks (rem = n-p2) pair up, the even one handing its vector to the odd
// one and sitting out; the remaining p2 ranks double recursively, rank
// newr's partner at distance mask being newr^mask.
func rdLayout(r, n int) (p2, rem, newr int) {
	p2 = 1
	for p2*2 <= n {
		p2 *= 2
	}
	rem = n - p2
	switch {
	case r >= 2*rem:
		newr = r - rem
	case r%2 == 0:
		newr = -1
	default:
		newr = r / 2
	}
	return p2, rem, newr
}

// rdRank is the rank of recursive doubling's newr.
func rdRank(newr, rem int) int {
	if newr < rem {
		return 2*newr + 1
	}
	return newr + rem
}

// rdPeers are the ranks r exchanges with in recursive doubling.
func rdPeers(r, n int) []int {
	p2, rem, newr := rdLayout(r, n)
	var out []int
	if r < 2*rem {
		out = append(out, r^1)
	}
	if newr >= 0 {
		for mask := 1; mask < p2; mask <<= 1 {
			out = append(out, rdRank(newr^mask, rem))
		}
	}
	return out
}

func (k *coll) rdAllreduce(v, tmp []byte, size, iter int) error {
	r := k.rank
	p2, rem, newr := rdLayout(r, k.n)
	if r < 2*rem {
		if r%2 == 0 {
			if err := k.send(r+1, v); err != nil {
				return err
			}
		} else {
			if err := k.recv(r-1, tmp); err != nil {
				return err
			}
			if err := k.got(size, iter, tmp); err != nil {
				return err
			}
			addFloats(v, tmp)
		}
	}
	if newr >= 0 {
		for mask := 1; mask < p2; mask <<= 1 {
			peer := rdRank(newr^mask, rem)
			if err := k.exchange(peer, v, peer, tmp); err != nil {
				return err
			}
			if err := k.got(size, iter, tmp); err != nil {
				return err
			}
			addFloats(v, tmp)
		}
	}
	if r < 2*rem {
		if r%2 == 1 {
			return k.send(r-1, v)
		}
		if err := k.recv(r+1, v); err != nil {
			return err
		}
		return k.got(size, iter, v)
	}
	return nil
}

// ringAllreduce: n-1 steps of reduce-scatter (each rank passes one chunk
// on to the next rank and adds the chunk from the previous one), after
// which rank r holds chunk r+1 summed, then n-1 steps of all-gather.
func (k *coll) ringAllreduce(v, tmp []byte, size, iter int) error {
	n, r := k.n, k.rank
	count := size / 8
	lo := func(c int) int { return c * count / n * 8 }
	chunk := func(c int) []byte { c %= n; return v[lo(c):lo(c+1)] }
	next, prev := (r+1)%n, (r-1+n)%n
	for s := 0; s < n-1; s++ {
		out, into := chunk(r-s+n), chunk(r-s-1+2*n)
		in := tmp[:len(into)]
		if err := k.exchange(next, out, prev, in); err != nil {
			return err
		}
		if err := k.got(size, iter, in); err != nil {
			return err
		}
		addFloats(into, in)
	}
	for s := 0; s < n-1; s++ {
		in := chunk(r - s + n)
		if err := k.exchange(next, chunk(r+1-s+n), prev, in); err != nil {
			return err
		}
		if err := k.got(size, iter, in); err != nil {
			return err
		}
	}
	return nil
}

// binomial returns rank r's parent (-1 for rank 0) and children in a
// binomial tree rooted at rank 0, as MPICH's broadcast builds it: r
// receives from r minus its lowest set bit and sends to r+2^k for every
// 2^k below that bit, farthest first.
func binomial(r, n int) (parent int, children []int) {
	parent = -1
	mask := 1
	for mask < n {
		if r&mask != 0 {
			parent = r - mask
			break
		}
		mask <<= 1
	}
	for mask >>= 1; mask > 0; mask >>= 1 {
		if r+mask < n {
			children = append(children, r+mask)
		}
	}
	return parent, children
}

// runBcast broadcasts from rank 0 down a binomial tree. Rank 0 sends the
// pattern's message of the iteration; every other rank forwards what it
// received, then checks it as the latency kernel checks messages (so a
// corruption on the way is caught below it too). A rank's time ends when
// it has handed its last child the message, as MPI_Bcast returns.
func runBcast(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	n, r := c.id.Size, c.id.Rank
	parent, children := binomial(r, n)
	peers := append([]int(nil), children...)
	if parent >= 0 {
		peers = append(peers, parent)
	}
	k, err := openColl(ctx, c, p, hooks, peers)
	if err != nil {
		return nil, err
	}
	defer k.close()
	buf := make([]byte, wireLen(maxOf(p.Sizes)))
	return k.sweep(func(size int) func(iter, total int) (time.Duration, error) {
		pat := newPattern(size)
		rbuf := buf[:pat.n]
		return func(iter, total int) (time.Duration, error) {
			t0 := time.Now()
			data := pat.msg(iter)
			if parent >= 0 {
				if err := k.recv(parent, rbuf); err != nil {
					return 0, k.at(size, iter, err)
				}
				data = rbuf
			}
			for _, ch := range children {
				if err := k.send(ch, data); err != nil {
					return 0, k.at(size, iter, err)
				}
			}
			d := time.Since(t0)
			if parent >= 0 {
				if err := k.got(size, iter, rbuf); err != nil {
					return 0, err
				}
				if err := pat.verify(rbuf, iter, fullCheck(pat.n, iter, total)); err != nil {
					return 0, k.corrupted(parent, size, iter, err)
				}
			}
			return d, nil
		}
	})
}

// runAlltoall exchanges a message of the size with every other rank, in
// n-1 pairwise steps (step s: send to r+s, receive from r-s), into a
// receive buffer of n messages as MPI_Alltoall's. The message from rank a
// to rank b at iteration t is the pattern's message t·n²+a·n+b, so that a
// message delivered to the wrong rank or slot fails the check; each is
// checked after the timed exchange, as the latency kernel checks.
func runAlltoall(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	n, r := c.id.Size, c.id.Rank
	if need := int64(n) * int64(wireLen(maxOf(p.Sizes))); need > alltoallMemLimit {
		return nil, fmt.Errorf("param sizes: the alltoall kernel's receive buffer for %d ranks × %d bytes would take %d MiB on every rank, above the limit of %d MiB; lower the largest size",
			n, maxOf(p.Sizes), need>>20, alltoallMemLimit>>20)
	}
	k, err := openColl(ctx, c, p, hooks, allRanks(n))
	if err != nil {
		return nil, err
	}
	defer k.close()
	buf := make([]byte, n*wireLen(maxOf(p.Sizes)))
	return k.sweep(func(size int) func(iter, total int) (time.Duration, error) {
		pat := newPattern(size)
		w := pat.n
		index := func(iter, from, to int) int { return iter*n*n + from*n + to }
		return func(iter, total int) (time.Duration, error) {
			t0 := time.Now()
			for s := 1; s < n; s++ {
				to, from := (r+s)%n, (r-s+n)%n
				if err := k.exchange(to, pat.msg(index(iter, r, to)), from, buf[from*w:(from+1)*w]); err != nil {
					return 0, k.at(size, iter, err)
				}
			}
			d := time.Since(t0)
			for from := 0; from < n; from++ {
				if from == r {
					continue
				}
				in := buf[from*w : (from+1)*w]
				if err := k.got(size, iter, in); err != nil {
					return 0, err
				}
				if err := pat.verify(in, index(iter, from, r), fullCheck(w, iter, total)); err != nil {
					return 0, k.corrupted(from, size, iter, err)
				}
			}
			return d, nil
		}
	})
}
