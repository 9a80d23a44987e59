//go:build !amd64 || purego

package lu

// kernels lists the micro-kernels this machine can run: the pure-Go one.
func kernels() []microKernel { return []microKernel{genericKernel} }
