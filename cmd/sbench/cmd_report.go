package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/reports"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func newReportCmd(e *env) *cobra.Command {
	var f filterFlags
	var out, title string
	c := &cobra.Command{
		Use:   "report -o report.pdf [filters]",
		Short: "Write a PDF report of the archived runs",
		Long: `Report writes a PDF: a title page, the table of runs (job, variant, nodes,
hosts, state), and for each benchmark family figures of bandwidth and latency
against message size with one line per configuration, with summary tables.
The file is written atomically: an existing report is replaced only by a
complete one.`,
		Example: `  sbench report -o report.pdf
  sbench report --campaign quickstart --title "Fabric check" -o fabric.pdf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("report: -o FILE is required")
			}
			flt, err := f.filter()
			if err != nil {
				return err
			}
			db, err := openDB(e)
			if err != nil {
				return err
			}
			defer db.Close()
			ctx := cmd.Context()
			d := reports.Data{Title: title, Generated: time.Now(), Version: version}
			if d.Runs, err = db.Runs(ctx, flt); err != nil {
				return err
			}
			if len(d.Runs) == 0 {
				return fmt.Errorf("report: no runs in %s match the selection", e.db)
			}
			ids := make([]int64, len(d.Runs))
			for i, r := range d.Runs {
				ids[i] = r.ID
			}
			byID := store.Filter{RunIDs: ids}
			if d.Samples, err = db.Samples(ctx, byID); err != nil {
				return err
			}
			if d.Scalars, err = db.Scalars(ctx, byID); err != nil {
				return err
			}
			if d.Checks, err = db.Checks(ctx, byID); err != nil {
				return err
			}
			if d.Jobs, err = db.Jobs(ctx, f.campaign); err != nil {
				return err
			}
			var buf bytes.Buffer
			if err := reports.Write(&buf, d); err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if err := results.WriteAtomic(out, buf.Bytes(), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "wrote %s (%d runs, %d bytes)\n", out, len(d.Runs), buf.Len())
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVarP(&out, "output", "o", "", "PDF file to write")
	c.Flags().StringVar(&title, "title", "", "report title (default: from the campaigns)")
	return c
}
