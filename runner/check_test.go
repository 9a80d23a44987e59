package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

func TestParseCheck(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"bandwidth@4194304>=3000", "bandwidth@4194304>=3000"},
		{"bandwidth@4M >= 3000", "bandwidth@4194304>=3000"},
		{"latency@1<=5", "latency@1<=5"},
		{"gflops>100", "gflops>100"},
		{"time_s<2.5e3", "time_s<2500"},
		{"x@0.5<-1.25", "x@0.5<-1.25"},
		{"bandwidth@4MiB>=3000", "bandwidth@4194304>=3000"},
		{"bandwidth@64 KiB>=3000", "bandwidth@65536>=3000"},
		{"bandwidth@1KB>=3000", "bandwidth@1000>=3000"},
		{"x@-2>1", "x@-2>1"},
		{"x@1e3>1", "x@1000>1"},
	} {
		c, err := ParseCheck(tt.in)
		if err != nil || c.String() != tt.want {
			t.Errorf("ParseCheck(%q) = %v, %v; want %s", tt.in, c, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"bandwidth", "no comparison"},
		{">=3", "no metric"},
		{"a b>=3", "no spaces"},
		{"bw>=", "threshold after >=: \"\" is not a number"},
		{"bw>=fast", "is not a number"},
		{"bw>=inf", "is not a number"},
		{"bw@x>=1", "x after @"},
		{"bw@4Q>=1", "x after @"},
		{"bw=>1", "no spaces, '='"},
		{"bw>=1>2", "is not a number"},
	} {
		if _, err := ParseCheck(tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseCheck(%q): %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestApplyChecks(t *testing.T) {
	bundle := func() *results.Bundle {
		b := results.New()
		for _, v := range []struct{ x, bw float64 }{{1, 2}, {4194304, 3100}} {
			b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", X: results.F(v.x), Value: v.bw})
		}
		// Two directions of one size: the worst one counts.
		b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", X: results.F(4194304), Value: 2900})
		b.Samples = append(b.Samples, results.Sample{Metric: "rate", Value: 7})
		b.Scalars = []results.Scalar{{Name: "gflops", Value: 73.5}}
		return b
	}
	for _, tt := range []struct {
		specs  []string
		status results.Status
		error  string
		checks string
	}{
		{[]string{"bandwidth@4M>=2800", "gflops>=70", "rate<8"}, results.StatusOK, "",
			"[{bandwidth@4194304 2900 2800 >= true} {gflops 73.5 70 >= true} {rate 7 8 < true}]"},
		{[]string{"bandwidth@4M>=3000"}, results.StatusInvalid, "check bandwidth@4194304>=3000 failed: bandwidth@4194304 is 2900",
			"[{bandwidth@4194304 2900 3000 >= false}]"},
		{[]string{"bandwidth@1<=1", "latency@1<=5"}, results.StatusInvalid,
			"check bandwidth@1<=1 failed: bandwidth@1 is 2; check latency@1<=5: no sample latency@1 to judge",
			"[{bandwidth@1 2 1 <= false} {latency@1 0 5 <= false}]"},
		{[]string{"gflops>100"}, results.StatusInvalid, "check gflops>100 failed: gflops is 73.5", "[{gflops 73.5 100 > false}]"},
		{[]string{"hpl>1"}, results.StatusInvalid, "check hpl>1: no scalar or sample hpl to judge", "[{hpl 0 1 > false}]"},
	} {
		b := bundle()
		var specs []CheckSpec
		for _, s := range tt.specs {
			specs = append(specs, mustCheck(t, s))
		}
		ApplyChecks(b, specs)
		if b.Status != tt.status || b.Error != tt.error || fmt.Sprint(b.Checks) != tt.checks {
			t.Errorf("%v: status %s, error %q, checks %v\nwant %s, %q, %s", tt.specs, b.Status, b.Error, b.Checks, tt.status, tt.error, tt.checks)
		}
	}
	// An invalid run keeps its own reason first; a failed run is left alone.
	b := bundle()
	b.Status, b.Error = results.StatusInvalid, "residual check failed"
	ApplyChecks(b, []CheckSpec{mustCheck(t, "gflops>100")})
	if b.Error != "residual check failed; check gflops>100 failed: gflops is 73.5" {
		t.Errorf("error %q", b.Error)
	}
	b = bundle()
	b.Status, b.Error = results.StatusFailed, "rank 1 died"
	ApplyChecks(b, []CheckSpec{mustCheck(t, "gflops>100")})
	if b.Status != results.StatusFailed || b.Error != "rank 1 died" || len(b.Checks) != 0 {
		t.Errorf("a failed run was judged: %s %q %v", b.Status, b.Error, b.Checks)
	}
}

// FuzzParseCheck: any spec either fails cleanly or reads back the same
// from its canonical form.
func FuzzParseCheck(f *testing.F) {
	for _, s := range []string{"bandwidth@4194304>=3000", "latency@1<=5", "gflops>100", "x@4K<1e-3", "a@@1>=2", "<", "a>=", "m@1.5e300G>=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCheck(s)
		if err != nil {
			return
		}
		again, err := ParseCheck(c.String())
		if err != nil {
			t.Fatalf("%q parsed as %q, which does not parse: %v", s, c, err)
		}
		if again.String() != c.String() || again.Metric != c.Metric || again.Op != c.Op || again.Threshold != c.Threshold ||
			(again.X == nil) != (c.X == nil) || c.X != nil && *again.X != *c.X {
			t.Fatalf("%q: %+v, then %+v", s, c, again)
		}
	})
}
