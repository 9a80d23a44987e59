package runner

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	for in, want := range map[string]string{
		"1-4194304": "[1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576 2097152 4194304]",
		"0-8":       "[0 1 2 4 8]",
		"3-40":      "[3 6 12 24]", // doubling from MIN, as OSU does
		"8-8":       "[8]",
		"0-0":       "[0]",
		"1K-4K":     "[1024 2048 4096]",
		"4k,1M,1G":  "[4096 1048576 1073741824]",
		"64":        "[64]",
		" 1 , 7 ":   "[1 7]",
	} {
		got, err := ParseSizes(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("ParseSizes(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":       "empty",
		"8-1":    "8 is above 1",
		"1-2G":   "above the limit",
		"x":      `bad size "x"`,
		"+5":     `bad size "+5"`,
		"-5":     `bad size ""`,
		"1,,2":   `bad size ""`,
		"4,4":    "listed twice",
		"1-2-3":  `bad size "2-3"`,
		"5K-1Kb": `bad size "1Kb"`,
	} {
		_, err := ParseSizes(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSizes(%q): %v, want an error with %q", in, err, want)
		}
	}
}

func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"1-4194304", "0-8", "4k,1M", "3-40", "1-", "-", ",", "99999999999", "1G-1G", "0-1G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sizes, err := ParseSizes(s)
		if err != nil {
			return
		}
		if len(sizes) == 0 || len(sizes) > maxSizes {
			t.Fatalf("%q: %d sizes", s, len(sizes))
		}
		seen := map[int]bool{}
		for _, n := range sizes {
			if n < 0 || n > MaxMessageSize || seen[n] {
				t.Fatalf("%q: size %d out of range or repeated in %v", s, n, sizes)
			}
			seen[n] = true
		}
	})
}

func TestParseKernelParams(t *testing.T) {
	p, err := ParseKernelParams("bw", map[string]string{"sizes": "1-8", "window": "16", "warmup": "0"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(p.Sizes) != "[1 2 4 8]" || p.Window != 16 || p.Iterations != -1 || p.Warmup != 0 {
		t.Errorf("params %+v", p)
	}
	if it, w := p.Counts(8); it != 100 || w != 0 {
		t.Errorf("counts %d, %d; want the default 100 windows and the explicit 0 warm-up", it, w)
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
		{"latency", map[string]string{"itertions": "8"}, `param "itertions"`},
		{"latency", map[string]string{"iterations": "0"}, "param iterations: \"0\" is not an integer from 1 to 10000000"},
		{"latency", map[string]string{"warmup": "-1"}, "param warmup"},
		{"bw", map[string]string{"window": "5000"}, "param window"},
		{"bw", map[string]string{"sizes": "x"}, "param sizes: bad size"},
		{"latency", map[string]string{"poll": "busy"}, `param poll: "busy" is neither spin nor block`},
	} {
		_, err := ParseKernelParams(tt.kernel, tt.params)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: %v, want %q", tt.kernel, tt.params, err, tt.want)
		}
	}
}

func TestDefaultCounts(t *testing.T) {
	lat, _ := ParseKernelParams("latency", nil)
	bw, _ := ParseKernelParams("bw", nil)
	for _, tt := range []struct {
		p          KernelParams
		size       int
		iters, war int
	}{
		{lat, 1, 1000, 100},
		{lat, 8192, 1000, 100},
		{lat, 8193, 100, 10},
		{lat, 4 << 20, 100, 10},
		{bw, 8192, 100, 10},
		{bw, 16384, 20, 2},
		{bw, 256 << 10, 20, 2},
		{bw, 1 << 20, 8, 1}, // 512 MiB / (1 MiB × 64)
		{bw, 4 << 20, 2, 1},
		{bw, 1 << 30, 2, 1},
	} {
		it, w := tt.p.Counts(tt.size)
		if it != tt.iters || w != tt.war {
			t.Errorf("%s at %d bytes: %d+%d, want %d+%d", tt.p.Kernel, tt.size, it, w, tt.iters, tt.war)
		}
	}
}
