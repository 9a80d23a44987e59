package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/hpl"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/runner"
)

func newHPLCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "hpl size|rpeak|input",
		Short: "Size HPL runs, compute peaks, show a campaign's HPL inputs",
		Long: `The hpl commands help with HPL and HPC Challenge runs:

  size   N, NB and the P×Q grid for nodes of a given memory, with the reasoning
  rpeak  the theoretical peak (cores × GHz × flops/cycle) of this machine
  input  the HPL.dat / hpccinf.txt each run of a campaign will get`,
		Example: `  sbench hpl size --nodes 4 --mem-per-node 64GiB --ranks-per-node 36
  sbench hpl rpeak --nodes 4
  sbench hpl input examples/hpcc.toml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	addSubcommands(c, newHPLSizeCmd(e), newHPLRpeakCmd(e), newHPLInputCmd(e))
	return c
}

// hplSizeOptions are sbench hpl size's flags, as typed.
type hplSizeOptions struct {
	nodes, ranksPerNode, nb int
	mem                     string
	fraction, gflops        float64
	asJSON                  bool
}

// sizeRequest checks the flags; what the user left out is this machine's.
func (f hplSizeOptions) sizeRequest(here func() results.Host) (hpl.SizeRequest, []string, error) {
	req := hpl.SizeRequest{Nodes: f.nodes, RanksPerNode: f.ranksPerNode, NB: f.nb, Fraction: f.fraction, Gflops: f.gflops}
	var notes []string
	switch {
	case f.nodes < 1:
		return req, nil, usagef("hpl size: --nodes %d: want at least 1", f.nodes)
	case f.ranksPerNode < 0:
		return req, nil, usagef("hpl size: --ranks-per-node %d: want at least 1", f.ranksPerNode)
	case f.nb < 0:
		return req, nil, usagef("hpl size: --nb %d: want at least 1", f.nb)
	case f.fraction < 0 || f.fraction > 1:
		return req, nil, usagef("hpl size: --fraction %v: want more than 0 and at most 1", f.fraction)
	case f.gflops < 0:
		return req, nil, usagef("hpl size: --gflops %v: want a positive rate", f.gflops)
	}
	if f.mem != "" {
		m, err := hpl.ParseBytes(f.mem)
		if err != nil {
			return req, nil, usagef("hpl size: --mem-per-node: %v", err)
		}
		req.MemPerNode = m
	}
	if req.MemPerNode == 0 || req.RanksPerNode == 0 {
		h := here()
		if req.MemPerNode == 0 {
			if h.MemoryBytes == 0 {
				return req, nil, usagef("hpl size: give --mem-per-node (this machine's memory is unknown)")
			}
			req.MemPerNode = h.MemoryBytes
			notes = append(notes, "memory per node: this machine's, "+hpl.FormatBytes(h.MemoryBytes)+" (--mem-per-node sets it)")
		}
		if req.RanksPerNode == 0 {
			if h.Cores == 0 {
				return req, nil, usagef("hpl size: give --ranks-per-node (this machine's core count is unknown)")
			}
			req.RanksPerNode = h.Cores
			notes = append(notes, fmt.Sprintf("ranks per node: one per core of this machine, %d (--ranks-per-node sets it)", h.Cores))
		}
	}
	return req, notes, nil
}

func newHPLSizeCmd(e *env) *cobra.Command {
	var o hplSizeOptions
	c := &cobra.Command{
		Use:   "size [--nodes N] [--mem-per-node SIZE] [--ranks-per-node R] [--fraction F] [--nb NB] [--gflops G] [--json]",
		Short: "Choose N, NB, P and Q for HPL",
		Long: `Size chooses HPL's problem for a set of nodes: N is the largest multiple of
NB whose matrix (8·N² bytes) fits in the fraction (default 0.8) of the nodes'
memory, and P×Q is the grid over every rank nearest a square with P ≤ Q. The
first line is "N=… NB=… P=… Q=…"; the lines after it give the reasoning, and
with --gflops the expected solve time, (2/3·N³ + 3/2·N²) / rate.

