package main

import (
	"context"
	"github.com/spf13/cobra"
)

// exportOptions are export's flags.
type exportOptions struct {
	filter filterFlags
	format string
}

func newExportCmd(e *env) *cobra.Command {
	var o exportOptions
	c := &cobra.Command{
		Use:   "export [--format csv|json|benchfmt] [filters]",
		Short: "Print the archive's samples as CSV, JSON or Go benchmark format",
		Long: `Export prints every sample (and every scalar, with an empty x) of the
selected runs. The CSV header starts with run,campaign,variant,benchmark,kernel,
metric,unit,x,x_unit,value and ends with one column per label. x is the message
size in bytes for point-to-point and collective curves; MB/s is 10^6 bytes/s,
as OSU prints it. config is the run's configuration, and tool_benchmark the
benchmark its tool ran ("IMB-MPI1 PingPong"; empty for a native kernel): what
tells apart the runs of one campaign benchmark wrapping a command that runs
several.

--format benchfmt writes the Go benchmark format, with each run's campaign,
variant, node count and labels as configuration lines and the units'
directions (Unit MB/s better=higher), so that benchstat compares archived
runs: sbench export --format benchfmt --label stage=before > old.txt.`,
		Example: `  sbench export --format csv > samples.csv
  sbench export --campaign quickstart --benchmark latency --format json
  sbench export --label fabric=ib --format csv | column -s, -t
  sbench export --format benchfmt --label fabric=ib > ib.txt && benchstat ib.txt eth.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd.Context(), e, o)
		},
	}
	o.filter.add(c)
	c.Flags().StringVar(&o.format, "format", "csv", "csv, json or benchfmt")
	return c
}

// runExport writes the selected runs' samples as CSV, JSON or benchfmt.
func runExport(ctx context.Context, e *env, o exportOptions) error {
	db, flt, err := openFiltered(e, o.filter)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := requireRuns(ctx, db, "export", flt); err != nil {
		return err
	}
	switch o.format {
	case "csv":
		return db.ExportCSV(ctx, e.stdout, flt)
	case "json":
		return db.ExportJSON(ctx, e.stdout, flt)
	case "benchfmt":
		return db.ExportBenchfmt(ctx, e.stdout, flt)
	}
	return usagef("export: --format %q: want csv, json or benchfmt", o.format)
}
