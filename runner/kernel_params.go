package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// Placements of the pairs kernel.
const (
	PlacementHalf  = "half"  // rank i with rank i+n/2 (the default)
	PlacementIntra = "intra" // pairs within each node
	PlacementInter = "inter" // node j with node j+m/2, local rank by local rank
)

// Defaults of the kernels beyond latency and bw.
const (
	// DefaultCollectiveSizes is the sweep of the collective kernels: OSU's
	// default stops at 1 MiB for collectives too.
	DefaultCollectiveSizes = "8-1048576"
	// DefaultMatrixLatencySize and DefaultMatrixBandwidthSize are the matrix
	// kernel's two message sizes.
	DefaultMatrixLatencySize   = 8
	DefaultMatrixBandwidthSize = 1 << 20
	// DefaultStreamArraySize is the stream kernel's elements per array:
	// 3 arrays of 10M doubles are 240 MB, over 4× the largest L3 caches of
	// one socket today, as STREAM's rules ask.
	DefaultStreamArraySize = 10_000_000
	// maxStreamArraySize bounds an array at 8 GiB.
	maxStreamArraySize = 1 << 30
	// maxStreamIterations: STREAM's values grow 15-fold per iteration and
	// would overflow a float64 after about 260.
	maxStreamIterations = 200
	// matrixWindow is the matrix kernel's default window: short
	// measurements, since there are n(n-1) of them.
	matrixWindow = 8
)

// defaultSizes are the sweeps of kernels whose default is not
// DefaultSizes. Kernels without messages (barrier, stream) run once, as
// size 0, so that every native kernel has a sweep.
var defaultSizes = map[string]string{
	"allreduce": DefaultCollectiveSizes,
	"alltoall":  DefaultCollectiveSizes,
	"bcast":     DefaultCollectiveSizes,
	"barrier":   "0",
	"matrix":    "0",
	"stream":    "0",
	"hpl":       "0",
}

// parseMore reads the parameters of the kernels beyond latency and bw
// into p, and checks what only those kernels require.
func (p *KernelParams) parseMore(params map[string]string) error {
	size := func(name string, def int) (int, error) {
		v, ok := params[name]
		if !ok {
			return def, nil
		}
		n, err := parseSize(v)
		if err != nil {
			return 0, fmt.Errorf("param %s: %w", name, err)
		}
		return n, nil
	}
	var err error
	switch p.Kernel {
	case "pairs":
		p.Placement = PlacementHalf
		if v, ok := params["placement"]; ok {
			switch v = strings.TrimSpace(v); v {
			case PlacementHalf, PlacementIntra, PlacementInter:
				p.Placement = v
			default:
				return fmt.Errorf("param placement: %q is not %s, %s or %s", v, PlacementHalf, PlacementIntra, PlacementInter)
			}
		}
	case "matrix":
		if p.LatencySize, err = size("latency_size", DefaultMatrixLatencySize); err != nil {
			return err
		}
		if p.BandwidthSize, err = size("bandwidth_size", DefaultMatrixBandwidthSize); err != nil {
			return err
		}
		if p.BandwidthSize == 0 {
			return fmt.Errorf("param bandwidth_size: 0 bytes make no bandwidth")
		}
		if _, ok := params["window"]; !ok {
			p.Window = matrixWindow
		}
	case "allreduce":
		for _, s := range p.Sizes {
			if s == 0 || s%8 != 0 {
				return fmt.Errorf("param sizes: the allreduce kernel sums vectors of float64: size %d is not a positive multiple of 8", s)
			}
		}
	case "hpl":
		if p.HPL, err = parseHPLParams(params); err != nil {
			return err
		}
	case "stream":
		p.ArraySize = DefaultStreamArraySize
		if v, ok := params["array_size"]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > maxStreamArraySize {
				return fmt.Errorf("param array_size: %q is not an integer from 1 to %d (elements of each of the 3 arrays)", v, maxStreamArraySize)
			}
			p.ArraySize = n
		}
		if p.Iterations > maxStreamIterations {
			return fmt.Errorf("param iterations: %d is above %d (STREAM's values overflow a float64 beyond)", p.Iterations, maxStreamIterations)
		}
	}
	return nil
}

// bwCounts are the streaming kernels' windows for one size: bw's.
func (p KernelParams) bwCounts(size int) (windows, warmup int) {
	q := p
	q.Kernel = "bw"
	return q.Counts(size)
}

// matrixCounts are the matrix kernel's repetitions: round trips at the
// latency size, windows at the bandwidth size. Each of the n(n-1)
// measurements is kept short: 100 round trips (10 warm-up), and about
// 32 MiB streamed (one window of warm-up).
func (p KernelParams) matrixCounts() (latIters, latWarm, bwWindows, bwWarm int) {
	latIters, latWarm = 100, 10
	if p.Iterations >= 0 {
		latIters = p.Iterations
	}
	if p.Warmup >= 0 {
		latWarm = p.Warmup
	}
	perWindow := max(wireLen(p.BandwidthSize)*max(p.Window, 1), 1)
	bwWindows = min(max((32<<20)/perWindow, 2), 100)
	return latIters, latWarm, bwWindows, 1
}

// streamIterations is the stream kernel's repetitions: STREAM's 10 unless
// set.
func (p KernelParams) streamIterations() int {
	if p.Iterations >= 0 {
		return p.Iterations
	}
	return 10
}
