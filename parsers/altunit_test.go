package parsers_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	_ "github.com/sbench/sbench/hpl" // HPL and HPCC register themselves
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// realOutputs lists every tool output kept as a fixture: the parsers' and
// hpl's testdata and the shared article and lab captures.
func realOutputs(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"testdata/*", "../hpl/testdata/*", "../examples/articles/testdata/*"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && !strings.HasSuffix(f, ".md") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 50 {
		t.Fatalf("found %d fixtures, want the whole set", len(files))
	}
	return files
}

// pointKey places a sample in its run: its x and its tags.
func pointKey(s results.Sample) string {
	x := "-"
	if s.X != nil {
		x = fmt.Sprint(*s.X)
	}
	keys := make([]string, 0, len(s.Tags))
	for k, v := range s.Tags {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return x + " " + strings.Join(keys, ",")
}

// Units a primary metric must not be in: each is the unit of a tool's own
// figure, which a parser keeps only as a copy beside a normalised one.
var toolUnits = map[string]bool{"Mbps": true, "MiB/s": true, "Gb/s": true, "bit/s": true, "Mpps": true, "Mbytes/sec": true}

// One measured quantity makes one figure and one verdict line: every metric
// a parser emits on a real output is either primary, in sbench's unit for
// its kind, or a copy results.AltUnitMetric recognises, with a primary
// twin at the same points whose values it repeats in another unit.
func TestEveryMetricIsPrimaryOrARecognisedCopy(t *testing.T) {
	runs := 0
	for _, f := range realOutputs(t) {
		data := parsers.MustRead(t, f)
		bundles, _ := parsers.Parse(f, "auto", data) // refused inputs are other tests' business
		for i, b := range bundles {
			runs++
			checkOneFigurePerQuantity(t, fmt.Sprintf("%s run %d (%s %s)", filepath.Base(f), i+1, b.Benchmark.Kernel, b.Benchmark.Name), b)
		}
	}
	if runs < 100 {
		t.Errorf("checked %d runs, want the fixtures' hundreds", runs)
	}
}

func checkOneFigurePerQuantity(t *testing.T, where string, b *results.Bundle) {
	t.Helper()
	byMetric := map[string][]results.Sample{}
	var metrics []string
	for _, s := range b.Samples {
		if _, seen := byMetric[s.Metric]; !seen {
			metrics = append(metrics, s.Metric)
		}
		byMetric[s.Metric] = append(byMetric[s.Metric], s)
	}
	for _, m := range metrics {
		ss := byMetric[m]
		if !results.AltUnitMetric(m) {
			for _, s := range ss {
				if want := primaryUnit(m); want != "" && s.Unit != want {
					t.Errorf("%s: primary %s in %q, want %q (or name it as a copy AltUnitMetric knows)", where, m, s.Unit, want)
					break
				}
				if toolUnits[s.Unit] {
					t.Errorf("%s: primary %s in the tool's unit %q: a copy AltUnitMetric does not recognise", where, m, s.Unit)
					break
				}
			}
			continue
		}
		twin := m[:strings.LastIndexByte(m, '_')]
		if results.AltUnitMetric(twin) {
			t.Errorf("%s: %s's twin %s is itself a copy", where, m, twin)
			continue
		}
		tw, ok := byMetric[twin]
		if !ok {
			t.Errorf("%s: %s has no primary twin %s in the run: views would drop the only figure", where, m, twin)
			continue
		}
		// The copy's values are the twin's (its Max for a peak) divided by
		// one unit factor, at exactly the same points.
		peak := strings.HasSuffix(m, "_peak")
		at := map[string][]float64{}
		for _, s := range tw {
			v := s.Value
			if peak {
				if s.Max == nil {
					continue
				}
				v = *s.Max
			}
			at[pointKey(s)] = append(at[pointKey(s)], v)
		}
		factor := math.NaN()
		for _, s := range ss {
			k := pointKey(s)
			if len(at[k]) == 0 {
				t.Errorf("%s: %s at %s has no %s at the same point", where, m, k, twin)
				break
			}
			v := at[k][0]
			at[k] = at[k][1:]
			if v == 0 && s.Value == 0 {
				continue
			}
			if math.IsNaN(factor) {
				factor = v / s.Value
			}
			if math.Abs(v/s.Value-factor) > 1e-9*math.Abs(factor) {
				t.Errorf("%s: %s at %s is %g, %s is %g: not the same quantity in another unit (factor %g elsewhere)", where, m, k, s.Value, twin, v, factor)
				break
			}
		}
		if !peak {
			for k, left := range at {
				if len(left) > 0 {
					t.Errorf("%s: %s at %s has no %s copy", where, twin, k, m)
					break
				}
			}
		}
	}
	checkNoHiddenCopies(t, where, metrics, byMetric)
}

// primaryUnit is the normalised unit of a metric's kind, "" when the kind
// has none to check.
func primaryUnit(metric string) string {
	switch {
	case strings.Contains(metric, "bandwidth"):
		return results.UnitMBps
	case strings.Contains(metric, "latency"), metric == "rtt":
		return results.UnitMicroseconds
	}
	return ""
}

// checkNoHiddenCopies finds two primary metrics that are one quantity: the
// same points, in a constant ratio over at least three of them (fewer
// cannot tell a copy from a related figure such as message rate and
// bandwidth at one size).
func checkNoHiddenCopies(t *testing.T, where string, metrics []string, byMetric map[string][]results.Sample) {
	t.Helper()
	var prim []string
	for _, m := range metrics {
		if !results.AltUnitMetric(m) {
			prim = append(prim, m)
		}
	}
	for i, a := range prim {
		for _, c := range prim[i+1:] {
			sa, sc := byMetric[a], byMetric[c]
			if len(sa) != len(sc) || len(sa) < 3 {
				continue
			}
			factor, same := math.NaN(), true
			for j := range sa {
				if pointKey(sa[j]) != pointKey(sc[j]) || sc[j].Value == 0 {
					same = false
					break
				}
				r := sa[j].Value / sc[j].Value
				if math.IsNaN(factor) {
					factor = r
				}
				if math.Abs(r-factor) > 1e-9*math.Abs(factor) {
					same = false
					break
				}
			}
			if same {
				t.Errorf("%s: %s and %s are one quantity (ratio %g at every point) but AltUnitMetric takes both as primary", where, a, c, factor)
			}
		}
	}
}

// No fixture holds a dual-port perftest run. This one is the mlx4 run of
// the fixtures with its table rewritten in the dual-port layout the
// perftest 6.06 binary prints (see TestPerftestHeadersFromBinary), each
// port carrying a share of the traffic that varies a little by size.
func TestDualPortPerftestCopiesHaveTwins(t *testing.T) {
	data := parsers.MustRead(t, "testdata/perftest-mlx4-qdr-a-iter20000-nine-runs.txt")
	lines := strings.Split(string(data), "\n")
	var out []string
	inTable := false
	for _, l := range lines {
		f := strings.Fields(l)
		switch {
		case strings.Contains(l, "BW average[MB/sec]"):
			if inTable || out == nil {
				t.Fatal("fixture changed: want one bandwidth table first")
			}
			inTable = true
			l = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]   BW Port1[MB/sec]   MsgRate Port1[Mpps]   BW Port2[MB/sec]   MsgRate Port2[Mpps]"
		case inTable && len(f) == 5:
			var avg, mr float64
			fmt.Sscan(f[3], &avg)
			fmt.Sscan(f[4], &mr)
			share := 0.5 + 0.01*float64(len(out)%3)
			l += fmt.Sprintf("   %.2f   %.6f   %.2f   %.6f", avg*share, mr*share, avg*(1-share), mr*(1-share))
		case inTable && strings.HasPrefix(l, "----"):
			out = append(out, l)
			bundles, err := parsers.Parse("dual-port", "perftest", []byte(strings.Join(out, "\n")+"\n"))
			if err != nil || len(bundles) != 1 {
				t.Fatalf("%d runs, error %v", len(bundles), err)
			}
			b := bundles[0]
			for _, m := range []string{"bandwidth_port1_avg", "bandwidth_port2_avg", "message_rate_port1_mpps", "message_rate_port2_mpps"} {
				if !hasMetric(b, m) {
					t.Errorf("no %s: the layout is not the dual-port one", m)
				}
			}
			checkOneFigurePerQuantity(t, "dual-port ib_write_bw", b)
			return
		}
		out = append(out, l)
	}
	t.Fatal("fixture changed: no bandwidth table")
}

func hasMetric(b *results.Bundle, metric string) bool {
	for _, s := range b.Samples {
		if s.Metric == metric {
			return true
		}
	}
	return false
}
