package runner

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Limits on kernel parameters, so a typo is an error rather than an
// allocation of terabytes or a run of years.
const (
	MaxMessageSize = 1 << 30 // bytes
	maxSizes       = 1024
	// Every timed iteration's duration is kept for the percentiles: 10^7
	// of them take 80 MB, far beyond OSU's usual counts.
	maxIterations = 10_000_000
	maxWindow     = 4096
)

// DefaultSizes is the sweep of message sizes when the sizes parameter is unset.
const DefaultSizes = "1-4194304"

// KernelParams are a native kernel's parameters, parsed from --param.
// Iterations and Warmup are -1 when they follow the per-size defaults.
type KernelParams struct {
	Kernel     string
	Sizes      []int
	Iterations int
	Warmup     int
	Window     int
	// Poll is how the latency and bw kernels wait for data: PollSpin
	// (busy-poll, then park) or PollBlock (sleep in the system call).
	Poll string
	// Placement pairs the ranks of the pairs kernel (PlacementHalf …).
	Placement string
	// LatencySize and BandwidthSize are the matrix kernel's message sizes.
	LatencySize   int
	BandwidthSize int
	// ArraySize is the stream kernel's elements per array.
	ArraySize int
	// HPL are the hpl kernel's parameters (kernel_hpl.go).
	HPL HPLParams
}

// kernelParamNames lists the parameters each kernel accepts.
var kernelParamNames = map[string][]string{
	"latency": {"iterations", "poll", "sizes", "warmup"},
	"bw":      {"iterations", "poll", "sizes", "warmup", "window"},
	// kernel_*.go
	"bibw":      {"iterations", "sizes", "warmup", "window"},
	"pairs":     {"iterations", "placement", "sizes", "warmup", "window"},
	"matrix":    {"bandwidth_size", "iterations", "latency_size", "warmup", "window"},
	"barrier":   {"iterations", "warmup"},
	"allreduce": {"iterations", "sizes", "warmup"},
	"alltoall":  {"iterations", "sizes", "warmup"},
	"bcast":     {"iterations", "sizes", "warmup"},
	"stream":    {"array_size", "iterations"},
	"hpl":       hplParamNames,
}

// Kernels returns the names of the native kernels (ExecKernel is not one).
func Kernels() []string {
	names := make([]string, 0, len(kernelParamNames))
	for k := range kernelParamNames {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// ParseKernelParams checks a kernel's name and parameters. Unknown kernels
// and parameters are errors that name them.
// The exec kernel takes no parameters: its command comes with Exec.
func ParseKernelParams(kernel string, params map[string]string) (KernelParams, error) {
	if kernel == ExecKernel {
		for _, k := range sortedKeys(params) {
			return KernelParams{}, fmt.Errorf("param %q: the exec kernel takes no parameters; give its command with --exec", k)
		}
		return KernelParams{Kernel: ExecKernel}, nil
	}
	known, ok := kernelParamNames[kernel]
	if !ok {
		return KernelParams{}, fmt.Errorf("unknown kernel %q (want %s or %s)", kernel, strings.Join(Kernels(), ", "), ExecKernel)
	}
	for _, k := range sortedKeys(params) {
		if !contains(known, k) {
			return KernelParams{}, fmt.Errorf("param %q: not a parameter of the %s kernel (known: %s)", k, kernel, strings.Join(known, ", "))
		}
	}
	p := KernelParams{Kernel: kernel, Iterations: -1, Warmup: -1, Window: 64, Poll: PollSpin}
	var err error
	sizes := DefaultSizes
	if d, ok := defaultSizes[kernel]; ok {
		sizes = d
	}
	if v, ok := params["sizes"]; ok {
		sizes = v
	}
	if p.Sizes, err = ParseSizes(sizes); err != nil {
		return KernelParams{}, fmt.Errorf("param sizes: %w", err)
	}
	count := func(name string, lo, hi int) (int, error) {
		v, ok := params[name]
		if !ok {
			return -1, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("param %s: %q is not an integer from %d to %d", name, v, lo, hi)
		}
		return n, nil
	}
	if p.Iterations, err = count("iterations", 1, maxIterations); err != nil {
		return KernelParams{}, err
	}
	if p.Warmup, err = count("warmup", 0, maxIterations); err != nil {
		return KernelParams{}, err
	}
	if w, err := count("window", 1, maxWindow); err != nil {
		return KernelParams{}, err
	} else if w > 0 {
		p.Window = w
	}
	if v, ok := params["poll"]; ok {
		switch v = strings.TrimSpace(v); v {
		case PollSpin, PollBlock:
			p.Poll = v
		default:
			return KernelParams{}, fmt.Errorf("param poll: %q is neither %s nor %s", v, PollSpin, PollBlock)
		}
	}
	if err := p.parseMore(params); err != nil {
		return KernelParams{}, err
	}
	return p, nil
}

// Counts returns the timed and warm-up repetitions for one message size:
// iterations for latency, windows for bw.
func (p KernelParams) Counts(size int) (iterations, warmup int) {
	small := size <= 8<<10
	switch p.Kernel {
	case "bw":
		if small {
			iterations, warmup = 100, 10
		} else {
			iterations, warmup = 20, 2
			// Keep one size under 512 MiB moved: 4 MiB × 64 × 22 windows
			// would be 5.5 GiB, tens of seconds on loopback.
			window := max(p.Window, 1)
			if limit := (512 << 20) / (size * window); limit < iterations {
				iterations, warmup = max(limit, 2), 1
			}
		}
	default:
		if small {
			iterations, warmup = 1000, 100
		} else {
			iterations, warmup = 100, 10
		}
	}
	if p.Iterations >= 0 {
		iterations = p.Iterations
	}
	if p.Warmup >= 0 {
		warmup = p.Warmup
	}
	return iterations, warmup
}

// ParseSizes parses the sizes parameter: "MIN-MAX" doubles from MIN up to
// MAX as OSU does (0 is followed by 1), and "a,b,c" lists sizes. Sizes are
// bytes and may end in K, M or G (binary: 4K is 4096).
func ParseSizes(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty")
	}
	if lo, hi, ok := strings.Cut(s, "-"); ok && !strings.Contains(s, ",") {
		a, err := parseSize(lo)
		if err != nil {
			return nil, err
		}
		b, err := parseSize(hi)
		if err != nil {
			return nil, err
		}
		if a > b {
			return nil, fmt.Errorf("range %q: %d is above %d", s, a, b)
		}
		var out []int
		for n := a; n <= b; {
			out = append(out, n)
			if n == 0 {
				n = 1
			} else {
				n *= 2
			}
		}
		return out, nil
	}
	var out []int
	seen := map[int]bool{}
	for _, item := range strings.Split(s, ",") {
		n, err := parseSize(item)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("size %d is listed twice", n)
		}
		if len(out) == maxSizes {
			return nil, fmt.Errorf("more than %d sizes", maxSizes)
		}
		seen[n] = true
		out = append(out, n)
	}
	return out, nil
}

func parseSize(text string) (int, error) {
	s := strings.TrimSpace(text)
	mult := 1
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	// Atoi would accept "+5"; a size is digits only.
	if s == "" || strings.TrimLeft(s, "0123456789") != "" || len(s) > 10 {
		return 0, fmt.Errorf("bad size %q", strings.TrimSpace(text))
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxMessageSize/mult {
		return 0, fmt.Errorf("size %q is above the limit of %d bytes", strings.TrimSpace(text), MaxMessageSize)
	}
	return n * mult, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
