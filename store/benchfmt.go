package store

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"

	"github.com/sbench/sbench/results"
)

// benchfmtFixed are the configuration keys of sbench's own in a benchfmt
// export (every run's, but tool_benchmark, which only a run whose name
// does not say it has), in order; labels follow, sorted.
var benchfmtFixed = []string{"campaign", "variant", "tool_benchmark", "nodes", "tasks", "processes", "status"}

// ExportBenchfmt writes the samples, then the scalars that have a unit (and
// do not repeat a sample of their run), of the runs f selects in the Go benchmark format
// (https://go.dev/design/14313-benchmark-format), with golang.org/x/perf's
// writer, so that benchstat and the rest of golang.org/x/perf read sbench's
// archive:
//
//	Unit MB/s better=higher
//	campaign: acceptance
//	nodes: 2
//	fabric: ib
//
//	BenchmarkOsu_bw/metric=bandwidth/size=1048576 1 11873.52 MB/s
//
// Each run's campaign, variant, tool benchmark (when its name does not say
// it: ConfigOf), node, task and process counts, status,
// configuring parameters ("param.NAME") and labels are configuration lines, written when they change from the previous run
// (an empty value clears a key, as the format says). The benchmark name is
// the archive's with its first letter upper-cased, as the format asks;
// the metric, the sample's tags and rank pair, and x ("size" for bytes)
// follow as key=value parts. Iterations are the sample's, or 1. A
// "Unit … better=" line gives every unit whose direction sbench knows
// (results.BetterFor). Runs come in id order (the order they were
// ingested), so that repeated runs of one configuration are the repeated
// lines benchstat computes its statistics from.
func (db *DB) ExportBenchfmt(ctx context.Context, w io.Writer, f Filter) error {
	err := db.readTx(ctx, func(tx *sql.Tx) error {
		bw := bufio.NewWriter(w)
		out := benchfmt.NewWriter(bw)
		units, err := benchfmtUnits(ctx, tx, f)
		if err != nil {
			return err
		}
		for _, u := range units {
			better := map[results.Better]string{results.BetterHigher: "higher", results.BetterLower: "lower"}[results.BetterFor(u)]
			if better != "" {
				out.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Key: "better"}, OrigUnit: benchfmtUnit(u), Value: better})
			}
		}
		// One result per run, its configuration set once: the writer
		// writes what changed from the previous run's.
		var res *benchfmt.Result
		var runID int64
		write := func(r *Run, name string, iters int, value float64, unit string) error {
			if res == nil || r.ID != runID {
				res, runID = &benchfmt.Result{Config: benchfmtConfig(r)}, r.ID
			}
			// The writer writes "Benchmark" itself.
			res.Name, res.Iters = benchfmt.Name(strings.TrimPrefix(benchfmtName(name), "Benchmark")), iters
			res.Values = []benchfmt.Value{{Value: value, Unit: benchfmtUnit(unit)}}
			return out.Write(res)
		}
		var line strings.Builder
		sampleLine := func(r *Run, s Sample) error {
			line.Reset()
			line.WriteString(benchfmtBase(r.Benchmark))
			line.WriteString("/metric=" + benchfmtPart(s.Metric))
			for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
				line.WriteString("/" + benchfmtPart(k) + "=" + benchfmtPart(s.Tags[k]))
			}
			if len(s.Pair) > 0 {
				ranks := make([]string, len(s.Pair))
				for i, p := range s.Pair {
					ranks[i] = strconv.Itoa(p)
				}
				line.WriteString("/pair=" + strings.Join(ranks, ":"))
			}
			if s.X != nil {
				line.WriteString("/" + benchfmtXKey(s.XUnit) + "=" + formatFloat(*s.X))
			}
			unit := s.Unit
			if unit == "" {
				unit = s.Metric
			}
			return write(r, line.String(), max(s.Iterations, 1), s.Value, unit)
		}
		type metricUnit struct{ metric, unit string }
		err = eachRunWithRows(ctx, tx, f, func(r *Run, samples func(func(Sample) error) error, _ func(func(Scalar) error) error) error {
			return samples(func(s Sample) error { return sampleLine(r, s) })
		}, func(r *Run, samples func(func(Sample) error) error, scalars func(func(Scalar) error) error) error {
			// A scalar that repeats a sample of its run (HPL's Gflops,
			// say) is not written twice: the run's metrics, read again.
			var sampled map[metricUnit]bool
			return scalars(func(s Scalar) error {
				// Scalars with no unit are a run's settings (HPL's N, NB,
				// P, Q), not measurements.
				if s.Unit == "" {
					return nil
				}
				if sampled == nil {
					sampled = map[metricUnit]bool{}
					if err := samples(func(x Sample) error {
						sampled[metricUnit{x.Metric, x.Unit}] = true
						return nil
					}); err != nil {
						return err
					}
				}
				if sampled[metricUnit{s.Name, s.Unit}] {
					return nil
				}
				return write(r, benchfmtBase(r.Benchmark)+"/metric="+benchfmtPart(s.Name), 1, s.Value, s.Unit)
			})
		})
		if err != nil {
			return err
		}
		return bw.Flush()
	})
	if err != nil {
		return fmt.Errorf("export benchfmt from %s: %w", db.path, err)
	}
	return nil
}

