package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func newArchiveCmd(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "archive export|import",
		Short: "Move runs between archives as bundles",
		Long: `Archive moves runs between archives — another site, a laptop, a support
ticket — with nothing lost: "export" writes the selected runs' result bundles
exactly as ingested, each with the file it came from and when; "import"
stores them in another archive. Content already there is skipped (same
content hash), so importing the same file twice adds nothing.

The file is JSON lines (` + store.ArchiveSchema + `): a header, then one run
per line; gzipped when its name ends in .gz. Baselines are not exported.`,
		Example: `  sbench archive export --campaign acceptance -o acceptance.sbench.gz
  sbench archive import --db site-b.db acceptance.sbench.gz
  sbench archive export --label fabric=ib | ssh other sbench archive import -`,
		Args: cobra.NoArgs,
	}
	c.RunE = needSubcommand
	addSubcommands(c, newArchiveExportCmd(e), newArchiveImportCmd(e))
	return c
}

func newArchiveExportCmd(e *env) *cobra.Command {
	var f filterFlags
	var out string
	c := &cobra.Command{
		Use:   "export [filters] [-o FILE|-]",
		Short: "Write the selected runs as an archive file",
		Long: `Export writes the runs the filters select (all runs with none) to FILE, or
to standard output with "-" or no -o. A FILE ending in .gz is gzipped. The
file is written atomically; the output is the same bytes for the same runs.`,
		Example: `  sbench archive export --campaign acceptance -o acceptance.sbench.gz
  sbench archive export --run 12,14 > two-runs.sbench`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			db, flt, err := openFiltered(e, f)
			if err != nil {
				return err
			}
			defer db.Close()
			if err := requireRuns(cmd.Context(), db, "archive export", flt); err != nil {
				return err
			}
			var buf bytes.Buffer
			w := io.Writer(&buf)
			if out == "" || out == "-" {
				w = e.stdout
			}
			var zw *gzip.Writer
			if strings.HasSuffix(out, ".gz") {
				zw = gzip.NewWriter(w)
				w = zw
			}
			n, err := db.ExportArchive(cmd.Context(), w, flt)
			if err != nil {
				return err
			}
			if zw != nil {
				if err := zw.Close(); err != nil {
					return err
				}
			}
			if out != "" && out != "-" {
				if err := results.WriteAtomic(out, buf.Bytes(), 0o644); err != nil {
					return err
				}
			}
			fmt.Fprintf(e.stderr, "exported %d run(s)\n", n)
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVarP(&out, "output", "o", "", "file to write (.gz to compress); - or none for standard output")
	return c
}

func newArchiveImportCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "import FILE...|-",
		Short: "Store the runs of archive files in this archive",
		Long: `Import stores the runs of archive files written by "sbench archive export"
(plain or gzipped; "-" reads standard input). Each file is imported whole or
not at all; runs already in the archive are skipped.`,
		Example: `  sbench archive import --db site-b.db acceptance.sbench.gz
  sbench archive export --db a.db | sbench archive import --db b.db -`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			db, err := openDB(e)
			if err != nil {
				return err
			}
			defer db.Close()
			failed := 0
			for _, name := range args {
				var r io.Reader
				if name == "-" {
					r = e.stdin
				} else {
					fh, err := os.Open(name)
					if err != nil {
						return usageError{err}
					}
					defer fh.Close()
					r = bufio.NewReader(fh)
				}
				res, err := db.ImportArchive(cmd.Context(), r, name)
				if err != nil {
					fmt.Fprintf(e.stderr, "sbench: %v\n", err)
					failed++
					continue
				}
				fmt.Fprintf(e.stdout, "%s: %d run(s) added, %d already archived\n", name, len(res.Added), len(res.Skipped))
			}
			if failed > 0 {
				return exitError{code: exitUsage, msg: fmt.Sprintf("archive import: %d of %d file(s) failed, nothing from them was stored", failed, len(args))}
			}
			return nil
		},
	}
}
