package hpl

import (
	"math"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

func TestRpeak(t *testing.T) {
	skylake := results.Host{CPUModel: "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", Cores: 40,
		CPUFlags: []string{"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw"}}
	genoa := results.Host{CPUModel: "AMD EPYC 9654 96-Core Processor", Cores: 96,
		CPUFlags: []string{"sse4_2", "avx", "avx2", "fma", "avx512f"}, Extra: map[string]string{"cpu_base_mhz": "2400"}}
	rome := results.Host{CPUModel: "AMD EPYC 7742 64-Core Processor", Cores: 64,
		CPUFlags: []string{"sse4_2", "avx", "avx2", "fma"}, Extra: map[string]string{"cpu_max_mhz": "3400"}}
	for _, tc := range []struct {
		name     string
		host     results.Host
		override PeakSpec
		gflops   float64
		how      []string
	}{
		{"skylake", skylake, PeakSpec{}, 3072, []string{"40 cores (from the host)", "2.4 GHz (from the CPU model)", "32 flops/cycle (AVX-512, assuming 2 FMA units", "= 3072 Gflops"}},
		{"genoa", genoa, PeakSpec{}, 3686.4, []string{"16 flops/cycle (AVX-512 on AMD", "from cpu_base_mhz"}},
		{"rome", rome, PeakSpec{}, 3481.6, []string{"AVX2+FMA", "3.4 GHz (from cpu_max_mhz)"}},
		{"overridden", skylake, PeakSpec{Cores: 20, GHz: 2.0, FlopsPerCycle: 16}, 640, []string{"20 cores (given)", "2 GHz (given)", "16 flops/cycle (given)"}},
		{"no clock", results.Host{CPUModel: "AMD EPYC", Cores: 2, CPUFlags: []string{"avx2", "fma"}}, PeakSpec{}, 0, []string{"Rpeak unknown: missing the clock"}},
		{"no clock, given", results.Host{CPUModel: "AMD EPYC", Cores: 2, CPUFlags: []string{"avx2", "fma"}}, PeakSpec{GHz: 3}, 96, nil},
		{"nothing known", results.Host{}, PeakSpec{}, 0, []string{"the core count", "the clock", "flops per cycle (the CPU flags name no vector unit"}},
	} {
		g, how := Rpeak(tc.host, tc.override)
		if math.Abs(g-tc.gflops) > 1e-9 {
			t.Errorf("%s: Rpeak = %v (%s), want %v", tc.name, g, how, tc.gflops)
		}
		for _, w := range tc.how {
			if !strings.Contains(how, w) {
				t.Errorf("%s: how %q lacks %q", tc.name, how, w)
			}
		}
	}
	g, how := ClusterRpeak(skylake, 4, PeakSpec{})
	if g != 4*3072 || !strings.HasPrefix(how, "4 nodes × 40 cores") || !strings.HasSuffix(how, "flops/cycle (AVX-512, assuming 2 FMA units × 8 doubles × 2; CPUs with one FMA unit have 16) = 12288 Gflops") {
		t.Errorf("ClusterRpeak = %v, %q", g, how)
	}
	if e := Efficiency(2457.6, 3072); math.Abs(e-0.8) > 1e-12 {
		t.Errorf("Efficiency = %v", e)
	}
	if Efficiency(1, 0) != 0 {
		t.Error("Efficiency without a peak is not 0")
	}
}

func TestFlopsPerCycle(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		model string
		want  float64
	}{
		{[]string{"avx512f", "avx2", "fma"}, "Intel(R) Xeon(R) Platinum 8380", 32},
		{[]string{"avx512f"}, "AMD Ryzen 9 7950X", 16},
		{[]string{"avx2", "fma"}, "", 16},
		{[]string{"avx2"}, "", 8}, // AVX2 without FMA (none shipped, but the flags say so)
		{[]string{"avx"}, "", 8},
		{[]string{"sse4_2"}, "", 4},
		{[]string{"SSE2"}, "", 4},
		{[]string{"sve", "asimd"}, "", 16},
		{[]string{"asimd"}, "Neoverse-N1", 8},
		{nil, "", 0},
	} {
		if got, _ := FlopsPerCycle(tc.flags, tc.model); got != tc.want {
			t.Errorf("FlopsPerCycle(%v, %q) = %v, want %v", tc.flags, tc.model, got, tc.want)
		}
	}
}
