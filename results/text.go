package results

import (
	"cmp"
	"strings"
)

// NaturalCompare orders strings with their runs of digits compared as
// numbers: "77.2.x.json" before "77.10.x.json", so that a job's bundles,
// and the run ids ingest gives them, follow step order. Equal numbers with
// different zero padding ("2", "02") fall back to the plain order.
func NaturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na, nb := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if c := cmp.Compare(a[i], b[j]); c != 0 {
			return c
		}
		i, j = i+1, j+1
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Plural is the suffix that makes a noun counted n times plural: "s", or
// "" for one ("%d run%s", n, Plural(n)).
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
