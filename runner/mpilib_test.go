package runner

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
)

// lddPath is where ldd (the loader itself, in trace mode) finds lib for
// prog with env: the answer libResolver must give.
func lddPath(t *testing.T, prog, lib string, env ...string) string {
	t.Helper()
	ldd := testenv.LookPath(t, "ldd", "libc-bin")
	cmd := exec.Command(ldd, prog)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", prog, err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(lib) + ` => (\S+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("ldd %s names no %s:\n%s", prog, lib, out)
	}
	return m[1]
}

// getenvOf is a getenv over a few variables.
func getenvOf(kv ...string) func(string) string {
	return func(k string) string {
		for _, e := range kv {
			if name, v, _ := strings.Cut(e, "="); name == k {
				return v
			}
		}
		return ""
	}
}

// TestToolMPILibraryOpenMPI resolves a program mpicc built on this
// machine's Open MPI as its loader does (ldd says where), and reads the
// library's version from the library, as ompi_info reports it.
func TestToolMPILibraryOpenMPI(t *testing.T) {
	mpicc := testenv.LookPath(t, "mpicc", "libopenmpi-dev")
	ompiInfo := testenv.LookPath(t, "ompi_info", "openmpi-bin")
	dir := t.TempDir()
	src := filepath.Join(dir, "hello.c")
	os.WriteFile(src, []byte("#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n"), 0o644)
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	if out, err := exec.Command(mpicc, "-o", filepath.Join(bin, "mpi_hello"), src).CombinedOutput(); err != nil {
		t.Fatalf("mpicc: %v\n%s", err, out)
	}
	info, err := exec.Command(ompiInfo, "--parsable", "--version").Output()
	if err != nil {
		t.Fatalf("ompi_info: %v", err)
	}
	want := parseMPIVersion("ompi_info", info) // "Open MPI 4.1.4"
	wantPath := lddPath(t, filepath.Join(bin, "mpi_hello"), "libmpi.so.40")

	path, version, err := ToolMPILibrary("mpi_hello", dir, getenvOf("PATH=/nonexistent:relative:"+bin))
	if err != nil || path != wantPath || version != want {
		t.Errorf("mpi_hello loads %q, %q (%v); want %q, %q", path, version, err, wantPath, want)
	}
	// As a path relative to the work directory, and through a symlink.
	os.Symlink(filepath.Join(bin, "mpi_hello"), filepath.Join(dir, "link"))
	if path, version, err := ToolMPILibrary("./link", dir, getenvOf()); err != nil || path != wantPath || version != want {
		t.Errorf("./link loads %q, %q (%v)", path, version, err)
	}
}

// TestToolMPILibraryNone: a script or a program without MPI has no MPI
// library; a program that is not there is an error.
func TestToolMPILibraryNone(t *testing.T) {
	sh := testenv.LookPath(t, "sh", "dash")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\nexec osu_bw\n"), 0o755)
	for _, prog := range []string{filepath.Join(dir, "tool.sh"), sh} {
		if path, version, err := ToolMPILibrary(prog, dir, getenvOf()); path != "" || version != "" || err != nil {
			t.Errorf("%s: %q, %q, %v; want nothing", prog, path, version, err)
		}
	}
	if _, _, err := ToolMPILibrary("no-such-tool", dir, getenvOf("PATH="+dir)); err == nil || !strings.Contains(err.Error(), "no-such-tool: not found in PATH") {
		t.Errorf("error %v", err)
	}
}

// fakeMPILib builds, with gcc, a shared library named name in dir that
// exports version as MPICH does (MPII_Version_string), with marker in
// its read-only data.
func fakeMPILib(t *testing.T, gcc, dir, name, version, marker string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	src := filepath.Join(dir, "mpi.c")
	code := `const char MPII_Version_string[] = "` + version + `";
const char *mpi_marker(void) { return "` + marker + `"; }
int MPI_Init(int *c, char ***v) { return 0; }
`
	os.WriteFile(src, []byte(code), 0o644)
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", filepath.Join(dir, name), "-Wl,-soname,"+name, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	os.Remove(src)
	os.Symlink(name, filepath.Join(dir, strings.Split(name, ".so")[0]+".so")) // for -l
}

