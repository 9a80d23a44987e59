// Package sizes reads and writes byte sizes the one way sbench writes them
// everywhere: message sizes in campaigns and on the runner's command line,
// x values on the command line of history and compare, memory sizes of HPL
// sizing, and the labels of tables and figures.
//
// A size is a number with an optional unit, with or without a space:
// 4096, 4K, 4KiB, 4 KiB, 1.5MiB. Units are case-insensitive:
//
//	B                      bytes
//	K, Ki, KiB … E, Ei, EiB powers of 1024, as message sizes (OSU's 4K) and
//	                       Slurm (--mem=64G) mean them
//	KB, MB, GB, TB, PB, EB powers of 1000, as disks and vendors mean them
//
// So 4K = 4KiB = 4096 and 4KB = 4000: a one-letter unit is binary, and
// writing the B after it asks for the decimal unit. This keeps every
// campaign written before this package (sizes = "1K-4M", mem_per_node =
// "64GB") meaning what it meant. A fraction needs a unit (1.5MiB); a bare
// number counts bytes unless the caller says otherwise (ParseIn: Slurm's
// --mem counts MiB).
//
// Lists (ParseList) are comma-separated sizes and MIN-MAX ranges, mixed as
// needed: "1-4MiB" is every power of two times MIN from MIN up to MAX (0 is
// followed by 1, as OSU does), "1,8,64" is those three, "0,64-256" four.
//
// The package is a leaf: it imports nothing of sbench's own.
package sizes

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Binary units, in bytes.
const (
	KiB uint64 = 1 << (10 * (iota + 1))
	MiB
	GiB
	TiB
	PiB
	EiB
)

// MaxListLen bounds a list, so that a typo cannot ask for millions of
// sizes: ranges make at most 64 each.
const MaxListLen = 1024

// maxSize is the largest size: sizes fit an int64 too.
const maxSize = 1<<63 - 1

// units are the units Parse knows, lower-cased.
var units = map[string]uint64{
	"b": 1,
	"k": KiB, "ki": KiB, "kib": KiB, "kb": 1e3,
	"m": MiB, "mi": MiB, "mib": MiB, "mb": 1e6,
	"g": GiB, "gi": GiB, "gib": GiB, "gb": 1e9,
	"t": TiB, "ti": TiB, "tib": TiB, "tb": 1e12,
	"p": PiB, "pi": PiB, "pib": PiB, "pb": 1e15,
	"e": EiB, "ei": EiB, "eib": EiB, "eb": 1e18,
}

const (
	wantSize  = "want a number of bytes with an optional unit, such as 4096, 4K, 4KiB or 1.5MiB"
	unitsHelp = "B; K, M, G, T, P, E and KiB … EiB are powers of 1024; KB … EB powers of 1000"
)

// Parse reads one size in bytes: "4096", "4K", "4 KiB", "1.5MiB", "64GB".
// A bare number is bytes.
func Parse(s string) (uint64, error) { return ParseIn(s, 1) }

// ParseIn reads one size whose bare numbers count bare bytes: 1 for
// bytes, MiB for Slurm's --mem; 0 refuses a bare number (whether 64000 is
// bytes or MB is a guess not worth making for a memory size).
func ParseIn(s string, bare uint64) (uint64, error) {
	num, mult, err := split(s, bare)
	if err != nil {
		return 0, err
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil || n > maxSize/mult {
			return 0, fmt.Errorf("size %q: too large (the limit is 8 EiB)", strings.TrimSpace(s))
		}
		return n * mult, nil
	}
	v, _ := strconv.ParseFloat(num, 64) // split checked the digits
	if mult == 1 {
		return 0, fmt.Errorf("size %q: not a whole number of bytes", strings.TrimSpace(s))
	}
	b := math.Round(v * float64(mult))
	if b >= 1<<63 {
		return 0, fmt.Errorf("size %q: too large (the limit is 8 EiB)", strings.TrimSpace(s))
	}
	return uint64(b), nil
}

// ParseFloat reads an axis value: a size as Parse reads it, or a plain
// number such as 0.5 (x is not always bytes: a rank count, a fraction).
func ParseFloat(s string) (float64, error) {
	num, mult, err := split(s, 1)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v*float64(mult), 0) {
		return 0, fmt.Errorf("size %q: %s", strings.TrimSpace(s), wantSize)
	}
	return v * float64(mult), nil
}

// split separates a size's number from its unit's multiplier.
func split(s string, bare uint64) (num string, mult uint64, err error) {
	t := strings.TrimSpace(s)
	i := 0
	dots := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		if t[i] == '.' {
			dots++
		}
		i++
	}
	num = t[:i]
	if strings.Trim(num, ".") == "" || dots > 1 {
		return "", 0, fmt.Errorf("size %q: %s", t, wantSize)
	}
	unit := strings.TrimSpace(t[i:])
	if unit == "" {
		if bare == 0 {
			return "", 0, fmt.Errorf("size %q: give a unit (%s)", t, unitsHelp)
		}
		return num, bare, nil
	}
	mult, ok := units[strings.ToLower(unit)]
	if !ok {
		return "", 0, fmt.Errorf("size %q: unknown unit %q (%s)", t, unit, unitsHelp)
	}
	return num, mult, nil
}

