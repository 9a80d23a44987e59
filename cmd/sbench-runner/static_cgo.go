//go:build cgo && !netgo

package main

// A plain `go build` with cgo on links package net's C resolver, and with
// it libc, dynamically; the runner is copied to compute nodes and must not
// depend on the libraries there. Linked statically it does not, and the
// runner resolves names with Go's own resolver (netdns=go in main.go), so
// the C resolver that a static glibc could not load its modules for is
// never called (the linker's warning that getaddrinfo needs glibc's shared
// libraries at run time is about that call). `make build` does not compile
// this file: it builds with CGO_ENABLED=0 -tags netgo,osusergo.

// #cgo LDFLAGS: -static
import "C"
