package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// exportColumns are the fixed columns of ExportCSV, in order; one column per
// label key of the selected runs follows them.
var exportColumns = []string{
	"run", "campaign", "variant", "benchmark", "kernel", "metric", "unit", "x", "x_unit",
	"value", "min", "max", "p50", "p99", "iterations", "repeat", "status", "job", "step", "start",
	"processes", "config", "tool_benchmark",
}

// labelColumn names the column of label key: the bare key, unless that
// would clash with a fixed column (or look like a prefixed one), in which
// case "label:KEY".
func labelColumn(key string) string {
	if slices.Contains(exportColumns, key) || strings.HasPrefix(key, "label:") {
		return "label:" + key
	}
	return key
}

// exportRow is one row of an export: a sample, or a scalar (no x, metric =
// the scalar's name, no statistics, iterations or repeat).
type exportRow struct {
	Run        int64             `json:"run"`
	Campaign   string            `json:"campaign"`
	Variant    string            `json:"variant"`
	Benchmark  string            `json:"benchmark"`
	Kernel     string            `json:"kernel"`
	Metric     string            `json:"metric"`
	Unit       string            `json:"unit"`
	X          *float64          `json:"x"`
	XUnit      string            `json:"x_unit"`
	Value      float64           `json:"value"`
	Min        *float64          `json:"min"`
	Max        *float64          `json:"max"`
	P50        *float64          `json:"p50"`
	P99        *float64          `json:"p99"`
	Iterations *int              `json:"iterations"` // nil when unknown (0 in the bundle)
	Repeat     *int              `json:"repeat"`
	Status     string            `json:"status"`
	Job        string            `json:"job"`
	Step       string            `json:"step"`
	Start      *string           `json:"start"`
	Labels     map[string]string `json:"labels"`
	// Processes is the run's process count (ProcessCount), nil when
	// unknown.
	Processes *int `json:"processes"`
	// Config is the run's configuration less its campaign (ConfigOf) as
	// "key=value,…": rows with the same benchmark, metric, x and config
	// are repeats of one measurement, whatever their repeat index.
	Config string `json:"config"`
	// ToolBenchmark is the benchmark the run's tool ran ("IMB-MPI1
	// PingPong"; Run.ToolBenchmark), "" for a native kernel: what tells
	// apart the runs of one campaign benchmark whose tool ran several.
	ToolBenchmark string `json:"tool_benchmark"`
	// Pair and Tags have no CSV column; JSON keeps them for pair-by-pair
	// results.
	Pair []int             `json:"pair,omitempty"`
	Tags map[string]string `json:"tags,omitempty"`
}

// export reads the rows of f in one snapshot, one run at a time: header
// gets the sorted label keys of the selected runs before the first row;
// then every sample, run by run in id order, then every scalar.
func (db *DB) export(ctx context.Context, f Filter, header func(keys []string) error, row func(*exportRow) error) error {
	return db.readTx(ctx, func(tx *sql.Tx) error {
		keys, err := labelKeys(ctx, tx, f)
		if err != nil {
			return err
		}
		if err := header(keys); err != nil {
			return err
		}
		base := func(r *Run) exportRow {
			e := exportRow{
				Run: r.ID, Campaign: r.Campaign, Variant: r.Variant, Benchmark: r.Benchmark, Kernel: r.Kernel,
				Status: string(r.Status), Job: r.JobID, Step: r.Step, Labels: r.Labels, ToolBenchmark: r.ToolBenchmark,
			}
			if e.Labels == nil {
				e.Labels = map[string]string{}
			}
			if n := ProcessCount(r); n > 0 {
				e.Processes = &n
			}
			e.Config = ConfigOf(r).Without(AttrCampaign).String()
			if !r.Start.IsZero() {
				s := r.Start.UTC().Format(time.RFC3339Nano)
				e.Start = &s
			}
			return e
		}
		return eachRunWithRows(ctx, tx, f, func(r *Run, samples func(func(Sample) error) error, scalars func(func(Scalar) error) error) error {
			return samples(func(s Sample) error {
				e := base(r)
				e.Metric, e.Unit, e.X, e.XUnit, e.Value = s.Metric, s.Unit, s.X, s.XUnit, s.Value
				e.Min, e.Max, e.P50, e.P99 = s.Min, s.Max, s.P50, s.P99
				if s.Iterations != 0 {
					e.Iterations = &s.Iterations
				}
				e.Repeat = &s.Repeat
				e.Pair, e.Tags = s.Pair, s.Tags
				return row(&e)
			})
		}, func(r *Run, _ func(func(Sample) error) error, scalars func(func(Scalar) error) error) error {
			return scalars(func(s Scalar) error {
				e := base(r)
				e.Metric, e.Unit, e.Value = s.Name, s.Unit, s.Value
				return row(&e)
			})
		})
	})
}

// labelKeys are the label keys of the runs f selects, sorted; "system"
// among them when a run has a system (its label, see SystemOf).
func labelKeys(ctx context.Context, q queryer, f Filter) ([]string, error) {
	where, args := f.where()
	return queryStrings(ctx, q, `SELECT DISTINCT l.key FROM run_labels l JOIN runs r ON r.id = l.run_id`+where+`
UNION SELECT 'system' FROM runs r`+and(where, "r.system != ''")+` ORDER BY 1`, append(args, args...)...)
}

