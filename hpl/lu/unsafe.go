package lu

import "unsafe"

// unsafeSlice views n elements from p: the micro-kernels take pointers, as
// the assembly ones must, and the Go one reads through this view.
func unsafeSlice(p *float64, n int) []float64 { return unsafe.Slice(p, n) }
