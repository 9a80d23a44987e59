package lu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// DefaultNB is the block size when Options.NB is zero: of 96 to 256, 128
// was the fastest with the AVX-512 kernel at N = 3000 and 6000, on one
// goroutine and on two; larger blocks make the panel, the least parallel
// part, longer.
const DefaultNB = 128

// ErrSingular is wrapped by the error of a factorization that met an
// exactly zero pivot.
var ErrSingular = errors.New("matrix is singular")

// SingularError says which column of U has a zero on the diagonal: the
// first one, counted from 0.
type SingularError struct{ Column int }

func (e *SingularError) Error() string {
	return fmt.Sprintf("matrix is singular: U(%d,%d) is exactly zero after partial pivoting", e.Column, e.Column)
}

// Is makes errors.Is(err, ErrSingular) hold.
func (e *SingularError) Is(target error) bool { return target == ErrSingular }

// Options tune a factorization.
type Options struct {
	// NB is the block size: the panel width, and the inner dimension of
	// the trailing updates. 0 means DefaultNB.
	NB int
	// Threads is how many goroutines share the work. 0 means
	// runtime.GOMAXPROCS(0).
	Threads int
}

func (o Options) withDefaults() (Options, error) {
	if o.NB == 0 {
		o.NB = DefaultNB
	}
	if o.Threads == 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.NB < 1 {
		return o, fmt.Errorf("block size %d is not positive", o.NB)
	}
	if o.Threads < 1 {
		return o, fmt.Errorf("%d threads", o.Threads)
	}
	return o, nil
}

// Factorization is A = P·L·U computed in place: L (unit lower, its
// diagonal implicit) below the diagonal of LU, U on and above it.
type Factorization struct {
	LU *Matrix
	// Pivots[i] is the row that was swapped with row i at step i, the
	// swaps being applied in order (LAPACK's ipiv, counted from 0).
	Pivots []int
}

// Factor computes the LU factorization of a with partial pivoting, in
// place, as LAPACK's dgetrf does: a blocked right-looking algorithm whose
// panels are factored recursively and whose trailing updates (row swaps,
// triangular solve, GEMM) are split in column chunks across
// opt.Threads goroutines. One goroutine factors the next panel as soon as
// its columns are updated (look-ahead of depth one), while the others
// update the rest.
//
// A zero pivot does not stop the factorization; Factor returns the
// factors and a *SingularError naming the first such column. A cancelled
// ctx stops it between steps, with ctx's error.
func Factor(ctx context.Context, a *Matrix, opt Options) (*Factorization, error) {
	return factor(ctx, a, opt, true)
}

// factor is Factor, leaving out the row swaps of L when leftSwaps is
// false: a solve whose right-hand side was factored along (as a last
// column of a, as HPL does) needs U only.
func factor(ctx context.Context, a *Matrix, opt Options, leftSwaps bool) (*Factorization, error) {
	if err := a.check(); err != nil {
		return nil, fmt.Errorf("factor: %w", err)
	}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("factor: %w", err)
	}
	f := &factorizer{
		a: a.Data, lda: a.Stride, m: a.Rows, n: a.Cols,
		nb: opt.NB, threads: opt.Threads, mk: kernel,
		piv: make([]int, min(a.Rows, a.Cols)), zero: -1,
		workers: make([]worker, opt.Threads),
	}
	for i := range f.workers {
		f.workers[i].buf = new(gemmBuf)
	}
	if err := f.run(ctx); err != nil {
		return nil, err
	}
	if leftSwaps {
		f.swapLeft()
	}
	out := &Factorization{LU: a, Pivots: f.piv}
	if f.zero >= 0 {
		return out, &SingularError{Column: f.zero}
	}
	return out, nil
}

type factorizer struct {
	a          []float64
	lda, m, n  int
	nb         int
	threads    int
	mk         microKernel
	piv        []int
	zero       int // first zero pivot, -1 for none
	workers    []worker
	panels     [2]factoredPanel // this step's and the look-ahead's
	nextChunk  atomic.Int64
	chunkWidth int
}

// worker is one goroutine's scratch space.
type worker struct {
	buf     *gemmBuf
	scratch []float64
}

// factoredPanel is what the trailing updates need from a factored panel:
// the inverses of its triangle's diagonal blocks, and its part below the
// triangle (L21) packed for the micro-kernel, in slabs of blockK columns.
type factoredPanel struct {
	j, jb int
	inv   diagInverses
	slabs [][]float64
}