// and adds a condition to a WHERE clause (possibly empty).
func and(where, cond string) string {
	if where == "" {
		return " WHERE " + cond
	}
	return where + " AND " + cond
}

// A runWalk handles one run, with functions that read its samples (in
// Samples order) and its scalars.
type runWalk func(r *Run, samples func(func(Sample) error) error, scalars func(func(Scalar) error) error) error

// eachRunWithRows walks the runs of f in id order once per pass, each run
// with what reads its own samples and scalars: an export holds one run at
// a time, whatever the archive holds.
func eachRunWithRows(ctx context.Context, tx *sql.Tx, f Filter, passes ...runWalk) error {
	sst, err := tx.PrepareContext(ctx, "SELECT "+sampleColumns(true)+" FROM samples s WHERE s.run_id = ? ORDER BY s.metric, s.x, s.repeat, s.seq")
	if err != nil {
		return err
	}
	defer sst.Close()
	cst, err := tx.PrepareContext(ctx, "SELECT s.run_id, s.name, s.unit, s.value FROM scalars s WHERE s.run_id = ? ORDER BY s.seq")
	if err != nil {
		return err
	}
	defer cst.Close()
	in := interner{}
	for _, pass := range passes {
		err := eachRun(ctx, tx, f, RunOptions{Detail: RunParams, ByID: true}, func(r *Run) error {
			samples := func(fn func(Sample) error) error {
				rows, err := sst.QueryContext(ctx, r.ID)
				if err != nil {
					return err
				}
				return decodeSamples(rows, true, in, fn)
			}
			scalars := func(fn func(Scalar) error) error {
				rows, err := cst.QueryContext(ctx, r.ID)
				if err != nil {
					return err
				}
				return decodeScalars(rows, fn)
			}
			return pass(r, samples, scalars)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ExportCSV writes every sample, then every scalar, of the runs f selects as
// CSV: the columns of exportColumns, then one per label key present in the
// selection (see labelColumn). Floats are written in their shortest exact
// form, an absent value as an empty field.
func (db *DB) ExportCSV(ctx context.Context, w io.Writer, f Filter) error {
	cw := csv.NewWriter(w)
	var keys []string
	record := make([]string, 0, len(exportColumns)+8)
	err := db.export(ctx, f, func(k []string) error {
		keys = k
		record = append(record[:0], exportColumns...)
		for _, k := range keys {
			record = append(record, labelColumn(k))
		}
		return cw.Write(record)
	}, func(e *exportRow) error {
		record = append(record[:0],
			strconv.FormatInt(e.Run, 10), e.Campaign, e.Variant, e.Benchmark, e.Kernel, e.Metric, e.Unit,
			csvField(e.X, formatFloat), e.XUnit, formatFloat(e.Value), csvField(e.Min, formatFloat), csvField(e.Max, formatFloat),
			csvField(e.P50, formatFloat), csvField(e.P99, formatFloat), csvField(e.Iterations, strconv.Itoa), csvField(e.Repeat, strconv.Itoa),
			e.Status, e.Job, e.Step, csvField(e.Start, strings.Clone), csvField(e.Processes, strconv.Itoa), e.Config, e.ToolBenchmark)
		for _, k := range keys {
			record = append(record, e.Labels[k])
		}
		return cw.Write(record)
	})
	if err == nil {
		cw.Flush()
		err = cw.Error()
	}
	if err != nil {
		return fmt.Errorf("export csv from %s: %w", db.path, err)
	}
	return nil
}

// ExportJSON writes the same rows as ExportCSV as a JSON array of objects,
// one per line, with the labels as an object.
func (db *DB) ExportJSON(ctx context.Context, w io.Writer, f Filter) error {
	n := 0
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Labels and commands are shown to people, not embedded in HTML.
	enc.SetEscapeHTML(false)
	err := db.export(ctx, f, func([]string) error {
		_, err := io.WriteString(w, "[")
		return err
	}, func(e *exportRow) error {
		buf.Reset()
		if n == 0 {
			buf.WriteString("\n")
		} else {
			buf.WriteString(",\n")
		}
		n++
		if err := enc.Encode(e); err != nil {
			return err
		}
		// Encode ends the object with a newline; the separator comes first.
		buf.Truncate(buf.Len() - 1)
		_, err := w.Write(buf.Bytes())
		return err
	})
	if err == nil {
		end := "\n]\n"
		if n == 0 {
			end = "]\n"
		}
		_, err = io.WriteString(w, end)
	}
	if err != nil {
		return fmt.Errorf("export json from %s: %w", db.path, err)
	}
	return nil
}

// formatFloat is the one float format of exports: shortest exact, so that
// parsing it back gives the stored value bit for bit.
// formatFloat writes the shortest text that reads back as v, in plain
// decimal where that is readable (message sizes stay 4194304, not
// 4.194304e+06) and with an exponent for very large or small values.
func formatFloat(v float64) string {
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e15) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// csvField is an optional value as a CSV field: empty when absent.
func csvField[T any](p *T, format func(T) string) string {
	if p == nil {
		return ""
	}
	return format(*p)
}