// benchfmtUnits returns the distinct units of the selected samples and
// scalars, sorted.
func benchfmtUnits(ctx context.Context, q queryer, f Filter) ([]string, error) {
	where, args := f.where()
	units, err := queryStrings(ctx, q, `SELECT s.unit FROM samples s JOIN runs r ON r.id = s.run_id`+where+`
UNION SELECT s.unit FROM scalars s JOIN runs r ON r.id = s.run_id`+where+` ORDER BY 1`, append(args, args...)...)
	return slices.DeleteFunc(units, func(u string) bool { return u == "" }), err
}

// benchfmtConfig is a run's configuration lines, in order.
func benchfmtConfig(r *Run) []benchfmt.Config {
	var out []benchfmt.Config
	put := func(k, v string) {
		if v = benchfmtValue(v); v == "" {
			return
		}
		for i := range out {
			if out[i].Key == k {
				out[i].Value = []byte(v)
				return
			}
		}
		out = append(out, benchfmt.Config{Key: k, Value: []byte(v), File: true})
	}
	cfg := ConfigOf(r)
	put("campaign", r.Campaign)
	put("variant", r.Variant)
	if tb, ok := cfg.Get(AttrToolBenchmark, AttrToolBenchmark); ok {
		put("tool_benchmark", tb)
	}
	if len(r.Nodes) > 0 {
		put("nodes", strconv.Itoa(len(r.Nodes)))
	}
	if r.Tasks > 0 {
		put("tasks", strconv.Itoa(r.Tasks))
	}
	if n := ProcessCount(r); n > 0 {
		put("processes", strconv.Itoa(n))
	}
	put("status", string(r.Status))
	// The rest of the configuration (ConfigOf): parameters that configure
	// (never the repeat index, which would keep benchstat from pooling
	// repeats), then labels.
	for _, a := range cfg {
		if a.Kind == AttrParam {
			put("param."+benchfmtKey(a.Key), a.Value)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(r.Labels)) {
		put(benchfmtKey(k), r.Labels[k])
	}
	return out
}

// benchfmtKey turns a label key into a configuration key: the format wants
// it to start with a lower-case letter and hold no space, upper-case letter
// or colon. A label named like a fixed key gets a "label_" prefix.
func benchfmtKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		switch {
		case unicode.IsUpper(r):
			// Some upper-case letters have no lower case (U+03D2 ϒ):
			// benchfmt's reader would end the key at them.
			if l := unicode.ToLower(r); !unicode.IsUpper(l) {
				b.WriteRune(l)
			} else {
				b.WriteByte('_')
			}
		case unicode.IsSpace(r), r == ':', !unicode.IsPrint(r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	first, _ := utf8.DecodeRuneInString(s)
	if !unicode.IsLower(first) || slices.Contains(benchfmtFixed, s) || strings.HasPrefix(s, "param.") {
		return "label_" + s
	}
	return s
}

// benchfmtValue keeps a configuration value on its line.
func benchfmtValue(v string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || !unicode.IsPrint(r) && r != '\t' {
			return ' '
		}
		return r
	}, v))
}

// benchfmtPart makes s one part of a benchmark name: no space, which ends
// the name, and no slash, which separates parts.
func benchfmtPart(s string) string {
	if s == "" {
		return "_"
	}
	return strings.ReplaceAll(benchfmtUnit(s), "/", "_")
}

// benchfmtBase is "Benchmark" and the benchmark's name, first letter
// upper-cased: a name starting in lower case is not a benchmark line for
// go test's format.
func benchfmtBase(name string) string {
	p := benchfmtPart(name)
	r, n := utf8.DecodeRuneInString(p)
	return "Benchmark" + string(unicode.ToUpper(r)) + p[n:]
}

// benchfmtName guards a full name against a final "-DIGITS", which readers
// take for GOMAXPROCS.
func benchfmtName(name string) string {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	if i < len(name) && i > 0 && name[i-1] == '-' {
		return name[:i-1] + "_" + name[i:]
	}
	return name
}

// benchfmtXKey names the x part of a name after its unit.
func benchfmtXKey(unit string) string {
	switch unit {
	case results.UnitBytes:
		return "size"
	case "":
		return "x"
	}
	return benchfmtPart(unit)
}

// benchfmtUnit makes a unit one field.
func benchfmtUnit(u string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return '_'
		}
		return r
	}, u)
}
