package golden

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	for _, tt := range []struct{ want, got, has string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\n  want \"b\"\n  got  \"c\"\n"},
		{"a\n", "a", "want 2 bytes, got 1"},
		{strings.Repeat("x\n", 20), strings.Repeat("y\n", 20), "… and more (want 21 lines, got 21)"},
	} {
		if d := Diff(tt.want, tt.got); !strings.Contains(d, tt.has) || (tt.has == "") != (d == "") {
			t.Errorf("Diff(%q, %q) = %q, want it to hold %q", tt.want, tt.got, d, tt.has)
		}
	}
}

// recorder is a testing.TB that keeps the failure instead of reporting it.
type recorder struct {
	testing.TB
	failure string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failure += fmt.Sprintf(format, args...)
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// failure runs f with a recorder, as a test would, and returns why it failed.
func failure(t *testing.T, f func(tb testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failure
}

func setUpdate(t *testing.T, on bool) {
	old := flag.Lookup(updateFlag).Value.String()
	flag.Set(updateFlag, fmt.Sprint(on))
	t.Cleanup(func() { flag.Set(updateFlag, old) })
}

func TestCheck(t *testing.T) {
	setUpdate(t, false)
	path := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(path, []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		f    func(testing.TB)
		want string
	}{
		{"same string", func(tb testing.TB) { Check(tb, path, "ok\n") }, ""},
		{"same bytes", func(tb testing.TB) { Check(tb, path, []byte("ok\n")) }, ""},
		{"differs", func(tb testing.TB) { Check(tb, path, "ko\n") }, path + " differs from the output (go test -update rewrites it; review the diff):\nline 1:"},
		{"missing", func(tb testing.TB) { Check(tb, path+".none", "") }, "(go test -update creates it)"},
	} {
		if got := failure(t, tt.f); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: failure %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Under -update, Check writes the golden file and its directory, and the
// next run without -update compares equal.
func TestCheckUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "golden", "out.json")
	setUpdate(t, true)
	if !Update() {
		t.Fatal("Update() is false under -update")
	}
	CheckJSON(t, path, map[string]string{"a": "<&>"})
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "{\n  \"a\": \"<&>\"\n}\n" {
		t.Fatalf("golden file %q, %v", data, err)
	}
	setUpdate(t, false)
	CheckJSON(t, path, map[string]string{"a": "<&>"})
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "b"), []byte("b"), 0o644)
	os.WriteFile(filepath.Join(dir, "a"), []byte("a"), 0o644)
	if got := Files(t, filepath.Join(dir, "*")); len(got) != 2 || string(got[0]) != "a" || string(got[1]) != "b" {
		t.Errorf("Files = %q, want a and b without the directory", got)
	}
	if got := failure(t, func(tb testing.TB) { Files(tb, filepath.Join(dir, "x*")) }); !strings.Contains(got, "matches no file") {
		t.Errorf("a pattern matching nothing: failure %q", got)
	}
}
