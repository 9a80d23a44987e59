//go:build cgo && linux

package main

// sbench-runner is copied to compute nodes as one file, so it must not
// depend on the build machine's libc. make builds it with CGO_ENABLED=0;
// this file keeps a plain "go build" (cgo on by default) static too: the
// only cgo in the runner's imports is net's libc resolver, and asking the
// linker for a static binary covers it. The runner resolves names with Go's
// own resolver (netdns=go below), so glibc's NSS is never needed at run time.

// #cgo LDFLAGS: -static
import "C"
