package expect

import (
	"fmt"
	"strings"
)

// dimension groups units that convert into each other.
type dimension string

const (
	dimRate  dimension = "data rate"
	dimTime  dimension = "time"
	dimFlops dimension = "flop rate"
)

type unitScale struct {
	dim   dimension
	scale float64 // in bytes/s, s or flop/s
}

// rateUnits tell bytes (B) from bits (b) by case, as the tools print them;
// MB/s is 10^6 bytes per second (OSU's), MiB/s 2^20, Mbytes/sec IMB's 2^20.
var rateUnits = map[string]float64{
	"B/s": 1, "KB/s": 1e3, "kB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12,
	"KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30, "TiB/s": 1 << 40,
	"MBps": 1e6, "GBps": 1e9, "Mbytes/sec": 1 << 20, "MBytes/sec": 1 << 20,
	"bit/s": 1.0 / 8, "bps": 1.0 / 8, "b/s": 1.0 / 8,
	"Kbps": 1e3 / 8, "kbps": 1e3 / 8, "Kb/s": 1e3 / 8, "kb/s": 1e3 / 8, "Kbit/s": 1e3 / 8,
	"Mbps": 1e6 / 8, "Mb/s": 1e6 / 8, "Mbit/s": 1e6 / 8,
	"Gbps": 1e9 / 8, "Gb/s": 1e9 / 8, "Gbit/s": 1e9 / 8,
	"Tbps": 1e12 / 8, "Tb/s": 1e12 / 8, "Tbit/s": 1e12 / 8,
}

// foldedUnits are the units whose case says nothing: times and flop rates.
var foldedUnits = map[string]unitScale{
	"ns": {dimTime, 1e-9}, "us": {dimTime, 1e-6}, "µs": {dimTime, 1e-6}, "usec": {dimTime, 1e-6},
	"ms": {dimTime, 1e-3}, "msec": {dimTime, 1e-3}, "s": {dimTime, 1}, "sec": {dimTime, 1},
	"seconds": {dimTime, 1}, "min": {dimTime, 60}, "h": {dimTime, 3600},
	"flops": {dimFlops, 1}, "flop/s": {dimFlops, 1}, "mflops": {dimFlops, 1e6}, "mflop/s": {dimFlops, 1e6},
	"gflops": {dimFlops, 1e9}, "gflop/s": {dimFlops, 1e9}, "tflops": {dimFlops, 1e12}, "tflop/s": {dimFlops, 1e12},
	"pflops": {dimFlops, 1e15}, "pflop/s": {dimFlops, 1e15},
}

func lookupUnit(u string) (unitScale, bool) {
	if v, ok := rateUnits[u]; ok {
		return unitScale{dimRate, v}, true
	}
	v, ok := foldedUnits[strings.ToLower(u)]
	return v, ok
}

// Convert converts v from the unit from to the unit to. Units sbench does
// not know convert only to themselves (their case aside); "" is the
// metric's own unit and converts to anything unchanged.
func Convert(v float64, from, to string) (float64, error) {
	if from == "" || from == to {
		return v, nil
	}
	f, okF := lookupUnit(from)
	t, okT := lookupUnit(to)
	switch {
	case okF && okT && f.dim == t.dim:
		return v * f.scale / t.scale, nil
	case okF && okT:
		return 0, fmt.Errorf("unit %s is a %s, the metric's %s a %s", from, f.dim, to, t.dim)
	case !okF && !okT && strings.EqualFold(from, to):
		return v, nil
	}
	return 0, fmt.Errorf("unit %s cannot be converted to the metric's unit %s", from, to)
}

// Compatible reports why a bound in unit from cannot be judged against a
// metric in unit to, or nil.
func Compatible(from, to string) error {
	_, err := Convert(1, from, to)
	return err
}
