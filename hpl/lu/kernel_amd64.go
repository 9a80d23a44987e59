//go:build amd64 && !purego

package lu

import "golang.org/x/sys/cpu"

//go:generate go run gen_kernels.go

// kern24x8 computes C[24×8] += alpha·A·B over k steps: a points to k
// columns of 24 packed rows, b to k rows of 8 packed columns, c to C's
// top-left element, ldc is C's column stride. AVX-512F.
//
//go:noescape
func kern24x8(k int, a, b, c *float64, ldc int, alpha float64)

// kern8x6 is kern24x8's AVX2+FMA sibling on an 8×6 tile.
//
//go:noescape
func kern8x6(k int, a, b, c *float64, ldc int, alpha float64)

// kernels lists the micro-kernels this machine can run, best first.
func kernels() []microKernel {
	var ks []microKernel
	// x/sys/cpu reports AVX-512 only when the OS saves the ZMM state too.
	if cpu.X86.HasAVX512F {
		ks = append(ks, microKernel{name: "avx512", mr: 24, nr: 8, fn: kern24x8})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, microKernel{name: "avx2", mr: 8, nr: 6, fn: kern8x6})
	}
	return append(ks, genericKernel)
}
