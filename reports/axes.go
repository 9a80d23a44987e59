package reports

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"

	"github.com/sbench/sbench/sizes"
)

// maxTickLabels keeps tick labels apart at 9 pt on a figure as wide as an A4
// page's text: "256K" is about 20 pt wide.
const maxTickLabels = 12

// log2Ticks marks every power of two in [min, max] and labels every step-th
// one, step chosen from 1, 2, 5, 10 … so that 1K and 1M keep their labels
// when they can.
func log2Ticks(min, max float64) []plot.Tick {
	lo := int(math.Floor(math.Log2(min) + 1e-9))
	hi := int(math.Ceil(math.Log2(max) - 1e-9))
	step := 1
	for _, s := range []int{1, 2, 5, 10, 20, 50} {
		step = s
		if countMultiples(lo, hi, s) <= maxTickLabels {
			break
		}
	}
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		v := math.Ldexp(1, k)
		if v < min*(1-1e-9) || v > max*(1+1e-9) {
			continue
		}
		t := plot.Tick{Value: v}
		if k%step == 0 {
			t.Label = sizes.Format(v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

func countMultiples(lo, hi, step int) int {
	n := 0
	for k := lo; k <= hi; k++ {
		if k%step == 0 {
			n++
		}
	}
	return n
}

// log2Range widens [min, max] to whole powers of two, so the axis starts and
// ends on a labelled size.
func log2Range(min, max float64) (float64, float64) {
	lo := math.Ldexp(1, int(math.Floor(math.Log2(min)+1e-9)))
	hi := math.Ldexp(1, int(math.Ceil(math.Log2(max)-1e-9)))
	if hi <= lo {
		hi = 2 * lo
	}
	return lo, hi
}

// log10Ticks marks 1–9 × 10^k in [min, max], labels the powers of ten, and
// also 2 and 5 × 10^k when fewer than two powers of ten fall in the range —
// a latency curve spanning 1.2–4 µs still needs numbers on its axis.
func log10Ticks(min, max float64) []plot.Tick {
	lo := int(math.Floor(math.Log10(min)))
	hi := int(math.Ceil(math.Log10(max)))
	decades := 0
	for k := lo; k <= hi; k++ {
		if v := math.Pow10(k); v >= min*(1-1e-9) && v <= max*(1+1e-9) {
			decades++
		}
	}
	var ticks []plot.Tick
	for k := lo; k <= hi; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(k)
			if v < min*(1-1e-9) || v > max*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (decades < 2 && (m == 2 || m == 5)) {
				t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// log10Range widens [min, max] to the nearest 1, 2 or 5 × 10^k around it.
func log10Range(min, max float64) (float64, float64) {
	lo, hi := niceDown(min), niceUp(max)
	if hi <= lo {
		lo, hi = niceDown(lo/2), niceUp(hi*2)
	}
	return lo, hi
}

func niceDown(v float64) float64 {
	p := math.Pow10(int(math.Floor(math.Log10(v))))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= v*(1+1e-9) {
			return m * p
		}
	}
	return p
}

func niceUp(v float64) float64 {
	p := math.Pow10(int(math.Floor(math.Log10(v))))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// linearTicks labels a linear axis every 1, 2 or 5 × 10^k, the step that
// gives four to nine labels, with an unlabelled tick half way between: more
// numbers to read a curve by than gonum's three or four.
func linearTicks(min, max float64) []plot.Tick {
	if !(max > min) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', -1, 64)}}
	}
	span := max - min
	step := math.Pow10(int(math.Floor(math.Log10(span))))
	for _, m := range []float64{0.1, 0.2, 0.5, 1, 2, 5, 10} {
		if s := step * m; span/s <= 8 {
			step = s
			break
		}
	}
	// Decimals enough for the step: 0.25 needs two, 500 none.
	prec := 0
	if step < 1 {
		prec = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	var ticks []plot.Tick
	for v := math.Ceil(min/step-1e-9) * step; v <= max*(1+1e-12)+step*1e-9; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0 // not -0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', prec, 64)})
		if half := v + step/2; half <= max {
			ticks = append(ticks, plot.Tick{Value: half})
		}
	}
	return ticks
}
