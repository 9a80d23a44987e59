package runner

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The MPI library a wrapped tool loads is not necessarily the one whose
// mpirun is first in PATH (Host.MPI): a module loaded after the build, an
// RPATH into another prefix, LD_LIBRARY_PATH. So each node's description
// resolves the tool's program as the dynamic loader would and reads the
// version out of the MPI library it finds (debug/elf: no cgo, and the
// program is never run).

// mpiLibNames are the base names (before ".so") of MPI libraries proper:
// Open MPI's, MPICH's (and MVAPICH's, Intel MPI's libmpi.so.12), Cray's.
// Not their language bindings (libmpi_cxx, libmpifort …), which need
// them.
var mpiLibNames = map[string]bool{"libmpi": true, "libmpich": true, "libmpi_cray": true}

// isMPILib reports whether a library's name (a DT_NEEDED entry or a
// file name) is an MPI library proper.
func isMPILib(name string) bool {
	base, _, ok := strings.Cut(filepath.Base(name), ".so")
	return ok && mpiLibNames[base]
}

// mpiVersionSymbols are the read-only strings MPI libraries export with
// their version, and the family each names: Open MPI's ident (its version
// unless configured --with-ident-string), MPICH's MPICH_VERSION (MPII_
// since 3.3, MPIR_ before), which its derivatives keep.
var mpiVersionSymbols = []struct{ symbol, family string }{
	{"ompi_version_string", "Open MPI"},
	{"MPII_Version_string", "MPICH"},
	{"MPIR_Version_string", "MPICH"},
}

// mpichDerivatives name the MPIs built from MPICH, by a string their
// library holds: the version symbol alone would call them MPICH.
var mpichDerivatives = []struct{ marker, family string }{
	{"Intel(R) MPI Library", "Intel(R) MPI Library"},
	{"MVAPICH2", "MVAPICH2"},
	{"MVAPICH", "MVAPICH"},
}

// libResolver finds shared libraries as glibc's dynamic loader does
// (ld.so(8)): DT_RPATH of the requesting object and of those that loaded
// it (an object's DT_RPATH counts only without DT_RUNPATH),
// LD_LIBRARY_PATH, the requesting object's DT_RUNPATH, /etc/ld.so.cache,
// the default directories. $ORIGIN, $LIB and $PLATFORM are expanded. Not
// modelled: LD_PRELOAD, /etc/ld.so.preload, the glibc-hwcaps
// subdirectories and secure-execution mode.
type libResolver struct {
	getenv func(string) string
	// cache is /etc/ld.so.cache's path; defaults, the loader's default
	// directories (nil: the usual ones for the program's machine).
	cache    string
	defaults []string

	cacheRead    bool
	cacheEntries []cacheEntry
}

// loaded is one object of a program's dependency tree.
type loaded struct {
	path    string
	soname  string
	rpath   []string // DT_RPATH, when there is no DT_RUNPATH
	runpath []string
	needed  []string
	loader  int // index of the object that loaded it; -1 for the program
}

// maxLoaded bounds the dependency tree walked: a program with more
// libraries than this is not looked at past them.
const maxLoaded = 512

// ToolMPILibrary resolves a wrapped tool's program (argv0, as the runner
// starts it in dir with the runner's PATH) and the MPI library it loads:
// the library's path and what it says it is ("Open MPI 4.1.4", "MPICH
// 4.0.2"), or "" for a version it does not say. A program linked to no
// MPI library gives "", "". A program built statically with MPI is its
// own MPI library.
func ToolMPILibrary(argv0, dir string, getenv func(string) string) (path, version string, err error) {
	r := &libResolver{getenv: getenv, cache: "/etc/ld.so.cache"}
	return r.toolMPILibrary(argv0, dir)
}

func (r *libResolver) toolMPILibrary(argv0, dir string) (string, string, error) {
	prog, err := lookProgram(argv0, dir, r.getenv("PATH"))
	if err != nil {
		return "", "", err
	}
	lib, err := r.findMPILib(prog)
	if err != nil || lib == "" {
		return "", "", err
	}
	v, err := mpiLibVersion(lib)
	return lib, v, err
}

