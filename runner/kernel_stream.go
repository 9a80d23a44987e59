package runner

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/sbench/sbench/results"
)

// streamScalar is STREAM's scalar.
const streamScalar = 3.0

// streamKernels are STREAM's four kernels, with the bytes each moves per
// element as STREAM counts them: copy and scale read one array and write
// one, add and triad read two and write one.
var streamKernels = [4]struct {
	name  string
	bytes int
}{{"copy", 16}, {"scale", 16}, {"add", 24}, {"triad", 24}}

// streamArrays are one rank's three arrays.
type streamArrays struct{ a, b, c []float64 }

// newStreamArrays initialises the arrays as STREAM does, a being doubled
// once more by STREAM's timer-granularity test.
func newStreamArrays(n int) *streamArrays {
	s := &streamArrays{a: make([]float64, n), b: make([]float64, n), c: make([]float64, n)}
	for j := range s.a {
		s.a[j], s.b[j], s.c[j] = 2, 2, 0
	}
	return s
}

// run runs kernel k once.
func (s *streamArrays) run(k int) {
	a, b, c := s.a, s.b[:len(s.a)], s.c[:len(s.a)]
	switch k {
	case 0: // copy: c = a
		copy(c, a)
	case 1: // scale: b = scalar·c
		for j := range b {
			b[j] = streamScalar * c[j]
		}
	case 2: // add: c = a + b
		for j := range c {
			c[j] = a[j] + b[j]
		}
	case 3: // triad: a = b + scalar·c
		for j := range a {
			a[j] = b[j] + streamScalar*c[j]
		}
	}
}

// check compares the arrays after iterations passes with what STREAM's
// checkSTREAMresults expects: the average absolute error of each array,
// relative to the expected value, must stay under 1e-13.
func (s *streamArrays) check(iterations int) error {
	aj, bj, cj := 2.0, 2.0, 0.0
	for k := 0; k < iterations; k++ {
		cj = aj
		bj = streamScalar * cj
		cj = aj + bj
		aj = bj + streamScalar*cj
	}
	const epsilon = 1e-13
	for _, arr := range []struct {
		name string
		xs   []float64
		want float64
	}{{"a", s.a, aj}, {"b", s.b, bj}, {"c", s.c, cj}} {
		var sumErr float64
		bad, first := 0, -1
		for j, x := range arr.xs {
			e := math.Abs(x - arr.want)
			sumErr += e
			if e/math.Abs(arr.want) > epsilon || math.IsNaN(x) {
				if first < 0 {
					first = j
				}
				bad++
			}
		}
		avg := sumErr / float64(len(arr.xs))
		if avg/math.Abs(arr.want) > epsilon || bad > 0 {
			first = max(first, 0)
			return fmt.Errorf("array %s: %d of %d elements wrong, average error %.3g (relative %.3g, limit %g); element %d is %g, want %g",
				arr.name, bad, len(arr.xs), avg, avg/math.Abs(arr.want), epsilon, first, arr.xs[first], arr.want)
		}
	}
	return nil
}

// runStream runs STREAM on every rank at once: before each kernel of each
// iteration all ranks pass a barrier, so that the ranks of a node compete
// for its memory as the ranks of an MPI job would. Each rank's rate is
// STREAM's best rate (its bytes over the shortest time, the first
// iteration left out when there are more), and rank 0 adds the ranks of
// each node up.
func runStream(ctx context.Context, c *comm, p KernelParams, hooks *testHooks) ([]results.Sample, error) {
	n, r := c.id.Size, c.id.Rank
	// The barriers and the reports to rank 0 are a collective's.
	m, err := openColl(ctx, c, p, hooks, nil)
	if err != nil {
		return nil, err
	}
	defer m.close()
	iters := streamIterations(p)
	arrays := newStreamArrays(p.ArraySize)
	// times[k*iters+i] is kernel k's time at iteration i, in seconds.
	times := make([]float64, len(streamKernels)*iters)
	fail := func(format string, args ...any) error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("stream kernel: "+format, args...)
	}
	for i := 0; i < iters; i++ {
		for k := range streamKernels {
			if err := m.sync(); err != nil {
				return nil, fail("iteration %d: %w", i, err)
			}
			t0 := time.Now()
			arrays.run(k)
			times[k*iters+i] = max(time.Since(t0), time.Nanosecond).Seconds()
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
	}
	if err := arrays.check(iters); err != nil {
		return nil, fmt.Errorf("stream kernel: wrong results on %s (%d elements per array, %d iterations): %w", c.who(r), p.ArraySize, iters, err)
	}
	if r != 0 {
		if err := m.report(0, times); err != nil {
			return nil, fail("%w", err)
		}
		return nil, nil
	}
	byRank := make([][]float64, n)
	byRank[0] = times
	for from := 1; from < n; from++ {
		vals, err := m.collect(from, 0)
		if err == nil && len(vals) != len(times) {
			err = fmt.Errorf("%s reported %d times, want %d", c.who(from), len(vals), len(times))
		}
		if err != nil {
			return nil, fail("%w", err)
		}
		byRank[from] = vals
	}
	var samples []results.Sample
	for k, kern := range streamKernels {
		bytes := float64(kern.bytes) * float64(p.ArraySize)
		best := make([]float64, n)
		for from := 0; from < n; from++ {
			ts := byRank[from][k*iters : (k+1)*iters]
			if len(ts) > 1 {
				ts = ts[1:] // STREAM leaves the first iteration out
			}
			rates := make([]float64, len(ts))
			for i, t := range ts {
				rates[i] = bytes / t / 1e6
			}
			s := summarize(rates)
			s.Value, s.P99 = *s.Max, nil
			best[from] = s.Value
			s.Metric, s.Unit = "stream_"+kern.name, results.UnitMBps
			s.Tags = map[string]string{"rank": strconv.Itoa(from), "node": c.node(from)}
			samples = append(samples, s)
		}
		samples = append(samples, c.nodeSums(results.Sample{Metric: "node_stream_" + kern.name, Unit: results.UnitMBps,
			Iterations: max(iters-1, 1)}, best)...)
	}
	return samples, nil
}

// streamIterations is the stream kernel's repetitions: STREAM's 10 unless
// set.
func streamIterations(p KernelParams) int {
	if p.Iterations >= 0 {
		return p.Iterations
	}
	return 10
}
