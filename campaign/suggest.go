package campaign

import (
	"fmt"
	"strings"
)

// closest returns the name of known that name is most likely a typo of:
// at most two edits away (a letter wrong, missing, extra, or two letters
// swapped — Damerau-Levenshtein's optimal string alignment), and no more
// than half of name changed, so that "bw" does not suggest "hpl". Ties
// go to the first in known. It is the one rule behind every "did you
// mean" of a campaign's problems: keys, kernels, parsers, kinds and
// benchmark names.
func closest(name string, known []string) (string, bool) {
	best, bestD := "", 3
	limit := min(2, max(1, len([]rune(name))/2))
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d <= limit && d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != ""
}

// didYouMean is " (did you mean "x"?)" for the closest known name, else
// " (known: a, b, c)" when listKnown is set, else "".
func didYouMean(name string, known []string, listKnown bool) string {
	if k, ok := closest(name, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", k)
	}
	if listKnown && len(known) > 0 {
		return " (known: " + strings.Join(known, ", ") + ")"
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours, each 1.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