// lookProgram finds argv0 as the runner's exec does: a name with a slash
// relative to dir (the command's working directory), else the first
// executable file of that name in an absolute PATH directory.
func lookProgram(argv0, dir, path string) (string, error) {
	if strings.Contains(argv0, "/") {
		if !filepath.IsAbs(argv0) {
			argv0 = filepath.Join(dir, argv0)
		}
		if !isExecutable(argv0) {
			return "", fmt.Errorf("%s: not an executable file", argv0)
		}
		return argv0, nil
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue // exec refuses what relative PATH entries find
		}
		if p := filepath.Join(d, argv0); isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in PATH", argv0)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// findMPILib walks the program's dependencies breadth first, as the
// loader loads them, and returns the path of the first MPI library: the
// one every later request for it gets. A program that defines an MPI
// version symbol itself (a static build) is its own. Not an ELF file (a
// script): no library.
func (r *libResolver) findMPILib(prog string) (string, error) {
	f, err := elf.Open(prog)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return "", nil
		}
		return "", err
	}
	class, machine := f.Class, f.Machine
	root, err := readLoaded(f, prog, -1)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("%s: %w", prog, err)
	}
	if own, _ := hasMPIVersion(prog); own {
		return prog, nil
	}
	// $ORIGIN of the program is its real directory (/proc/self/exe).
	if real, err := filepath.EvalSymlinks(prog); err == nil {
		root.path = real
	}
	objs := []*loaded{root}
	byName := map[string]bool{}
	for i := 0; i < len(objs) && len(objs) < maxLoaded; i++ {
		for _, name := range objs[i].needed {
			if byName[name] {
				continue
			}
			p := r.resolve(name, objs, i, class, machine)
			if p == "" {
				continue // the loader would fail; the tool will say so
			}
			byName[name] = true
			if isMPILib(name) || isMPILib(p) {
				return p, nil
			}
			lf, err := elf.Open(p)
			if err != nil {
				continue
			}
			l, err := readLoaded(lf, p, i)
			lf.Close()
			if err != nil {
				continue
			}
			if l.soname != "" {
				byName[l.soname] = true
			}
			objs = append(objs, l)
		}
	}
	return "", nil
}

// readLoaded reads an object's dynamic section.
func readLoaded(f *elf.File, path string, loader int) (*loaded, error) {
	l := &loaded{path: path, loader: loader}
	var err error
	if l.needed, err = f.DynString(elf.DT_NEEDED); err != nil {
		return nil, err
	}
	if s, _ := f.DynString(elf.DT_SONAME); len(s) > 0 {
		l.soname = s[0]
	}
	runpath, _ := f.DynString(elf.DT_RUNPATH)
	for _, s := range runpath {
		l.runpath = append(l.runpath, filepath.SplitList(s)...)
	}
	if len(runpath) == 0 {
		rpath, _ := f.DynString(elf.DT_RPATH)
		for _, s := range rpath {
			l.rpath = append(l.rpath, filepath.SplitList(s)...)
		}
	}
	return l, nil
}

// resolve finds the file the loader maps for name, needed by objs[i], or
// "".
func (r *libResolver) resolve(name string, objs []*loaded, i int, class elf.Class, machine elf.Machine) string {
	if strings.Contains(name, "/") {
		if matchesELF(name, class, machine) {
			return name
		}
		return ""
	}
	try := func(dirs []string, origin string) string {
		for _, d := range dirs {
			for _, dir := range expandDST(d, origin, class, machine) {
				if dir == "" {
					continue
				}
				// As the loader forms it (and ldd prints it), uncleaned:
				// "bin/../lib" is not "lib" where bin is a symlink.
				if p := strings.TrimSuffix(dir, "/") + "/" + name; matchesELF(p, class, machine) {
					return p
				}
			}
		}
		return ""
	}
	if len(objs[i].runpath) == 0 {
		// DT_RPATH of the requester and up the chain of loaders, the
		// program's last.
		for j := i; j >= 0; j = objs[j].loader {
			if p := try(objs[j].rpath, filepath.Dir(objs[j].path)); p != "" {
				return p
			}
		}
	}
	if p := try(filepath.SplitList(r.getenv("LD_LIBRARY_PATH")), ""); p != "" {
		return p
	}
	if p := try(objs[i].runpath, filepath.Dir(objs[i].path)); p != "" {
		return p
	}
	for _, e := range r.cacheLookup(name) {
		if matchesELF(e, class, machine) {
			return e
		}
	}
	defaults := r.defaults
	if defaults == nil {
		defaults = defaultLibDirs(class, machine)
	}
	return try(defaults, "")
}

