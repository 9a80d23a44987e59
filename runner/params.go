package runner

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sbench/sbench/kernels"
)

// KernelParams are a native kernel's parameters, parsed from --param by
// the rules of package kernels' table (or the exec kernel, which takes
// none). Iterations and Warmup are -1 when they follow the per-size
// defaults.
type KernelParams = kernels.Params

// ParseKernelParams checks a kernel's name and parameters. Unknown kernels
// and parameters are errors that name them.
// The exec kernel takes no parameters: its command comes with Exec.
func ParseKernelParams(kernel string, params map[string]string) (KernelParams, error) {
	if kernel == ExecKernel {
		for _, k := range slices.Sorted(maps.Keys(params)) {
			return KernelParams{}, fmt.Errorf("param %q: the exec kernel takes no parameters; give its command with --exec", k)
		}
		return KernelParams{Kernel: ExecKernel}, nil
	}
	if _, ok := kernels.Lookup(kernel); !ok {
		return KernelParams{}, fmt.Errorf("unknown kernel %q (want %s or %s)", kernel, strings.Join(kernels.Names(), ", "), ExecKernel)
	}
	return kernels.Parse(kernel, params)
}
