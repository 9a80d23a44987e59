// Package golden keeps what tests compare against and feed on in files
// under testdata: a test's expected output (a golden file, rewritten by
// go test -update after a deliberate change) and the real inputs a fuzz
// target starts from (its seed corpus).
//
// A test compares its output with one call:
//
//	golden.Check(t, "testdata/golden/run.json", got)
//
// and go test -update rewrites the files instead of comparing; review the
// diff before committing it. A fuzz target seeds itself from the same
// fixtures the unit tests read:
//
//	golden.Seed(f, "testdata/osu-*.txt")
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateFlag is the name of the flag that rewrites golden files.
const updateFlag = "update"

// The flag is registered here once for every package that imports this
// one. A test file that declares -update itself must look it up first
// (flag.Lookup) or, better, drop its own: this package initializes before
// the tests that import it, and the flag package panics on a name
// registered twice.
func init() {
	if flag.Lookup(updateFlag) == nil {
		flag.Bool(updateFlag, false, "rewrite the golden files under testdata instead of comparing with them")
	}
}

// Update reports whether the tests run with -update, that is whether
// golden files are being rewritten rather than compared with. Read it
// after flag parsing, in a test, not in a package variable's initializer.
func Update() bool {
	f := flag.Lookup(updateFlag)
	return f != nil && f.Value.String() == "true"
}

// Check compares got with the file at path (relative to the test's
// package directory, as go test runs it) and fails t with the lines that
// differ. Under -update it writes got to path instead, creating its
// directory.
func Check[T ~string | ~[]byte](t testing.TB, path string, got T) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the output (go test -update rewrites it; review the diff):\n%s", path, Diff(string(want), string(got)))
	}
}

// CheckJSON is Check of v encoded as indented JSON, with no HTML escaping
// (golden files are read by people, "<" and "&" included) and a final
// newline.
func CheckJSON(t testing.TB, path string, v any) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode %s: %v", path, err)
	}
	Check(t, path, buf.Bytes())
}

// maxDiffLines bounds a failure message: past a few lines, the golden file
// and the output plainly differ by more than a typo, and git diff after
// -update shows the rest better.
const maxDiffLines = 10

// Diff lists the lines of got that differ from want, by line number, at
// most ten of them; "" when they are equal. Check's failures use it; so can
// a test that compares with a file no -update may rewrite.
func Diff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		if shown == maxDiffLines {
			fmt.Fprintf(&b, "… and more (want %d lines, got %d)\n", len(w), len(g))
			break
		}
		fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
		shown++
	}
	if shown == 0 { // same lines, different ends: a final newline
		fmt.Fprintf(&b, "want %d bytes, got %d\n", len(want), len(got))
	}
	return b.String()
}

// Files returns the contents of every file matching the glob patterns, in
// pattern order and then name order; directories are skipped. A pattern that matches nothing fails
// tb: a renamed fixture must not silently shrink a corpus.
func Files(tb testing.TB, patterns ...string) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, p := range patterns {
		names, err := filepath.Glob(p)
		if err != nil {
			tb.Fatalf("seed pattern %q: %v", p, err)
		}
		if len(names) == 0 {
			tb.Fatalf("seed pattern %q matches no file", p)
		}
		for _, n := range names {
			if fi, err := os.Stat(n); err == nil && fi.IsDir() {
				continue
			}
			data, err := os.ReadFile(n)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, data)
		}
	}
	return out
}

// Seed adds every file matching the glob patterns to f's seed corpus, so
// that the fuzzer starts from real outputs.
func Seed(f *testing.F, patterns ...string) {
	f.Helper()
	for _, data := range Files(f, patterns...) {
		f.Add(data)
	}
}