Without --mem-per-node or --ranks-per-node, this machine's memory and core
count are used. Sizes take units: 64GiB, 64G (binary, as Slurm means it),
64GB (decimal). In a campaign, [benchmark.hpl] n = "auto" does the same for
each run's nodes and ranks.`,
		Example: `  sbench hpl size --nodes 4 --mem-per-node 64GiB --ranks-per-node 36
  sbench hpl size --nodes 16 --mem-per-node 256G --ranks-per-node 64 --nb 256 --gflops 40000
  sbench hpl size --json | jq .n`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHPLSize(cmd.Context(), e, o)
		},
	}
	c.Flags().IntVar(&o.nodes, "nodes", 1, "number of nodes")
	c.Flags().StringVar(&o.mem, "mem-per-node", "", "memory of each node, e.g. 64GiB (default: this machine's)")
	c.Flags().IntVar(&o.ranksPerNode, "ranks-per-node", 0, "MPI ranks per node (default: this machine's cores)")
	c.Flags().Float64Var(&o.fraction, "fraction", hpl.DefaultFraction, "fraction of the memory the matrix may take")
	c.Flags().IntVar(&o.nb, "nb", hpl.DefaultNB, "block size NB")
	c.Flags().Float64Var(&o.gflops, "gflops", 0, "expected rate in Gflops, for the run time")
	c.Flags().BoolVar(&o.asJSON, "json", false, "print JSON")
	return c
}

// runHPLSize prints N, NB, P and Q for the nodes the options describe.
func runHPLSize(ctx context.Context, e *env, o hplSizeOptions) error {
	req, notes, err := o.sizeRequest(func() results.Host { return runner.GatherHost("/", e.getenv) })
	if err != nil {
		return err
	}
	s, err := hpl.Size(req)
	if err != nil {
		return usageError{err}
	}
	return writeSizing(e, s, req, notes, o.asJSON)
}

func writeSizing(e *env, s hpl.Sizing, req hpl.SizeRequest, notes []string, asJSON bool) error {
	if asJSON {
		type out struct {
			N           int      `json:"n"`
			NB          int      `json:"nb"`
			P           int      `json:"p"`
			Q           int      `json:"q"`
			Nodes       int      `json:"nodes"`
			Ranks       int      `json:"ranks"`
			MemBytes    uint64   `json:"mem_bytes"`
			MatrixBytes uint64   `json:"matrix_bytes"`
			Fill        float64  `json:"fill"`
			Gflops      float64  `json:"gflops,omitempty"`
			Seconds     float64  `json:"seconds,omitempty"`
			Reasons     []string `json:"reasons"`
		}
		return writeJSON(e, out{s.N, s.NB, s.P, s.Q, req.Nodes, s.Ranks, s.MemBytes, s.MatrixBytes, s.Fill, req.Gflops, s.Seconds, append(notes, s.Reasons...)})
	}
	fmt.Fprintf(e.stdout, "N=%d NB=%d P=%d Q=%d\n", s.N, s.NB, s.P, s.Q)
	for _, r := range append(notes, s.Reasons...) {
		fmt.Fprintln(e.stdout, "  "+r)
	}
	fmt.Fprintf(e.stdout, "  campaign: [benchmark.hpl] n = %d, nb = %d, p = %d, q = %d (or n = \"auto\" to size each run)\n", s.N, s.NB, s.P, s.Q)
	return nil
}

// hplRpeakOptions are hpl rpeak's flags.
type hplRpeakOptions struct {
	nodes, cores int
	ghz, fpc     float64
	json         bool
}

