package sizes

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]uint64{
		"0": 0, "4096": 4096, " 64 ": 64,
		// One letter, or the i, is binary: message sizes and Slurm.
		"4K": 4096, "4k": 4096, "4Ki": 4096, "4KiB": 4096, "4 KiB": 4096, "4kib": 4096,
		"1M": 1 << 20, "1MiB": 1 << 20, "2G": 2 << 30, "1T": 1 << 40, "1P": 1 << 50, "7E": 7 << 60,
		// The B after the prefix is decimal, as hpl.ParseBytes had it.
		"1KB": 1000, "3kb": 3000, "64GB": 64e9, "1TB": 1e12,
		"100 B": 100, "100b": 100,
		"1.5MiB": 3 << 19, "1.5TiB": 1536 << 30, "0.001KB": 1, ".5K": 512,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"":                     `size "": want a number of bytes with an optional unit, such as 4096, 4K, 4KiB or 1.5MiB`,
		"x":                    `size "x": want a number of bytes`,
		"+5":                   `size "+5": want a number of bytes`,
		"-5":                   `size "-5": want a number of bytes`,
		"KiB":                  `size "KiB": want a number of bytes`,
		"1.2.3G":               `size "1.2.3G": want a number of bytes`,
		"64 gigs":              `size "64 gigs": unknown unit "gigs" (B; K, M, G, T, P, E and KiB … EiB are powers of 1024; KB … EB powers of 1000)`,
		"1e3G":                 `unknown unit "e3G"`,
		"0.5":                  `size "0.5": not a whole number of bytes`,
		"1.5B":                 `not a whole number of bytes`,
		"8EiB":                 `size "8EiB": too large (the limit is 8 EiB)`,
		"99999999PiB":          "too large",
		"99999999999999999999": "too large",
	} {
		if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want %q", in, err, want)
		}
	}
}

func TestParseIn(t *testing.T) {
	for _, tt := range []struct {
		in   string
		bare uint64
		want uint64
	}{{"4000", MiB, 4000 << 20}, {"64G", MiB, 64 << 30}, {"512M", MiB, 512 << 20}, {"64GiB", 0, 64 << 30}} {
		if got, err := ParseIn(tt.in, tt.bare); err != nil || got != tt.want {
			t.Errorf("ParseIn(%q, %d) = %d, %v; want %d", tt.in, tt.bare, got, err, tt.want)
		}
	}
	if _, err := ParseIn("64000", 0); err == nil || err.Error() != `size "64000": give a unit (B; K, M, G, T, P, E and KiB … EiB are powers of 1024; KB … EB powers of 1000)` {
		t.Errorf("a bare number without a default unit: %v", err)
	}
}

