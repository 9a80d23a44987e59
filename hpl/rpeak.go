package hpl

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// PeakSpec overrides what Rpeak would derive from a host's description;
// a zero field is derived.
type PeakSpec struct {
	// Cores is the number of cores of the node.
	Cores int
	// GHz is the clock the peak is computed at (the base clock, usually:
	// all-core turbo under AVX is rarely higher for long).
	GHz float64
	// FlopsPerCycle is double-precision flops per cycle per core.
	FlopsPerCycle float64
}

// Rpeak is a node's theoretical double-precision peak in Gflops: cores ×
// GHz × flops per cycle, each from the override when set, else from the
// host: its core count, the clock in its CPU model ("… @ 2.60GHz") or
// Extra["cpu_base_mhz"] / Extra["cpu_max_mhz"], and flops per cycle from
// its CPU flags (see FlopsPerCycle). how says where every factor came from,
// or which one is missing, in which case gflops is 0.
func Rpeak(host results.Host, override PeakSpec) (gflops float64, how string) {
	cores, coresFrom := override.Cores, "given"
	if cores <= 0 {
		cores, coresFrom = host.Cores, "from the host"
	}
	ghz, ghzFrom := override.GHz, "given"
	if !(ghz > 0) {
		ghz, ghzFrom = hostGHz(host)
	}
	fpc, fpcFrom := override.FlopsPerCycle, "given"
	if !(fpc > 0) {
		fpc, fpcFrom = FlopsPerCycle(host.CPUFlags, host.CPUModel)
	}
	var missing []string
	if cores <= 0 {
		missing = append(missing, "the core count")
	}
	if !(ghz > 0) {
		missing = append(missing, "the clock (the CPU model names none: give GHz)")
	}
	if !(fpc > 0) {
		missing = append(missing, "flops per cycle ("+fpcFrom+": give them)")
	}
	if len(missing) > 0 {
		return 0, "Rpeak unknown: missing " + strings.Join(missing, ", ")
	}
	gflops = float64(cores) * ghz * fpc
	how = fmt.Sprintf("%d cores (%s) × %s GHz (%s) × %s flops/cycle (%s) = %s Gflops",
		cores, coresFrom, trimFloat(ghz), ghzFrom, trimFloat(fpc), fpcFrom, trimFloat(gflops))
	return gflops, how
}

// ClusterRpeak is the peak of nodes identical to host.
func ClusterRpeak(host results.Host, nodes int, override PeakSpec) (gflops float64, how string) {
	g, h := Rpeak(host, override)
	if g == 0 || nodes <= 1 {
		return g, h
	}
	if i := strings.LastIndex(h, " = "); i >= 0 {
		h = h[:i] // the node's own total
	}
	return g * float64(nodes), fmt.Sprintf("%d nodes × %s = %s Gflops", nodes, h, trimFloat(g*float64(nodes)))
}

// Efficiency is Rmax/Rpeak, 0 when the peak is unknown.
func Efficiency(rmax, rpeak float64) float64 {
	if !(rpeak > 0) {
		return 0
	}
	return rmax / rpeak
}

// FlopsPerCycle derives double-precision flops per cycle per core from CPU
// flags (as /proc/cpuinfo names them), saying what it assumed:
//
//   - avx512f: 32 — two 512-bit FMA units × 8 doubles × 2 (a multiply and
//     an add). Xeons with one FMA unit (some Silver and Bronze parts) have
//     16; AMD Zen 4 runs AVX-512 on 256-bit units, so an AMD model with
//     avx512f gets 16.
//   - avx2 with fma: 16 — two 256-bit FMA units × 4 doubles × 2.
//   - avx: 8 — one 256-bit add and one multiply per cycle × 4 doubles.
//   - sse2 (or any later SSE): 4 — 128-bit add and multiply × 2 doubles.
//   - sve: 16 — assumed 2 × 256-bit (Neoverse V1); A64FX has 32.
//   - asimd (Arm NEON): 8 — 2 × 128-bit FMA × 2 doubles × 2.
//
// 0 with the reason when the flags say nothing.
func FlopsPerCycle(flags []string, model string) (float64, string) {
	has := map[string]bool{}
	for _, f := range flags {
		has[strings.ToLower(f)] = true
	}
	switch {
	case has["avx512f"] && strings.Contains(strings.ToUpper(model), "AMD"):
		return 16, "AVX-512 on AMD (Zen 4 splits 512-bit work over 256-bit units: 2 FMA × 4 doubles × 2)"
	case has["avx512f"]:
		return 32, "AVX-512, assuming 2 FMA units × 8 doubles × 2; CPUs with one FMA unit have 16"
	case has["avx2"] && has["fma"]:
		return 16, "AVX2+FMA: 2 FMA units × 4 doubles × 2"
	case has["avx"] || has["avx2"]:
		return 8, "AVX: 1 add + 1 multiply × 4 doubles"
	case has["sse2"] || has["sse4_2"] || has["sse4_1"] || has["sse3"] || has["ssse3"]:
		return 4, "SSE2: 1 add + 1 multiply × 2 doubles"
	case has["sve"] || has["sve2"]:
		return 16, "SVE, assuming 2 × 256-bit FMA units (A64FX has 32)"
	case has["asimd"]:
		return 8, "NEON: 2 FMA units × 2 doubles × 2"
	}
	return 0, "the CPU flags name no vector unit sbench knows"
}

var ghzRE = parsers.LazyRegexp(`@\s*([0-9]+(?:\.[0-9]+)?)\s*GHz`)

// hostGHz is the clock named in the CPU model (Intel writes "@ 2.60GHz"),
// else a frequency the runner recorded.
func hostGHz(h results.Host) (float64, string) {
	if m := ghzRE.FindStringSubmatch(h.CPUModel); m != nil {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil && v > 0 {
			return v, "from the CPU model"
		}
	}
	for _, k := range []string{"cpu_base_mhz", "cpu_max_mhz"} {
		if v, err := strconv.ParseFloat(h.Extra[k], 64); err == nil && v > 0 {
			return v / 1000, "from " + k
		}
	}
	return 0, ""
}

func trimFloat(v float64) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64)
}