// expandDST expands the loader's dynamic string tokens in a search
// directory: $ORIGIN (the requesting object's directory), $LIB and
// $PLATFORM, as ${NAME} too. $LIB is lib/<multiarch triplet> on Debian
// and lib64 elsewhere: both are tried. Nothing for $ORIGIN where it is
// unknown (LD_LIBRARY_PATH's).
func expandDST(dir, origin string, class elf.Class, machine elf.Machine) []string {
	if !strings.Contains(dir, "$") {
		return []string{dir}
	}
	dirs := []string{dir}
	sub := func(token string, values ...string) {
		var out []string
		for _, d := range dirs {
			if !strings.Contains(d, "$"+token) && !strings.Contains(d, "${"+token+"}") {
				out = append(out, d)
				continue
			}
			for _, v := range values {
				out = append(out, strings.NewReplacer("${"+token+"}", v, "$"+token, v).Replace(d))
			}
		}
		dirs = out
	}
	if origin == "" {
		origin = "\x00" // no such directory
	}
	sub("ORIGIN", origin)
	triplet, platform := multiarch(class, machine)
	var libs []string
	if triplet != "" {
		libs = append(libs, "lib/"+triplet)
	}
	if class == elf.ELFCLASS64 {
		libs = append(libs, "lib64")
	}
	sub("LIB", append(libs, "lib")...)
	sub("PLATFORM", platform)
	return slices.DeleteFunc(dirs, func(d string) bool { return strings.Contains(d, "\x00") })
}

// multiarch is Debian's triplet and the AT_PLATFORM of a machine.
func multiarch(class elf.Class, machine elf.Machine) (triplet, platform string) {
	switch {
	case machine == elf.EM_X86_64 && class == elf.ELFCLASS64:
		return "x86_64-linux-gnu", "x86_64"
	case machine == elf.EM_AARCH64:
		return "aarch64-linux-gnu", "aarch64"
	case machine == elf.EM_PPC64:
		return "powerpc64le-linux-gnu", "powerpc64le"
	case machine == elf.EM_386:
		return "i386-linux-gnu", "i686"
	}
	return "", ""
}

// defaultLibDirs are the loader's trusted directories: Debian's
// multiarch ones, then the lib64 and lib of other distributions.
func defaultLibDirs(class elf.Class, machine elf.Machine) []string {
	var dirs []string
	if t, _ := multiarch(class, machine); t != "" {
		dirs = append(dirs, "/lib/"+t, "/usr/lib/"+t)
	}
	if class == elf.ELFCLASS64 {
		dirs = append(dirs, "/lib64", "/usr/lib64")
	}
	return append(dirs, "/lib", "/usr/lib")
}

// matchesELF reports whether p is an ELF object the program can load:
// the loader skips files of another class or machine and goes on.
func matchesELF(p string, class elf.Class, machine elf.Machine) bool {
	f, err := elf.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return f.Class == class && f.Machine == machine
}

// cacheEntry is a library of ld.so.cache: its name and path.
type cacheEntry struct{ name, path string }

// cacheLookup is the paths ld.so.cache gives name, in the cache's order
// (the loader takes the first that fits the program).
func (r *libResolver) cacheLookup(name string) []string {
	if !r.cacheRead {
		r.cacheRead = true
		if data, err := os.ReadFile(r.cache); err == nil {
			r.cacheEntries, _ = parseLDCache(data)
		}
	}
	var out []string
	for _, e := range r.cacheEntries {
		if e.name == name {
			out = append(out, e.path)
		}
	}
	return out
}

// ld.so.cache's formats: glibc 2.32 and later write the new one alone;
// older ones write the old (libc5) format with the new after it.
const (
	ldCacheNew    = "glibc-ld.so.cache1.1"
	ldCacheOld    = "ld.so-1.7.0"
	ldCacheNewHdr = 48 // magic, version, nlibs, len_strings, flags, pad, extension_offset, unused[3]
	ldCacheNewEnt = 24 // flags, key, value, osversion, hwcap
	ldCacheOldEnt = 12 // flags, key, value
)

