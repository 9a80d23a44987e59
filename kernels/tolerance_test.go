package kernels

import (
	"math"
	"slices"
	"testing"
)

func TestToleranceJudge(t *testing.T) {
	tol := DefaultTolerance()
	links := []LinkMeasure{
		{Latency: 10, Bandwidth: 1000},
		{Latency: 21, Bandwidth: 930},         // exactly at both limits: kept
		{Latency: 21.5, Bandwidth: 1000},      // slow
		{Latency: 11, Bandwidth: 929},         // low bandwidth
		{Latency: 30, Bandwidth: 100},         // both
		{Latency: math.NaN(), Bandwidth: 0},   // not measured: never suspect
		{Latency: math.Inf(1), Bandwidth: -1}, // nor this
	}
	v := tol.Judge(links)
	if v.MinLatency != 10 || v.MaxBandwidth != 1000 || v.LatencyLimit != 21 || v.BandwidthLimit != 930 {
		t.Errorf("references %+v", v)
	}
	if !slices.Equal(v.SlowLatency, []int{2, 4}) || !slices.Equal(v.LowBandwidth, []int{3, 4}) {
		t.Errorf("slow %v, low %v", v.SlowLatency, v.LowBandwidth)
	}
	if got := v.Suspects(); !slices.Equal(got, []int{2, 3, 4}) {
		t.Errorf("suspects %v, want [2 3 4]", got)
	}
	for i := range links {
		if v.Suspect(i) != slices.Contains([]int{2, 3, 4}, i) {
			t.Errorf("Suspect(%d) = %v", i, v.Suspect(i))
		}
	}
	// A re-test of only the bad links is judged against the first pass.
	re := tol.JudgeAgainst([]LinkMeasure{{Latency: 30, Bandwidth: 100}, {Latency: 12, Bandwidth: 990}}, v.MinLatency, v.MaxBandwidth)
	if !slices.Equal(re.Suspects(), []int{0}) {
		t.Errorf("re-test suspects %v, want [0]", re.Suspects())
	}
	// Judged on their own, the worst link would set the standard.
	if own := tol.Judge([]LinkMeasure{{Latency: 30, Bandwidth: 100}}); len(own.Suspects()) != 0 {
		t.Errorf("one link alone is its own reference: %v", own.Suspects())
	}
	if got := tol.Judge(nil); !math.IsNaN(got.MinLatency) || len(got.Suspects()) != 0 {
		t.Errorf("no links: %+v", got)
	}
}

func TestToleranceCheck(t *testing.T) {
	if err := DefaultTolerance().Check(); err != nil {
		t.Error(err)
	}
	for _, bad := range []Tolerance{{1, 0.9}, {2, 1}, {2, 0}, {math.NaN(), 0.5}, {math.Inf(1), 0.5}, {2, math.NaN()}} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