// TestToolMPILibraryLoaderOrder builds MPICH-like libraries in three
// prefixes and programs that find them by DT_RUNPATH or DT_RPATH
// ($ORIGIN-relative), with and without LD_LIBRARY_PATH pointing at
// another: the library found is the one ldd (the loader) finds, and its
// version and family the library's.
func TestToolMPILibraryLoaderOrder(t *testing.T) {
	gcc := testenv.LookPath(t, "gcc", "gcc")
	dir := t.TempDir()
	fakeMPILib(t, gcc, filepath.Join(dir, "mpich/lib"), "libmpich.so.12", "4.0.2", "plain")
	fakeMPILib(t, gcc, filepath.Join(dir, "other/lib"), "libmpich.so.12", "3.4.1", "plain")
	fakeMPILib(t, gcc, filepath.Join(dir, "intel/lib"), "libmpich.so.12", "2021.10", "Intel(R) MPI Library %s for Linux* OS")
	src := filepath.Join(dir, "tool.c")
	os.WriteFile(src, []byte("int MPI_Init(int *, char ***);\nint main(int c, char **v) { return MPI_Init(&c, &v); }\n"), 0o644)
	build := func(name, tags string) string {
		bin := filepath.Join(dir, "mpich/bin")
		os.MkdirAll(bin, 0o755)
		out := filepath.Join(bin, name)
		cmd := exec.Command(gcc, "-o", out, src, "-L"+filepath.Join(dir, "mpich/lib"), "-lmpich",
			"-Wl,"+tags, "-Wl,-rpath,$ORIGIN/../lib")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc: %v\n%s", err, b)
		}
		return out
	}
	runpath, rpath := build("tool-runpath", "--enable-new-dtags"), build("tool-rpath", "--disable-new-dtags")
	for _, tt := range []struct {
		prog, ldPath, want string
	}{
		{runpath, "", "MPICH 4.0.2"},
		// LD_LIBRARY_PATH comes before DT_RUNPATH …
		{runpath, filepath.Join(dir, "other/lib"), "MPICH 3.4.1"},
		{runpath, filepath.Join(dir, "intel/lib"), "Intel(R) MPI Library 2021.10"},
		// … and after DT_RPATH.
		{rpath, filepath.Join(dir, "other/lib"), "MPICH 4.0.2"},
	} {
		env := []string{"LD_LIBRARY_PATH=" + tt.ldPath}
		wantPath := lddPath(t, tt.prog, "libmpich.so.12", env...)
		path, version, err := ToolMPILibrary(tt.prog, dir, getenvOf(env...))
		if err != nil || path != wantPath || version != tt.want {
			t.Errorf("%s with %s: %q, %q (%v); want %q, %q", filepath.Base(tt.prog), env[0], path, version, err, wantPath, tt.want)
		}
	}
}

// TestParseLDCache reads this machine's /etc/ld.so.cache and finds what
// ldconfig -p lists: every (name, path) of this machine's libraries.
func TestParseLDCache(t *testing.T) {
	data, err := os.ReadFile("/etc/ld.so.cache")
	if err != nil {
		testenv.Require(t, "no /etc/ld.so.cache: "+err.Error())
	}
	ldconfig, err := exec.LookPath("ldconfig")
	if err != nil {
		ldconfig = "/sbin/ldconfig"
	}
	out, err := exec.Command(ldconfig, "-p").Output()
	if err != nil {
		testenv.Require(t, "ldconfig -p: "+err.Error())
	}
	entries, err := parseLDCache(data)
	if err != nil {
		t.Fatal(err)
	}
	got := map[cacheEntry]bool{}
	for _, e := range entries {
		got[e] = true
	}
	re := regexp.MustCompile(`^\s+(\S+) \(([^)]*)\) => (\S+)$`)
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		m := re.FindStringSubmatch(l)
		if m == nil || strings.Contains(m[2], "hwcap") {
			continue
		}
		n++
		if !got[cacheEntry{m[1], m[3]}] {
			t.Errorf("ldconfig -p lists %s => %s; the parsed cache has not", m[1], m[3])
		}
	}
	if n == 0 || len(entries) != n {
		t.Errorf("%d entries parsed, ldconfig -p lists %d", len(entries), n)
	}
}

// TestParseLDCacheFormats reads a cache of each format glibc writes: the
// new format alone (2.32 and later) and after the old one (before), and
// refuses what is neither.
func TestParseLDCacheFormats(t *testing.T) {
	newFormat := func(entries ...cacheEntry) []byte {
		var strs bytes.Buffer
		base := uint32(ldCacheNewHdr + len(entries)*ldCacheNewEnt)
		var b bytes.Buffer
		b.WriteString(ldCacheNew)
		le := binary.LittleEndian
		b.Write(le.AppendUint32(nil, uint32(len(entries))))
		b.Write(make([]byte, 4)) // len_strings
		b.Write([]byte{2, 0, 0, 0})
		b.Write(make([]byte, 16))
		for _, e := range entries {
			key := base + uint32(strs.Len())
			strs.WriteString(e.name + "\x00")
			val := base + uint32(strs.Len())
			strs.WriteString(e.path + "\x00")
			b.Write(le.AppendUint32(nil, 0x0303))
			b.Write(le.AppendUint32(nil, key))
			b.Write(le.AppendUint32(nil, val))
			b.Write(make([]byte, 12))
		}
		b.Write(strs.Bytes())
		return b.Bytes()
	}
	want := []cacheEntry{{"libmpi.so.40", "/opt/ompi/lib/libmpi.so.40"}, {"libc.so.6", "/lib/libc.so.6"}}
	data := newFormat(want...)
	old := append([]byte(ldCacheOld+"\x00"), binary.LittleEndian.AppendUint32(nil, 1)...)
	old = append(old, make([]byte, ldCacheOldEnt+4)...) // one old entry, then padding to 8
	for name, in := range map[string][]byte{"new": data, "old and new": append(old, data...)} {
		got, err := parseLDCache(in)
		if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: %v, %v", name, got, err)
		}
	}
	for _, bad := range [][]byte{nil, []byte("garbage"), data[:60], []byte(ldCacheOld)} {
		if got, err := parseLDCache(bad); err == nil {
			t.Errorf("%q: %v, no error", bad, got)
		}
	}
}
