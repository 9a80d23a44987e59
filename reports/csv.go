package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// WriteCSV writes the report's numbers into dir, for spreadsheets and
// scripts: one NAME.csv per figure with every plotted point (median, min,
// max and sample count), and summary.csv with the rows of the summary
// tables. Files are written atomically.
func (r *Report) WriteCSV(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	write := func(name string, rows [][]string) error {
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		if err := w.WriteAll(rows); err != nil {
			return fmt.Errorf("write csv %s: %w", name, err)
		}
		if err := results.WriteAtomic(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
		return nil
	}
	for _, f := range r.figures {
		var rows [][]string
		if f.Kind == KindMatrix {
			rows = append(rows, []string{"from", "to", "value", "unit"})
			g := f.matrix
			for i, a := range g.nodes {
				for j, b := range g.nodes {
					if v, ok := g.values[[2]int{i, j}]; ok {
						rows = append(rows, []string{a, b, num(v), g.unit})
					}
				}
			}
		} else {
			x := "size_bytes"
			if f.Kind == KindScaling {
				x = "ranks"
			}
			rows = append(rows, []string{"configuration", "ranks", x, "median", "min", "max", "samples", "unit"})
			for _, s := range f.Series {
				for _, p := range s.Points {
					rows = append(rows, []string{s.Config, strconv.Itoa(s.Ranks), num(p.X), num(p.Y), num(p.Min), num(p.Max), strconv.Itoa(p.N), f.Unit})
				}
			}
		}
		if err := write(f.Name+".csv", rows); err != nil {
			return err
		}
	}
	rows := [][]string{{"benchmark", "metric", "configuration", "ranks", "figure", "value", "unit", "at_size_bytes", "runs"}}
	for _, f := range r.families {
		for _, g := range f.groups {
			for _, b := range g.bandwidth {
				runs := store.FormatRunIDs(b.Runs)
				rows = append(rows,
					[]string{f.name, g.metricLabel(), b.Config, strconv.Itoa(b.Ranks), "peak", num(b.Peak), "MB/s", num(b.PeakAt), runs},
					[]string{f.name, g.metricLabel(), b.Config, strconv.Itoa(b.Ranks), "largest_size", num(b.Largest), "MB/s", num(b.LargestAt), runs})
				if b.HalfPeakAt > 0 {
					rows = append(rows, []string{f.name, g.metricLabel(), b.Config, strconv.Itoa(b.Ranks), "n_half", num(b.HalfPeakAt), "bytes", "", runs})
				}
				if b.LinkRate > 0 {
					rows = append(rows,
						[]string{f.name, g.metricLabel(), b.Config, strconv.Itoa(b.Ranks), "link_rate", num(b.LinkRate), "Gb/s", "", runs},
						[]string{f.name, g.metricLabel(), b.Config, strconv.Itoa(b.Ranks), "percent_of_link", num(b.PercentOfLink), "%", "", runs})
				}
			}
			for _, l := range g.latency {
				runs := store.FormatRunIDs(l.Runs)
				rows = append(rows,
					[]string{f.name, g.metricLabel(), l.Config, strconv.Itoa(l.Ranks), "smallest_size", num(l.Smallest), "us", num(l.SmallestAt), runs},
					[]string{f.name, g.metricLabel(), l.Config, strconv.Itoa(l.Ranks), "largest_size", num(l.Largest), "us", num(l.LargestAt), runs})
			}
		}
		for _, m := range f.matrices {
			s := m.summary
			runs := store.FormatRunIDs(s.Runs)
			for _, w := range []struct {
				what string
				v    float64
			}{{"min", s.Min}, {"median", s.Median}, {"max", s.Max}} {
				rows = append(rows, []string{f.name, m.metric, m.config, "", w.what, num(w.v), s.Unit, "", runs})
			}
		}
		for _, h := range f.hpl {
			valid := "valid"
			if !h.Valid {
				valid = "invalid"
			}
			rows = append(rows, []string{f.name, "gflops", h.Config, strconv.Itoa(h.P * h.Q), valid, num(h.Gflops), "Gflops", "", strconv.FormatInt(h.Run, 10)})
		}
	}
	return write("summary.csv", rows)
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
