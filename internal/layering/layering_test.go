// Package layering holds every package of sbench to its place in the data
// flow of docs/design.md: the table of what each package must not import,
// checked on what it imports directly or through others.
package layering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
)

const module = "github.com/sbench/sbench/"

// rule is a row of docs/design.md's package table. A rule covers its package
// and the packages under it (hpl covers hpl/lu).
type rule struct {
	pkg string
	// not are packages (and the packages under them) it must not depend
	// on; with leaf set, only lists what it may.
	not []string
	// leaf: it may depend on the packages in only, and on none else of
	// ours.
	leaf bool
	only []string
	// except are packages under a forbidden one that are allowed.
	except []string
	// cgoFree: the package builds without cgo (CGO_ENABLED=0) and needs
	// no C library: sbench-runner is one static file.
	cgoFree bool
	why     string
}

var rules = []rule{
	{pkg: "results", leaf: true, why: "the bundle schema is the contract every package above may import; it imports none of ours"},
	{pkg: "sizes", leaf: true, why: "one size parser for every package"},
	{pkg: "svgplot", leaf: true, why: "drawing a plot as SVG for a page knows nothing of benchmarks"},
	{pkg: "reports/typeset", leaf: true, why: "setting pages, tables and figures in a PDF knows nothing of benchmarks"},
	{pkg: "webpage", leaf: true, why: "the pages' shell, style and script are below every HTML view"},
	{pkg: "kernels", leaf: true, only: []string{"sizes", "results"}, why: "the table of native kernels that the campaign and the runner both read, and the screening metrics the runner writes and screen judges"},
	{pkg: "runargs", leaf: true, only: []string{"kernels", "sizes", "results"}, why: "the runner's command line, which the campaign writes and sbench-runner reads"},
	{pkg: "parsers", leaf: true, only: []string{"results", "sizes"}, why: "the parsers sit below everything that uses them"},
	{pkg: "expect", leaf: true, only: []string{"sizes", "results"}, why: "an acceptance reference's bound, point and units, read by the campaign's validation and judged above the archive"},
	{pkg: "expect/judge", not: []string{"reports", "trend", "slurm", "runner", "campaign", "site"}, why: "judging expectations reads the archive, not Slurm or the runner; the reports draw its verdicts"},
	{pkg: "hpl", not: []string{"store", "reports", "runner", "campaign"}, why: "HPL input and output, used by the runner and the campaign"},
	{pkg: "slurm", not: []string{"store", "reports", "runner", "campaign"}, why: "Slurm's seam is below the campaign and the runner"},
	{pkg: "campaign", not: []string{"store", "reports", "runner"}, why: "the campaign reads the kernel table (package kernels), not the runner"},
	{pkg: "runner", not: []string{"store", "reports", "campaign", "compare", "trend"}, cgoFree: true, why: "the runner writes files, never SQLite, and is cgo-free"},
	{pkg: "cmd/sbench-runner", not: []string{"store", "reports", "campaign", "compare", "trend"}, cgoFree: true, why: "one static file copied to compute nodes"},
	{pkg: "store", not: []string{"reports", "compare", "trend", "runner", "campaign"}, why: "the archive is below the analyses"},
	{pkg: "ingest", not: []string{"reports", "compare", "trend", "screen", "site", "runner", "campaign", "slurm", "jobs"}, why: "loading files into the archive is below the analyses and knows nothing of Slurm or campaigns"},
	{pkg: "jobs", not: []string{"reports", "compare", "trend", "screen", "site", "runner"}, why: "reconciling Slurm's jobs with the plan and the archive is below the views and apart from the runner"},
	{pkg: "compare", not: []string{"reports", "trend", "slurm", "runner", "campaign"}, why: "the analysis of runs reads the archive, not Slurm or the runner"},
	// screen is the screening's one analysis: sbench screen prints it, the
	// report draws it.
	{pkg: "screen", not: []string{"reports", "trend", "slurm", "runner", "campaign"}, except: []string{"slurm/hostlist"}, why: "the screening's analysis reads the archive, not Slurm or the runner; the report draws it"},
	{pkg: "trend", not: []string{"reports", "slurm", "runner", "campaign"}, why: "history's analysis reads the archive, not Slurm or the runner"},
	// slurm/hostlist only writes node names, without running anything of
	// Slurm's: reports may compress node lists with it.
	{pkg: "reports", not: []string{"slurm", "runner", "campaign"}, except: []string{"slurm/hostlist"}, why: "reports draw the archive, never Slurm or the runner"},
	{pkg: "site", not: []string{"slurm", "runner", "campaign"}, except: []string{"slurm/hostlist"}, why: "the static site draws the archive, never Slurm or the runner"},
	{pkg: "internal", not: []string{"store", "reports", "runner", "campaign", "slurm", "compare", "trend"}, why: "test helpers must not pull packages into the tests that use them"},
	{pkg: "cmd/sbench", why: "the CLI may use everything"},
	{pkg: "bench", why: "benchmark programs may use everything"},
}