func newHPLRpeakCmd(e *env) *cobra.Command {
	var o hplRpeakOptions
	c := &cobra.Command{
		Use:   "rpeak [--nodes N] [--cores C] [--ghz G] [--flops-per-cycle F] [--json]",
		Short: "Compute the theoretical peak (Rpeak) of nodes like this one",
		Long: `Rpeak prints the theoretical double-precision peak of N nodes like this one:
cores × GHz × flops per cycle, so that HPL's Rmax can be stated as an
efficiency (Rmax/Rpeak). The first line is "Rpeak=… Gflops", the next says
where every factor came from.

Flops per cycle come from the CPU flags: AVX-512 32 (assuming two FMA units;
AMD's Zen 4 16), AVX2+FMA 16, AVX 8, SSE2 4. The clock is the one in the CPU
model name ("@ 2.60GHz"), else the CPU's base (or maximum) frequency from
/sys. Any factor can be given instead, and must be when it cannot be known
(a VM's CPU model often names no clock).`,
		Example: `  sbench hpl rpeak
  sbench hpl rpeak --nodes 16 --ghz 2.1
  sbench hpl rpeak --cores 64 --ghz 2.25 --flops-per-cycle 16 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHPLRpeak(cmd.Context(), e, o)
		},
	}
	c.Flags().IntVar(&o.nodes, "nodes", 1, "number of nodes like this one")
	c.Flags().IntVar(&o.cores, "cores", 0, "cores per node (default: this machine's)")
	c.Flags().Float64Var(&o.ghz, "ghz", 0, "clock in GHz (default: from the CPU model or /sys)")
	c.Flags().Float64Var(&o.fpc, "flops-per-cycle", 0, "double-precision flops per cycle per core (default: from the CPU flags)")
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

// runHPLRpeak prints the theoretical peak of the nodes.
func runHPLRpeak(ctx context.Context, e *env, o hplRpeakOptions) error {
	if o.nodes < 1 || o.cores < 0 || o.ghz < 0 || o.fpc < 0 {
		return usagef("hpl rpeak: --nodes must be at least 1, --cores, --ghz and --flops-per-cycle positive")
	}
	h := runner.GatherHost("/", e.getenv)
	g, how := hpl.ClusterRpeak(h, o.nodes, hpl.PeakSpec{Cores: o.cores, GHz: o.ghz, FlopsPerCycle: o.fpc})
	if g == 0 {
		return fmt.Errorf("hpl rpeak: %s", how)
	}
	if o.json {
		return writeJSON(e, map[string]any{"rpeak_gflops": g, "nodes": o.nodes, "how": how, "cpu_model": h.CPUModel})
	}
	fmt.Fprintf(e.stdout, "Rpeak=%s Gflops\n  %s\n", strconv.FormatFloat(g, 'f', -1, 64), how)
	if h.CPUModel != "" {
		fmt.Fprintf(e.stdout, "  CPU: %s\n", h.CPUModel)
	}
	return nil
}

// hplInputOptions are hpl input's flags.
type hplInputOptions struct {
	outDir, site string
}

func newHPLInputCmd(e *env) *cobra.Command {
	var o hplInputOptions
	c := &cobra.Command{
		Use:   "input CAMPAIGN.toml [-o DIR]",
		Short: "Show the HPL.dat or hpccinf.txt each HPL run of a campaign gets",
		Long: `Input prints the input file sbench writes for every run of kind "hpl" or
"hpcc" in a campaign — "auto" values resolved for the run's nodes, ranks and
memory — each after a header line naming the benchmark, variant and file.
With -o the files are written to DIR instead, named
BENCHMARK.VARIANT.FILE, and their paths printed. The campaign is read
under its site profile (--site FILE, $SBENCH_SITE or
~/.config/sbench/site.toml), as submit reads it.`,
		Example: `  sbench hpl input examples/hpcc.toml
  sbench hpl input my-hpl.toml -o /tmp/inputs && head /tmp/inputs/*`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHPLInput(cmd.Context(), e, o, args)
		},
	}
	c.Flags().StringVarP(&o.outDir, "output", "o", "", "write the files to `DIR`")
	c.Flags().StringVar(&o.site, "site", "", siteFlagUsage)
	return c
}

// runHPLInput prints (or with -o writes) the input file of every HPL and
// HPCC run of the campaign args[0].
func runHPLInput(ctx context.Context, e *env, o hplInputOptions, args []string) error {
	camp, err := loadCampaignSite(e, args[0], o.site)
	if err != nil {
		return err
	}
	runs, err := camp.Runs()
	if err != nil {
		return err
	}
	if o.outDir != "" {
		if err := os.MkdirAll(o.outDir, 0o755); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	n := 0
	for _, r := range runs {
		if r.Benchmark.Kind != campaign.KindHPL && r.Benchmark.Kind != campaign.KindHPCC {
			continue
		}
		id := r.Benchmark.Name + "." + r.Name
		if seen[id] { // repeats of one run get the same input
			continue
		}
		seen[id] = true
		files, err := camp.InputFiles(r)
		if err != nil {
			return err
		}
		in, err := camp.HPLInput(r)
		if err != nil {
			return err
		}
		name := "HPL.dat"
		if r.Benchmark.Kind == campaign.KindHPCC {
			name = "hpccinf.txt"
		}
		n++
		if o.outDir != "" {
			p := filepath.Join(o.outDir, fileSafe(id)+"."+name)
			if err := results.WriteAtomic(p, files[name], 0o644); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, p)
			continue
		}
		if n > 1 {
			fmt.Fprintln(e.stdout)
		}
		fmt.Fprintf(e.stdout, "==> benchmark %s, variant %s: %s (%d test(s), %d rank(s) needed) <==\n", r.Benchmark.Name, r.Name, name, in.Tests(), in.MaxRanks())
		e.stdout.Write(files[name])
	}
	if n == 0 {
		return usagef("hpl input: %s has no benchmark of kind hpl or hpcc", args[0])
	}
	return nil
}

// fileSafe keeps a variant name usable as a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == ' ' {
			return '_'
		}
		return r
	}, s)
}
