package expect

import (
	"math"
	"strings"
	"testing"
)

func TestParseBound(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Bound
	}{
		{">= 24 GB/s", Bound{Op: ">=", Kind: Absolute, Value: 24, Unit: "GB/s"}},
		{"<=3us", Bound{Op: "<=", Kind: Absolute, Value: 3, Unit: "us"}},
		{"< 1.5e3", Bound{Op: "<", Kind: Absolute, Value: 1500}},
		{"> -2 s", Bound{Op: ">", Kind: Absolute, Value: -2, Unit: "s"}},
		{">= 900 timesteps/s", Bound{Op: ">=", Kind: Absolute, Value: 900, Unit: "timesteps/s"}},
		{">= 0.9 * link_rate", Bound{Op: ">=", Kind: LinkRate, Value: 0.9}},
		{">= 90% * link_rate", Bound{Op: ">=", Kind: LinkRate, Value: 0.9}},
		{">=link_rate", Bound{Op: ">=", Kind: LinkRate, Value: 1}},
		{">= 0.75*rpeak", Bound{Op: ">=", Kind: Rpeak, Value: 0.75}},
		{">= rpeak - 30%", Bound{Op: ">=", Kind: Rpeak, Value: 1, Margin: -0.3}},
		{">= baseline:pre-upgrade - 5%", Bound{Op: ">=", Kind: Baseline, Value: 1, Baseline: "pre-upgrade", Margin: -0.05}},
		{"<= baseline:acc-2024 +2.5%", Bound{Op: "<=", Kind: Baseline, Value: 1, Baseline: "acc-2024", Margin: 0.025}},
		{"  >= baseline:b  ", Bound{Op: ">=", Kind: Baseline, Value: 1, Baseline: "b"}},
	} {
		got, err := ParseBound(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseBound(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		// What String writes reads back the same.
		again, err := ParseBound(got.String())
		if err != nil || again != got {
			t.Errorf("ParseBound(%q) of %q = %+v, %v", got.String(), tt.in, again, err)
		}
	}
}

func TestParseBoundErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", "want an operator first"},
		{"24 GB/s", "want an operator first"},
		{"=> 24", "want an operator first"},
		{">=", "nothing after the operator"},
		{">= GB/s", "want a number with its unit"},
		{">= 24 GB s", `"GB s" is not a unit`},
		{">= 24 5%", `is not a unit`},
		{">= 1e999 GB/s", "is not a number"},
		{">= 0 * link_rate", "want a positive number"},
		{">= x * rpeak", "want a positive number"},
		{">= 0.9 * link_rate 5%", "want a margin"},
		{">= baseline:", "baseline name"},
		{">= baseline:a,b", "baseline name"},
		{">= baseline:pre - 5", "want a margin"},
		{">= baseline:pre - 150%", "from 0 to 100"},
		{">= baseline:pre - -5%", "from 0 to 100"},
	} {
		_, err := ParseBound(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseBound(%q) = %v; want an error with %q", tt.in, err, tt.want)
		}
	}
}

func TestHolds(t *testing.T) {
	for _, tt := range []struct {
		op           string
		value, limit float64
		want         bool
	}{
		{">=", 10, 10, true}, {">=", 9.9, 10, false}, {">", 10, 10, false},
		{"<=", 3, 3, true}, {"<=", 3.1, 3, false}, {"<", 3, 3, false}, {"<", 2, 3, true},
	} {
		if got := (Bound{Op: tt.op}).Holds(tt.value, tt.limit); got != tt.want {
			t.Errorf("%v %s %v = %v", tt.value, tt.op, tt.limit, got)
		}
	}
}