func (f *factorizer) run(ctx context.Context) error {
	kmax := min(f.m, f.n)
	if kmax == 0 {
		return nil
	}
	cur := 0
	f.factorPanel(0, min(f.nb, kmax), &f.panels[cur], &f.workers[0])
	for j := 0; j < kmax; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("factor: stopped at column %d of %d: %w", j, kmax, err)
		}
		p := &f.panels[cur]
		j2 := j + p.jb
		jb2 := min(f.nb, kmax-j2) // 0 after the last panel
		rest0 := j2 + jb2
		f.nextChunk.Store(int64(rest0))
		f.chunkWidth = f.chunkFor(f.n - rest0)
		parallel(f.threads, func(t int) {
			w := &f.workers[t]
			if t == 0 && jb2 > 0 {
				f.update(p, j2, j2+jb2, w)
				f.factorPanel(j2, jb2, &f.panels[1-cur], w)
			}
			for {
				c1 := int(f.nextChunk.Add(int64(f.chunkWidth)))
				c0 := c1 - f.chunkWidth
				if c0 >= f.n {
					return
				}
				f.update(p, c0, min(c1, f.n), w)
			}
		})
		j = j2
		cur = 1 - cur
	}
	return nil
}

// chunkFor is the width of the column chunks of a trailing update of
// width cols: a few per goroutine, so that the look-ahead's goroutine can
// catch up; a whole number of micro-tiles; and at most maxChunk columns,
// so that a chunk's rows, brought to cache by its row swaps, are still in
// the last-level cache for its GEMM.
func (f *factorizer) chunkFor(cols int) int {
	nr := f.mk.nr
	w := roundUp((cols+4*f.threads-1)/(4*f.threads), nr)
	return min(max(w, 2*nr), maxChunk/nr*nr)
}

// maxChunk bounds the chunks of the trailing updates (see chunkFor).
const maxChunk = 128

// factorPanel factors columns j … j+jb-1 below row j and prepares out for
// the trailing updates.
func (f *factorizer) factorPanel(j, jb int, out *factoredPanel, w *worker) {
	top := f.a[j+j*f.lda:]
	z := panel(f.m-j, jb, top, f.lda, f.piv[j:j+jb], &w.scratch)
	for i := j; i < j+jb; i++ {
		f.piv[i] += j
	}
	if z >= 0 && f.zero < 0 {
		f.zero = j + z
	}
	out.j, out.jb = j, jb
	out.inv.invertDiag(jb, top, f.lda)
	rows := f.m - j - jb
	nslab := (jb + blockK - 1) / blockK
	if cap(out.slabs) < nslab {
		out.slabs = make([][]float64, nslab)
	}
	out.slabs = out.slabs[:nslab]
	for s := range out.slabs {
		pc := s * blockK
		kc := min(blockK, jb-pc)
		out.slabs[s] = grow(out.slabs[s], roundUp(rows, f.mk.mr)*kc)
		packA(f.mk.mr, rows, kc, top[jb+pc*f.lda:], f.lda, out.slabs[s])
	}
}

// update applies panel p to columns c0 … c1-1: its row swaps, the
// triangular solve with its L11 (giving U12), and the GEMM
// A22 -= L21·U12.
func (f *factorizer) update(p *factoredPanel, c0, c1 int, w *worker) {
	j, jb, lda := p.j, p.jb, f.lda
	cols := c1 - c0
	block := f.a[c0*lda:]
	swapRows(cols, block, lda, f.piv[j:j+jb], j)
	u12 := block[j:]
	trsm(jb, cols, f.a[j+j*lda:], lda, &p.inv, u12, lda, &w.scratch)
	rows := f.m - j - jb
	if rows == 0 {
		return
	}
	for s, slab := range p.slabs {
		pc := s * blockK
		kc := min(blockK, jb-pc)
		gemmPackedA(f.mk, rows, cols, kc, -1, slab, u12[pc:], lda, block[j+jb:], lda, w.buf)
	}
}

// swapLeft applies each panel's row swaps to the columns left of it,
// which the factorization left for the end: those columns hold finished
// parts of L, so only the order of the swaps matters, and it is kept.
func (f *factorizer) swapLeft() {
	kmax := min(f.m, f.n)
	width := max((kmax+f.threads-1)/f.threads, 1)
	parallel(f.threads, func(t int) {
		c0, c1 := t*width, min((t+1)*width, kmax)
		for j := 0; j < kmax; j += f.nb {
			if j <= c0 {
				continue
			}
			jb := min(f.nb, kmax-j)
			swapRows(min(c1, j)-c0, f.a[c0*f.lda:], f.lda, f.piv[j:j+jb], j)
		}
	})
}

// parallel runs f(0) … f(n-1) at once, f(0) on the calling goroutine.
func parallel(n int, f func(t int)) {
	var wg sync.WaitGroup
	for t := 1; t < n; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(t)
		}()
	}
	f(0)
	wg.Wait()
}
