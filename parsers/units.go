package parsers

import (
	"fmt"
	"regexp"

	"github.com/sbench/sbench/results"
)

// Unit is a unit as a user-defined metric is written in, normalised: its
// figures are multiplied by Scale and stored in Unit.
type Unit struct {
	Unit  string
	Scale float64
}

// unitTable is every unit NormalizeUnit changes, or keeps as one of
// sbench's own. Bandwidths go to MB/s (10^6 bytes per second, as OSU
// prints them), bit rates too; times of a millisecond and more to s,
// shorter ones to us (as latencies are); flop rates to Gflops; sizes to
// bytes.
var unitTable = map[string]Unit{
	"B/s": {results.UnitMBps, 1e-6}, "kB/s": {results.UnitMBps, 1e-3}, "KB/s": {results.UnitMBps, 1e-3},
	"MB/s": {results.UnitMBps, 1}, "GB/s": {results.UnitMBps, 1e3}, "TB/s": {results.UnitMBps, 1e6},
	"KiB/s": {results.UnitMBps, 1024 / 1e6}, "MiB/s": {results.UnitMBps, 1 << 20 / 1e6},
	"GiB/s": {results.UnitMBps, 1 << 30 / 1e6}, "TiB/s": {results.UnitMBps, 1 << 40 / 1e6},
	"bit/s": {results.UnitMBps, 1 / 8e6}, "kbit/s": {results.UnitMBps, 1 / 8e3}, "Kbit/s": {results.UnitMBps, 1 / 8e3},
	"Kbps": {results.UnitMBps, 1 / 8e3}, "kbps": {results.UnitMBps, 1 / 8e3},
	"Mbit/s": {results.UnitMBps, 1 / 8.0}, "Mb/s": {results.UnitMBps, 1 / 8.0}, "Mbps": {results.UnitMBps, 1 / 8.0},
	"Gbit/s": {results.UnitMBps, 125}, "Gb/s": {results.UnitMBps, 125}, "Gbps": {results.UnitMBps, 125},
	"Tbit/s": {results.UnitMBps, 125e3}, "Tb/s": {results.UnitMBps, 125e3}, "Tbps": {results.UnitMBps, 125e3},

	"ns": {results.UnitMicroseconds, 1e-3}, "us": {results.UnitMicroseconds, 1}, "usec": {results.UnitMicroseconds, 1},
	"µs": {results.UnitMicroseconds, 1}, "μs": {results.UnitMicroseconds, 1},
	"ms": {results.UnitSeconds, 1e-3}, "msec": {results.UnitSeconds, 1e-3},
	"s": {results.UnitSeconds, 1}, "sec": {results.UnitSeconds, 1}, "seconds": {results.UnitSeconds, 1},
	"min": {results.UnitSeconds, 60}, "h": {results.UnitSeconds, 3600},

	"flops": {"Gflops", 1e-9}, "Mflops": {"Gflops", 1e-3}, "MFLOPS": {"Gflops", 1e-3}, "MFlop/s": {"Gflops", 1e-3},
	"Gflops": {"Gflops", 1}, "GFLOPS": {"Gflops", 1}, "GFlop/s": {"Gflops", 1}, "Gflop/s": {"Gflops", 1},
	"Tflops": {"Gflops", 1e3}, "TFLOPS": {"Gflops", 1e3}, "TFlop/s": {"Gflops", 1e3}, "Tflop/s": {"Gflops", 1e3},
	"Pflops": {"Gflops", 1e6}, "PFLOPS": {"Gflops", 1e6}, "PFlop/s": {"Gflops", 1e6},

	"B": {results.UnitBytes, 1}, "bytes": {results.UnitBytes, 1},
	"KB": {results.UnitBytes, 1e3}, "kB": {results.UnitBytes, 1e3}, "MB": {results.UnitBytes, 1e6},
	"GB": {results.UnitBytes, 1e9}, "TB": {results.UnitBytes, 1e12},
	"KiB": {results.UnitBytes, 1 << 10}, "MiB": {results.UnitBytes, 1 << 20},
	"GiB": {results.UnitBytes, 1 << 30}, "TiB": {results.UnitBytes, 1 << 40},
}

// countUnitRE is a unit kept as it is: a count of something ("atoms",
// "steps", "%"), with no direction of its own.
var countUnitRE = regexp.MustCompile(`^(%|[A-Za-z][A-Za-z0-9_-]{0,31})$`)

// rateUnitRE is a rate kept as it is: something per unit of time
// (results.IsRate), "timesteps/s", "katom-step/s", "ns/day".
var rateUnitRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,31}/[A-Za-z]{1,4}$`)

// NormalizeUnit is how a user-defined metric's figures in unit are stored:
// a unit of unitTable in sbench's own (GB/s as MB/s ×1000, ms as s
// ×0.001 …); a rate per unit of time ("timesteps/s", "tau/day",
// "ns/day") as it is, higher is better; a count ("atoms", "%") or no
// unit as it is, with no direction. Anything else is an error.
func NormalizeUnit(unit string) (Unit, error) {
	if u, ok := unitTable[unit]; ok {
		return u, nil
	}
	if unit == "" || results.IsRate(unit) && rateUnitRE.MatchString(unit) || countUnitRE.MatchString(unit) {
		return Unit{unit, 1}, nil
	}
	return Unit{}, fmt.Errorf("sbench cannot normalise unit %q: use one it knows (MB/s, GB/s, Gbit/s, us, ms, s, Gflops, bytes …), a rate such as \"timesteps/s\" or \"tau/day\", or a plain count such as \"atoms\"", unit)
}
