package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/screen"
)

// screenOptions are screen's flags.
type screenOptions struct {
	filter   filterFlags
	json     bool
	drain    bool
	latency  float64
	bandwith float64
	node     float64
}

func newScreenCmd(e *env) *cobra.Command {
	var o screenOptions
	c := &cobra.Command{
		Use:   "screen [SELECTOR] [filters] [--json | --drain] [--latency-tolerance 2.1] [--bandwidth-tolerance 0.93] [--node-tolerance 0.85]",
		Short: "Judge a screening of a partition: the bad nodes, one-way links and links, and what to drain",
		Long: `Screen judges the archived runs of a screening campaign (examples/screen.toml:
the matrix kernel over every node pair, STREAM on every node, latency and
bandwidth from a reference node to every other and back; HPL EP if run) and
says which node, which one direction of a node's link, or which node pair is
not what the others are, with the numbers that show it.

Pairs are judged as NVIDIA ClusterKit does: a latency above
--latency-tolerance times the lowest of the matrix, or a bandwidth below
--bandwidth-tolerance of the highest, is outside tolerance. When the
runner re-tested the suspect pairs, a pair is bad only when it stays outside
in every re-test (against the first pass's references); one that came back
is transient — listed, not flagged. Then:

  NODE n3      more than half of n3's links from it AND more than half of
               those to it are bad (the worst node is blamed first, and its
               links no longer count for the others); or both its links to
               the reference node are; or its STREAM triad or HPL Gflops is
               below --node-tolerance of the median over the nodes; or its
               provenance differs from a majority of the nodes (CPU, memory,
               kernel, OS, MPI, governor, InfiniBand port state, rate or
               firmware, network speed). A bad node is drained.
  ONE-WAY n3→* more than half of the links from n3 are bad, those to it fine
               (or *→n3, the other way round): its port, cable or NIC on one
               side, not the node; the links are named, nothing is drained.
  LINK n3→n5   one direction of a pair; n3↔n5 both.
  NOT OK run 12  a screening run failed or is invalid: what it was to
               measure is not judged.

Blaming a node takes 4 nodes in the matrix; with fewer, bad links are links.

SELECTOR picks the runs as compare's do (campaign:NAME@latest, job:ID,
run:IDS, labels, baseline:NAME …), narrowed by the filter flags. Without one,
screen takes the newest ok matrix run the filters select and judges the runs
submitted with it (its campaign's submission, else its job): the newest
screening.

--drain prints only the scontrol lines that drain the bad nodes, quoted for
a shell, for you to review and run: sbench never runs them. --json prints the
whole verdict: findings with their evidence, the drain list, every check's
references and limits, the per-node table, the transient links, warnings.

Exit status 1 when anything is flagged (a node, a one-way link, a link, a
screening run not ok), 0 when nothing is.`,
		Example: `  sbench screen
  sbench screen campaign:screen@latest --drain > drain.sh   # review, then: sh drain.sh
  sbench screen job:4242 --bandwidth-tolerance 0.9
  sbench screen --campaign screen --json | jq '.findings[] | select(.kind=="node") | .subject'
  sbench screen campaign:screen@2          # the screening before the newest`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScreen(cmd.Context(), e, o, args)
		},
	}
	o.filter.add(c)
	fl := c.Flags()
	fl.BoolVar(&o.json, "json", false, "print the whole verdict as JSON")
	fl.BoolVar(&o.drain, "drain", false, "print only the scontrol lines that drain the bad nodes (never runs them)")
	fl.Float64Var(&o.latency, "latency-tolerance", kernels.DefaultLatencyFactor, "a pair's latency above this many times the matrix's lowest is outside tolerance")
	fl.Float64Var(&o.bandwith, "bandwidth-tolerance", kernels.DefaultBandwidthFraction, "a pair's bandwidth below this share of the matrix's highest is outside tolerance")
	fl.Float64Var(&o.node, "node-tolerance", screen.DefaultNodeFraction, "a node's STREAM triad or HPL Gflops below this share of the node median is low")
	return c
}

func runScreen(ctx context.Context, e *env, o screenOptions, args []string) error {
	if o.json && o.drain {
		return usagef("screen: --json holds the drain list already: give --json or --drain")
	}
	opts := screen.Options{Tolerance: kernels.Tolerance{LatencyFactor: o.latency, BandwidthFraction: o.bandwith}, NodeFraction: o.node}
	if err := opts.Check(); err != nil {
		return usagef("screen: %v", err)
	}
	sels, err := parseSelectors("screen", args)
	if err != nil {
		return err
	}
	db, flt, err := openFiltered(e, o.filter)
	if err != nil {
		return err
	}
	defer db.Close()
	what := "the selection"
	if len(sels) == 1 {
		sf, err := sels[0].Filter(ctx, db)
		if err != nil {
			return dataError(fmt.Errorf("screen: %w", err))
		}
		flt = sf.And(flt)
		what = sels[0].String()
		if err := requireRuns(ctx, db, "screen", flt); err != nil {
			return err
		}
	} else {
		latest, desc, err := screen.Latest(ctx, db, flt)
		if errors.Is(err, screen.ErrNoScreening) {
			if err := requireRuns(ctx, db, "screen", flt); err != nil {
				return err
			}
			return usageError{fmt.Errorf("screen: %w", err)}
		}
		if err != nil {
			return fmt.Errorf("screen: %w", err)
		}
		flt, what = latest, desc
	}
	in, err := screen.Load(ctx, db, flt)
	if err != nil {
		return fmt.Errorf("screen: %w", err)
	}
	v := screen.Analyze(in, opts)
	if v.Matrix == nil && v.Reference == nil && len(v.NodeValues) == 0 && len(v.Provenance) == 0 && !v.Flagged() {
		return usagef("screen: %s holds %d run(s) but nothing to screen: no matrix, reference pairs, STREAM or HPL per node, nor nodes' provenance to compare (examples/screen.toml)", what, len(v.Runs))
	}
	switch {
	case o.json:
		err = writeJSON(e, v)
	case o.drain:
		err = v.WriteDrain(e.stdout)
	default:
		err = v.WriteText(e.stdout, what)
	}
	if err != nil {
		return err
	}
	if v.Flagged() {
		return exitError{code: exitGate, msg: "screen: " + v.Summary()}
	}
	return nil
}
