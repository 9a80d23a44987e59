package runner

import (
	"maps"
	"slices"
	"testing"

	"github.com/sbench/sbench/kernels"
)

// TestEveryKernelRuns holds the run functions to package kernels' table:
// a kernel the campaign accepts must run, and a run function must be
// documented and checked like the others.
func TestEveryKernelRuns(t *testing.T) {
	table := kernels.Names()
	runs := slices.Sorted(maps.Keys(kernelRuns))
	if !slices.Equal(table, runs) {
		t.Errorf("package kernels' table names %q; the runner runs %q", table, runs)
	}
}

func TestParseKernelParams(t *testing.T) {
	p, err := ParseKernelParams("bw", map[string]string{"sizes": "1-8", "window": "16"})
	if err != nil || p.Kernel != "bw" || p.Window != 16 || len(p.Sizes) != 4 {
		t.Errorf("bw: %+v, %v", p, err)
	}
	if p, err := ParseKernelParams(ExecKernel, nil); err != nil || p.Kernel != ExecKernel {
		t.Errorf("exec kernel: %+v, %v", p, err)
	}
	for _, tt := range []struct {
		kernel string
		params map[string]string
		want   string
	}{
		{"pingpong", nil, `unknown kernel "pingpong" (want allreduce, alltoall, barrier, bcast, bibw, bw, hpl, latency, matrix, pairs, stream or exec)`},
		{"exec", map[string]string{"sizes": "1"}, `param "sizes": the exec kernel takes no parameters; give its command with --exec`},
		{"latency", map[string]string{"window": "8"}, `param "window": not a parameter of the latency kernel (known: iterations, poll, sizes, warmup)`},
	} {
		_, err := ParseKernelParams(tt.kernel, tt.params)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s %v: %v, want %q", tt.kernel, tt.params, err, tt.want)
		}
	}
}
