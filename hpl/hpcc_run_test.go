package hpl

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/results"
)

// TestHPCCRunsGeneratedInput gives the real hpcc (Debian's) an
// hpccinf.txt that sets every value away from its default and lists
// several of them, and checks from hpcc's own output that it ran exactly
// the tests the input asks for, with the values asked for.
func TestHPCCRunsGeneratedInput(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hpcc (about 3 s)")
	}
	testenv.LookPath(t, "hpcc", "hpcc")
	testenv.LookPath(t, "mpirun", "openmpi-bin")
	in := Input{
		Ns: []int{400, 480}, NBs: []int{32, 40}, PMAP: PMapColumn, Grids: []Grid{{1, 2}, {2, 1}},
		Threshold: 20, PFACTs: []Fact{FactLeft}, NBMINs: []int{2}, NDIVs: []int{3},
		RFACTs: []Fact{FactCrout}, BCASTs: []Bcast{Bcast2RingM, BcastLongM}, DEPTHs: []int{0},
		SWAP: SwapLong, SwapThreshold: 32, L1NoTransposed: true, UNoTransposed: true,
		Equilibration: false, Align: 16, PTRANSNs: []int{300}, PTRANSNBs: []int{16},
	}
	data, err := in.HPCCInf()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hpccinf.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := testenv.Context(t)
	cmd := exec.CommandContext(ctx, "mpirun", "--oversubscribe", "--bind-to", "none", "-np", "2", "hpcc")
	cmd.Dir = dir
	// As the lab's notes say: loopback only, and root allowed.
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
		"OMPI_MCA_btl_tcp_if_include=lo", "OMPI_MCA_oob_tcp_if_include=lo")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mpirun hpcc: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "hpccoutf.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bundles, err := ParseHPCC("hpccoutf.txt", f)
	if err != nil {
		t.Fatal(err)
	}
	var tests []string
	for _, b := range bundles {
		if b.Benchmark.Name != "hpcc-hpl" {
			if b.Status != results.StatusOK {
				t.Errorf("hpcc's summary: %s %s", b.Status, b.Error)
			}
			continue
		}
		if b.Status != results.StatusOK {
			t.Errorf("test %s: %s %s", b.Params["test"], b.Status, b.Error)
		}
		p := b.Params
		tests = append(tests, strings.Join([]string{p["N"], p["NB"], p["P"], p["Q"], p["PFACT"], p["NBMIN"], p["NDIV"], p["RFACT"], p["BCAST"], p["DEPTH"]}, " "))
		for k, want := range map[string]string{
			"PMAP": "Column-major process mapping", "SWAP": "Spread-roll (long)", "L1": "no-transposed form",
			"U": "no-transposed form", "EQUIL": "no", "ALIGN": "16 double precision words", "threshold": "20.0",
		} {
			if p[k] != want {
				t.Errorf("test %s: %s = %q, want %q", p["test"], k, p[k], want)
			}
		}
	}
	var want []string
	for _, n := range in.Ns {
		for _, nb := range in.NBs {
			for _, g := range in.Grids {
				for _, bc := range []string{"2ringM", "BlongM"} {
					want = append(want, strings.Join([]string{strconv.Itoa(n), strconv.Itoa(nb), strconv.Itoa(g.P), strconv.Itoa(g.Q), "Left", "2", "3", "Crout", bc, "0"}, " "))
				}
			}
		}
	}
	sort.Strings(tests)
	sort.Strings(want)
	if strings.Join(tests, "\n") != strings.Join(want, "\n") {
		t.Errorf("hpcc ran the tests\n%s\nwant\n%s", strings.Join(tests, "\n"), strings.Join(want, "\n"))
	}
	if len(want) != in.Tests() {
		t.Errorf("Tests() = %d, want %d", in.Tests(), len(want))
	}
}