func TestParseAt(t *testing.T) {
	for in, want := range map[string]float64{"4MiB": 4 << 20, "4194304": 4194304, "64K": 64 << 10, "8": 8} {
		p, err := ParseAt(in)
		if err != nil || p.X == nil || *p.X != want || p.Best {
			t.Errorf("ParseAt(%q) = %+v, %v; want %v", in, p, err, want)
		}
	}
	if p, err := ParseAt("best"); err != nil || !p.Best || p.X != nil {
		t.Errorf("ParseAt(best) = %+v, %v", p, err)
	}
	if p, err := ParseAt(""); err != nil || p.Best || p.X != nil {
		t.Errorf("ParseAt('') = %+v, %v", p, err)
	}
	for _, in := range []string{"huge", "4 MiBs", "nan"} {
		if _, err := ParseAt(in); err == nil {
			t.Errorf("ParseAt(%q) accepted", in)
		}
	}
}

func TestConvert(t *testing.T) {
	for _, tt := range []struct {
		v        float64
		from, to string
		want     float64
	}{
		{24, "GB/s", "MB/s", 24000},
		{100, "Gb/s", "MB/s", 12500},
		{100, "Gbps", "MB/s", 12500},
		{1, "MiB/s", "MB/s", 1.048576},
		{3, "us", "us", 3},
		{3, "ms", "us", 3000},
		{2, "Tflops", "Gflops", 2000},
		{2, "TFLOPS", "Gflops", 2000},
		{900, "timesteps/s", "timesteps/s", 900},
		{900, "Timesteps/s", "timesteps/s", 900},
		{5, "", "anything", 5},
	} {
		got, err := Convert(tt.v, tt.from, tt.to)
		if err != nil || math.Abs(got-tt.want) > 1e-9*math.Abs(tt.want) {
			t.Errorf("Convert(%v, %s, %s) = %v, %v; want %v", tt.v, tt.from, tt.to, got, err, tt.want)
		}
	}
	for _, tt := range [][2]string{{"GB/s", "us"}, {"us", "Gflops"}, {"tau/day", "timesteps/s"}, {"GB/s", "timesteps/s"}} {
		if _, err := Convert(1, tt[0], tt[1]); err == nil {
			t.Errorf("Convert(1, %s, %s) accepted", tt[0], tt[1])
		}
	}
}

func TestRefCheck(t *testing.T) {
	ok := Ref{Benchmark: "osu_bw", Metric: "bandwidth", At: "4MiB", Bound: ">= 24 GB/s"}
	if err := ok.Check(); err != nil {
		t.Error(err)
	}
	if ok.Title() != "osu_bw bandwidth@4MiB" {
		t.Errorf("title %q", ok.Title())
	}
	bad := Ref{Metric: "bandwidth", At: "huge", Bound: "24"}
	err := bad.Check()
	for _, want := range []string{"benchmark is missing", "want an operator", `at "huge"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v; want %q", err, want)
		}
	}
}

// FuzzParseBound: any input is read or refused with an error, never a
// panic; what is read writes back to a bound that reads the same, and
// its numbers are finite.
func FuzzParseBound(f *testing.F) {
	for _, s := range []string{">= 24 GB/s", "<= 3 us", ">= 0.9 * link_rate", ">= 75% * rpeak", ">= baseline:pre-upgrade - 5%", "<", ">= 1e308 s", ">=.5", ">= baseline:x +0%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBound(s)
		if err != nil {
			if b != (Bound{}) {
				t.Fatalf("ParseBound(%q) = %+v with error %v", s, b, err)
			}
			return
		}
		if math.IsNaN(b.Value) || math.IsInf(b.Value, 0) || math.IsNaN(b.Margin) {
			t.Fatalf("ParseBound(%q) = %+v", s, b)
		}
		again, err := ParseBound(b.String())
		if err != nil {
			t.Fatalf("ParseBound(%q) = %+v, whose String %q does not read: %v", s, b, b.String(), err)
		}
		if again.Op != b.Op || again.Kind != b.Kind || again.Unit != b.Unit || again.Baseline != b.Baseline ||
			math.Abs(again.Value-b.Value) > 1e-12*math.Abs(b.Value) || math.Abs(again.Margin-b.Margin) > 1e-12 {
			t.Fatalf("ParseBound(%q) = %+v; its String %q reads %+v", s, b, b.String(), again)
		}
	})
}