// parseLDCache reads the entries of /etc/ld.so.cache (ldconfig -p shows
// the same). Entries for glibc-hwcaps subdirectories (a hwcap) are left
// out: the loader takes those only on CPUs that have the capability.
func parseLDCache(data []byte) ([]cacheEntry, error) {
	if bytes.HasPrefix(data, []byte(ldCacheOld)) {
		if len(data) < 16 {
			return nil, errors.New("ld.so.cache: truncated")
		}
		// The old header (magic, nlibs) and entries, then the new format
		// at the next 8-byte boundary.
		n := binary.LittleEndian.Uint32(data[12:16])
		off := 16 + uint64(n)*ldCacheOldEnt
		off = (off + 7) &^ 7
		if off > uint64(len(data)) {
			return nil, errors.New("ld.so.cache: truncated")
		}
		data = data[off:]
	}
	if !bytes.HasPrefix(data, []byte(ldCacheNew)) || len(data) < ldCacheNewHdr {
		return nil, errors.New("ld.so.cache: not a format this reader knows")
	}
	order := binary.ByteOrder(binary.LittleEndian)
	switch data[28] { // flags: the cache's byte order, 0 when unknown
	case 3:
		order = binary.BigEndian
	}
	n := uint64(order.Uint32(data[20:24]))
	if ldCacheNewHdr+n*ldCacheNewEnt > uint64(len(data)) {
		return nil, errors.New("ld.so.cache: truncated")
	}
	str := func(off uint32) (string, bool) {
		if uint64(off) >= uint64(len(data)) {
			return "", false
		}
		s := data[off:]
		end := bytes.IndexByte(s, 0)
		if end < 0 {
			return "", false
		}
		return string(s[:end]), true
	}
	var out []cacheEntry
	for i := uint64(0); i < n; i++ {
		e := data[ldCacheNewHdr+i*ldCacheNewEnt:]
		if order.Uint64(e[16:24]) != 0 {
			continue
		}
		name, ok1 := str(order.Uint32(e[4:8]))
		path, ok2 := str(order.Uint32(e[8:12]))
		if ok1 && ok2 {
			out = append(out, cacheEntry{name, path})
		}
	}
	return out, nil
}

// hasMPIVersion reports whether an object exports an MPI version string.
func hasMPIVersion(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	syms, _ := f.DynamicSymbols()
	for _, s := range syms {
		for _, v := range mpiVersionSymbols {
			if s.Name == v.symbol && s.Section != elf.SHN_UNDEF {
				return true, nil
			}
		}
	}
	return false, nil
}

// maxVersionLen bounds a version string read from a library.
const maxVersionLen = 128

// mpiLibVersion reads what an MPI library says it is from the version
// string it exports: "Open MPI 4.1.4", "MPICH 4.0.2", "Intel(R) MPI
// Library 2021.10" …; "" when it exports none this reader knows.
func mpiLibVersion(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		return "", nil // no dynamic symbols: nothing to say
	}
	for _, v := range mpiVersionSymbols {
		for _, s := range syms {
			if s.Name != v.symbol || s.Section == elf.SHN_UNDEF {
				continue
			}
			ver, err := readCString(f, s.Value)
			if err != nil || ver == "" {
				return "", err
			}
			family := v.family
			if family == "MPICH" {
				family = mpichFamily(f, family)
			}
			return printable(family+" "+ver, 200), nil
		}
	}
	return "", nil
}

// readCString reads the NUL-terminated string at virtual address addr.
func readCString(f *elf.File, addr uint64) (string, error) {
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || addr < s.Addr || addr >= s.Addr+s.Size {
			continue
		}
		n := min(s.Addr+s.Size-addr, maxVersionLen)
		buf := make([]byte, n)
		if _, err := s.ReadAt(buf, int64(addr-s.Addr)); err != nil && err != io.EOF {
			return "", err
		}
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			buf = buf[:i]
		}
		return strings.TrimSpace(string(buf)), nil
	}
	return "", fmt.Errorf("address %#x is in no section", addr)
}

// mpichFamily names an MPICH-derived library by the marker its read-only
// data holds, else family.
func mpichFamily(f *elf.File, family string) string {
	ro := f.Section(".rodata")
	if ro == nil {
		return family
	}
	data, err := ro.Data()
	if err != nil {
		return family
	}
	for _, d := range mpichDerivatives {
		if bytes.Contains(data, []byte(d.marker)) {
			return d.family
		}
	}
	return family
}