func TestParseFloat(t *testing.T) {
	for in, want := range map[string]float64{"8": 8, "4K": 4096, "1MiB": 1 << 20, "0.5": 0.5, "2 KB": 2000} {
		if got, err := ParseFloat(in); err != nil || got != want {
			t.Errorf("ParseFloat(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-1", "4X", "NaN", "Inf"} {
		if _, err := ParseFloat(in); err == nil {
			t.Errorf("ParseFloat(%q) took it", in)
		}
	}
}

func TestParseList(t *testing.T) {
	for in, want := range map[string]string{
		"1-4194304": "[1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576 2097152 4194304]",
		"1-4MiB":    "[1 2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576 2097152 4194304]",
		"0-8":       "[0 1 2 4 8]",
		"3-40":      "[3 6 12 24]", // doubling from MIN, as OSU does
		"8-8":       "[8]",
		"0-0":       "[0]",
		"1K-4K":     "[1024 2048 4096]",
		"1KiB-4KiB": "[1024 2048 4096]",
		"4k,1M,1G":  "[4096 1048576 1073741824]",
		"64":        "[64]",
		" 1 , 7 ":   "[1 7]",
		"1,8,64":    "[1 8 64]",
		"0,64-256":  "[0 64 128 256]",
		"4M,1-2":    "[4194304 1 2]", // as written: OSU runs them in this order too
		"1KB-4KB":   "[1000 2000 4000]",
		"4E-7E":     "[4611686018427387904]",
	} {
		got, err := ParseList(in)
		if err != nil {
			t.Errorf("ParseList(%q): %v", in, err)
			continue
		}
		if fmt.Sprint(got) != want {
			t.Errorf("ParseList(%q) = %v; want %s", in, got, want)
		}
	}
	if got, _ := ParseList("1-7E"); len(got) != 63 || got[62] != 1<<62 {
		t.Errorf("ParseList(1-7E) = %d sizes, last %d", len(got), got[len(got)-1])
	}
	for in, want := range map[string]string{
		"":       "no sizes: want a size, a list such as 1,8,64 or a range such as 1-4MiB",
		"8-1":    `range "8-1": 8 is above 1`,
		"x":      `size "x": want a number of bytes`,
		"-5":     `size "": want a number of bytes`,
		"1,,2":   `size "": want a number of bytes`,
		"4,4":    "size 4 is listed twice",
		"1-8,8":  "size 8 is listed twice",
		"1-2-3":  `size "2-3": unknown unit "-3"`,
		"5K-1KB": `range "5K-1KB": 5120 is above 1000`,
	} {
		_, err := ParseList(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseList(%q): %v, want an error with %q", in, err, want)
		}
	}
	long := strings.TrimSuffix(strings.Repeat("1,", MaxListLen), ",")
	if _, err := ParseList(long + ",2"); err == nil || !strings.Contains(err.Error(), "listed twice") {
		t.Errorf("long list: %v", err)
	}
	var b strings.Builder
	for i := 0; i <= MaxListLen; i++ {
		fmt.Fprintf(&b, "%d,", i)
	}
	if _, err := ParseList(strings.TrimSuffix(b.String(), ",")); err == nil || err.Error() != "more than 1024 sizes" {
		t.Errorf("1025 sizes: %v", err)
	}
}

func FuzzParseList(f *testing.F) {
	for _, s := range []string{"1-4194304", "0-8", "4k,1M", "3-40", "1-", "-", ",", "99999999999", "1G-1G", "0-1G", "1-8E", "1.5K-3K", "0,64-256"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		list, err := ParseList(s)
		if err != nil {
			return
		}
		if len(list) == 0 || len(list) > MaxListLen {
			t.Fatalf("%q: %d sizes", s, len(list))
		}
		seen := map[uint64]bool{}
		for _, n := range list {
			if n > maxSize || seen[n] {
				t.Fatalf("%q: size %d out of range or repeated in %v", s, n, list)
			}
			seen[n] = true
		}
	})
}

// TestFormat: the labels of reports' axes and tables, as they were before
// this package (reports' golden files depend on them).
func TestFormat(t *testing.T) {
	for in, want := range map[float64]string{
		0: "0", 1: "1", 1000: "1000", 1024: "1K", 1536 * 1024: "1536K", 8388605: "8M-3", 1572867: "1536K+3",
		4 << 20: "4M", 1 << 30: "1G", 1.5: "1.5", -1: "-1",
	} {
		if got := Format(in); got != want {
			t.Errorf("Format(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestFormatReadsBack: every round size's label parses to the size.
func TestFormatReadsBack(t *testing.T) {
	for _, n := range []uint64{0, 1, 7, 1000, 1024, 4096, 1536 << 10, 1 << 20, 3 << 30, 1 << 40} {
		for _, s := range []string{Format(float64(n)), Label(float64(n))} {
			if got, err := Parse(s); err != nil || got != n {
				t.Errorf("%d → %q → %d, %v", n, s, got, err)
			}
		}
	}
}

func TestLabel(t *testing.T) {
	for in, want := range map[float64]string{
		0: "0 B", 1: "1 B", 1000: "1000 B", 32768: "32 KiB", 4 << 20: "4 MiB", 1536 << 20: "1536 MiB", 8388605: "8388605 B",
		1 << 40: "1 TiB", 1.5: "1.5 B",
	} {
		if got := Label(in); got != want {
			t.Errorf("Label(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestApprox(t *testing.T) {
	for in, want := range map[uint64]string{0: "0 B", 512: "512 B", 64 * GiB: "64 GiB", 1536 * GiB: "1.5 TiB", 1<<20 + 1<<18: "1.25 MiB"} {
		if got := Approx(in); got != want {
			t.Errorf("Approx(%d) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParse: no input panics, and what parses reads back from Approx
// within its rounding.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"64GiB", "64 G", "1.5TiB", "4000", "0.001KB", "9999999999999P", ".", "1..2M", "7 gigs", "7.99EiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Parse(s)
		if err != nil {
			return
		}
		back, err := Parse(Approx(n))
		if err != nil {
			t.Fatalf("%q → %d → %q does not parse: %v", s, n, Approx(n), err)
		}
		if d := math.Abs(float64(back) - float64(n)); d > 0.005*float64(n)+1 {
			t.Fatalf("%q → %d → %q → %d", s, n, Approx(n), back)
		}
	})
}