type listed struct {
	ImportPath string
	Standard   bool
	Imports    []string
	Deps       []string
	CgoFiles   []string
	Error      *struct{ Err string }
}

// list runs go list -deps -json with env added, and returns the
// packages by import path.
func list(t *testing.T, env []string, args ...string) map[string]*listed {
	t.Helper()
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		testenv.Require(t, "no go command")
	}
	cmd := exec.Command(goTool, append([]string{"list", "-deps", "-json"}, args...)...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]*listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Errorf("%s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs[p.ImportPath] = &p
	}
	return pkgs
}

// under reports whether pkg is dir or a package under it.
func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// ruleFor is the most specific rule covering pkg (cmd/sbench-runner
// before cmd).
func ruleFor(pkg string) (rule, bool) {
	var best rule
	found := false
	for _, r := range rules {
		if under(pkg, r.pkg) && (!found || len(r.pkg) > len(best.pkg)) {
			best, found = r, true
		}
	}
	return best, found
}

// TestLayering checks every package of the module against its rule.
func TestLayering(t *testing.T) {
	pkgs := list(t, nil, "./...")
	var ours []string
	for path := range pkgs {
		if strings.HasPrefix(path, module) {
			ours = append(ours, path)
		}
	}
	slices.Sort(ours)
	for _, path := range ours {
		pkg := strings.TrimPrefix(path, module)
		r, ok := ruleFor(pkg)
		if !ok {
			t.Errorf("package %s has no rule: add its row to the package table of docs/design.md and to rules here", pkg)
			continue
		}
		for _, dep := range pkgs[path].Deps {
			d, isOurs := strings.CutPrefix(dep, module)
			if !isOurs {
				continue
			}
			if msg := r.forbids(d); msg != "" {
				t.Errorf("%s imports %s%s: %s (%s)", pkg, d, via(pkgs, path, dep), msg, r.why)
			}
		}
	}
}

// forbids says why the rule forbids depending on dep, or "".
func (r rule) forbids(dep string) string {
	if slices.ContainsFunc(r.except, func(e string) bool { return under(dep, e) }) {
		return ""
	}
	if r.leaf {
		if under(dep, r.pkg) || slices.ContainsFunc(r.only, func(o string) bool { return under(dep, o) }) {
			return ""
		}
		if len(r.only) == 0 {
			return r.pkg + " must import none of ours"
		}
		return fmt.Sprintf("%s may import only %s of ours", r.pkg, strings.Join(r.only, ", "))
	}
	for _, n := range r.not {
		if under(dep, n) && !under(r.pkg, n) {
			return r.pkg + " must not import " + n
		}
	}
	return ""
}

// via names the package through which from depends on dep, when it does
// not import it itself: the import to remove.
func via(pkgs map[string]*listed, from, dep string) string {
	// Breadth-first over the module's packages: the shortest chain.
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		lp := pkgs[p]
		if lp == nil {
			continue
		}
		for _, d := range lp.Imports {
			if _, seen := prev[d]; seen {
				continue
			}
			prev[d] = p
			if d == dep {
				var chain []string
				for q := prev[d]; q != from; q = prev[q] {
					chain = append([]string{strings.TrimPrefix(q, module)}, chain...)
				}
				if len(chain) == 0 {
					return ""
				}
				return " (through " + strings.Join(chain, " → ") + ")"
			}
			queue = append(queue, d)
		}
	}
	return ""
}

// TestCgoFree: the packages that must build without cgo do, as shipped
// (CGO_ENABLED=0, netgo, osusergo: the Makefile's build), without the
// runtime's cgo, SQLite or any other package's C code: then sbench-runner
// is one static file.
func TestCgoFree(t *testing.T) {
	var targets []string
	for _, r := range rules {
		if r.cgoFree {
			targets = append(targets, "./"+r.pkg)
		}
	}
	shipped := list(t, []string{"CGO_ENABLED=0"}, append([]string{"-tags", "netgo,osusergo"}, targets...)...)
	for _, target := range targets {
		path := module + strings.TrimPrefix(target, "./")
		for _, dep := range append(shipped[path].Deps, path) {
			p := shipped[dep]
			switch {
			case dep == "runtime/cgo" || strings.Contains(dep, "sqlite"):
				t.Errorf("%s depends on %s%s when built as shipped (CGO_ENABLED=0)", path, dep, via(shipped, path, dep))
			case p != nil && len(p.CgoFiles) > 0:
				t.Errorf("%s depends on %s%s, which has C code (%s), when built as shipped (CGO_ENABLED=0)", path, dep, via(shipped, path, dep), strings.Join(p.CgoFiles, ", "))
			}
		}
	}
}