// ParseList reads a list of sizes: comma-separated sizes and MIN-MAX
// ranges, which double from MIN up to MAX (0 is followed by 1). The sizes
// come in the order written; one written twice is an error.
func ParseList(s string) ([]uint64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return nil, fmt.Errorf("no sizes: want a size, a list such as 1,8,64 or a range such as 1-4MiB")
	}
	var out []uint64
	seen := map[uint64]bool{}
	add := func(n uint64) error {
		if seen[n] {
			return fmt.Errorf("size %d is listed twice", n)
		}
		if len(out) == MaxListLen {
			return fmt.Errorf("more than %d sizes", MaxListLen)
		}
		seen[n] = true
		out = append(out, n)
		return nil
	}
	for _, item := range strings.Split(t, ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := Parse(lo)
		if err != nil {
			return nil, err
		}
		if !isRange {
			if err := add(a); err != nil {
				return nil, err
			}
			continue
		}
		b, err := Parse(hi)
		if err != nil {
			return nil, err
		}
		if a > b {
			return nil, fmt.Errorf("range %q: %d is above %d", strings.TrimSpace(item), a, b)
		}
		for n := a; ; {
			if err := add(n); err != nil {
				return nil, err
			}
			switch {
			case n == 0:
				n = 1
			case n > b/2:
				n = b + 1 // past the end; doubling could overflow
			default:
				n *= 2
			}
			if n > b {
				break
			}
		}
	}
	return out, nil
}

// Format writes a message size the way OSU's tables and the articles' axes
// do: 1, 512, 1K, 4M, with K = 1024. A size a few bytes off a round one, as
// NetPIPE perturbs them, is written from it: 8M-3, 1536K+3. Round sizes
// read back with Parse.
func Format(b float64) string {
	if b != math.Trunc(b) || b < 0 || b > 1<<62 {
		return strconv.FormatFloat(b, 'g', 6, 64)
	}
	n := int64(b)
	if n >= 1024 {
		for d := int64(-8); d <= 8; d++ {
			if d == 0 || (n+d)%1024 != 0 {
				continue
			}
			off := strconv.FormatInt(-d, 10)
			if -d > 0 {
				off = "+" + off
			}
			return Format(float64(n+d)) + off
		}
	}
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// binaryUnits are Label's and Approx's units, largest first.
var binaryUnits = []struct {
	name string
	size uint64
}{{"EiB", EiB}, {"PiB", PiB}, {"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}}

// Label writes a size exactly, in the largest binary unit it is a whole
// number of: "4 KiB", "1 MiB", "1536 MiB", "1000 B" — for a title or a
// legend, where "4K" would be too terse.
func Label(b float64) string {
	if b == math.Trunc(b) && b >= 0 && b < 1<<63 {
		n := uint64(b)
		for _, u := range binaryUnits {
			if n >= u.size && n%u.size == 0 {
				return strconv.FormatUint(n/u.size, 10) + " " + u.name
			}
		}
	}
	return strconv.FormatFloat(b, 'f', -1, 64) + " B"
}

// Approx writes a size in the largest binary unit it fills, with at most
// two decimals: "64 GiB", "1.5 TiB", "512 B" — for memory, where the last
// bytes do not matter.
func Approx(b uint64) string {
	names := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v := float64(b)
	i := 0
	for v >= 1024 && i < len(names)-1 {
		v /= 1024
		i++
	}
	r := math.Round(v*100) / 100
	if r*math.Pow(1024, float64(i)) >= 1<<63 {
		// Rounding up would name a size Parse refuses (7.997 EiB is
		// not 8 EiB): round down instead.
		r = math.Floor(v*100) / 100
	}
	return strconv.FormatFloat(r, 'f', -1, 64) + " " + names[i]
}

// ParseLinkRate reads a link rate as people write it — "100Gbps",
// "100 Gb/s", "25G", "800 Mbps", "12500 MB/s" — and returns it in Gb/s.
// A bare number is in Gb/s. Case tells bytes from bits only in MB/s and
// GB/s (and MBps, GBps), the way the tools print them.
func ParseLinkRate(s string) (float64, error) {
	m := linkRateRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("link rate %q: want a rate such as 100Gbps, 25 Gb/s, 800Mbps or 12500MB/s", s)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("link rate %q: want a positive number", s)
	}
	unit := strings.ReplaceAll(m[2], " ", "")
	switch unit {
	case "MB/s", "MBps", "MByte/s", "MBytes/s":
		return v * 8 / 1000, nil
	case "GB/s", "GBps", "GByte/s", "GBytes/s":
		return v * 8, nil
	}
	switch strings.ToLower(unit) {
	case "", "g", "gbps", "gb/s", "gbit/s", "gbits/s", "gbit":
		return v, nil
	case "m", "mbps", "mb/s", "mbit/s", "mbits/s", "mbit":
		return v / 1000, nil
	case "t", "tbps", "tb/s", "tbit/s":
		return v * 1000, nil
	}
	return 0, fmt.Errorf("link rate %q: unknown unit %q (want Gbps, Mbps, Gb/s, MB/s or GB/s)", s, m[2])
}

var linkRateRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z/ ]*)$`)
