//go:build cgo && linux && netgo && osusergo

package main

// sbench-runner is copied to compute nodes as one file, so it must not
// depend on the build machine's libc. make builds it with CGO_ENABLED=0
// and the tags netgo and osusergo; this file keeps a build with those tags
// and cgo on static too: the tags keep libc's resolver (getaddrinfo) and
// user lookup out, and asking the linker for a static binary covers the
// rest of the runtime's cgo, without glibc's warning that a static
// getaddrinfo needs the build machine's shared libraries at run time.
//
// A plain "go build" with cgo on and without the tags is a development
// build: net links libc's resolver, and a static link of it would warn,
// so this file stays out and the binary is dynamic.

// #cgo LDFLAGS: -static
import "C"
