// Package hostlist expands and compresses Slurm hostlist expressions
// (n[1-2], node[01-04,07], r[1-2]n[01-02]) in Slurm's order. It imports
// nothing of sbench's, so the runner and the reports can share it.
package hostlist

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Max caps how many names one hostlist may expand to, so that a typo
// such as n[1-100000000] is an error rather than an out-of-memory kill.
const Max = 1 << 20

// Expand expands a Slurm hostlist expression into node names, in
// Slurm's order (the order of the expression, ranges ascending as written,
// several bracket groups in one name expanding left to right):
//
//	n[1-2]            -> n1 n2
//	node[01-04,07]    -> node01 node02 node03 node04 node07
//	r[1-2]n[01-02]    -> r1n01 r1n02 r2n01 r2n02
//	a,b[9-10],c       -> a b9 b10 c
//
// Zero padding follows the range's lower bound as written, as Slurm does.
// Duplicates are kept: the caller decides whether they matter.
func Expand(expr string) ([]string, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, nil
	}
	var out []string
	for _, item := range splitTopLevel(expr) {
		if item == "" {
			return nil, fmt.Errorf("hostlist %q: empty name", expr)
		}
		names, err := expandItem(item, Max-len(out))
		if err != nil {
			return nil, fmt.Errorf("hostlist %q: %w", expr, err)
		}
		out = append(out, names...)
	}
	return out, nil
}

// splitTopLevel splits on commas that are not inside brackets. Unbalanced
// brackets are left for expandItem to report.
func splitTopLevel(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// expandItem expands one name that may hold several bracket groups.
func expandItem(item string, budget int) ([]string, error) {
	open := strings.IndexByte(item, '[')
	if open < 0 {
		if strings.ContainsAny(item, "]") {
			return nil, fmt.Errorf("unbalanced ']' in %q", item)
		}
		if strings.ContainsAny(item, " \t") {
			return nil, fmt.Errorf("space in name %q", item)
		}
		return []string{item}, nil
	}
	end := strings.IndexByte(item[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("unbalanced '[' in %q", item)
	}
	end += open
	prefix, body, rest := item[:open], item[open+1:end], item[end+1:]
	if strings.ContainsAny(prefix, "]") || strings.ContainsAny(body, "[") {
		return nil, fmt.Errorf("nested or unbalanced brackets in %q", item)
	}
	heads, err := expandRanges(body)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", item, err)
	}
	tails := []string{""}
	if rest != "" {
		if tails, err = expandItem(rest, budget); err != nil {
			return nil, err
		}
	}
	if len(heads)*len(tails) > budget {
		return nil, fmt.Errorf("expands to more than %d names", Max)
	}
	out := make([]string, 0, len(heads)*len(tails))
	for _, h := range heads {
		for _, t := range tails {
			out = append(out, prefix+h+t)
		}
	}
	return out, nil
}

// expandRanges expands the inside of one bracket group: "01-04,07".
func expandRanges(body string) ([]string, error) {
	if body == "" {
		return nil, fmt.Errorf("empty brackets")
	}
	var out []string
	for _, r := range strings.Split(body, ",") {
		r = strings.TrimSpace(r)
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, errA := parseIndex(lo)
		b, errB := parseIndex(hi)
		if errA != nil || errB != nil {
			return nil, fmt.Errorf("bad range %q", r)
		}
		if b < a {
			return nil, fmt.Errorf("range %q runs backwards", r)
		}
		if b-a >= Max || len(out)+(b-a+1) > Max {
			return nil, fmt.Errorf("range %q expands to more than %d names", r, Max)
		}
		width := len(lo)
		for i := a; i <= b; i++ {
			// strconv, not fmt: every rank expands the step's node list
			// at start-up, hundreds of names.
			n := strconv.Itoa(i)
			if len(n) < width {
				n = strings.Repeat("0", width-len(n)) + n
			}
			out = append(out, n)
		}
	}
	return out, nil
}

func parseIndex(s string) (int, error) {
	if s == "" || len(s) > 9 || strings.ContainsFunc(s, func(c rune) bool { return c < '0' || c > '9' }) {
		return 0, fmt.Errorf("bad index %q", s)
	}
	return strconv.Atoi(s)
}

// Compress writes names as a Slurm hostlist expression, keeping their
// order: consecutive names that differ only in a trailing number of the same
// width are folded into one bracket group (n1,n2,n3,n7 -> n[1-3,7]).
func Compress(names []string) string {
	type group struct {
		prefix string
		width  int
		nums   []int
	}
	var groups []group
	for _, n := range names {
		prefix, digits := splitTrailingDigits(n)
		if digits == "" || len(digits) > 9 { // too long to be an index: keep the name whole
			groups = append(groups, group{prefix: n, width: -1})
			continue
		}
		v, _ := strconv.Atoi(digits)
		width := len(digits)
		if digits[0] != '0' || len(digits) == 1 {
			width = 0 // unpadded
		}
		// node09 and node10 belong together: a padded group takes any number
		// of its width.
		if k := len(groups) - 1; k >= 0 && groups[k].prefix == prefix &&
			(groups[k].width == width || (groups[k].width > 0 && len(digits) == groups[k].width)) {
			groups[k].nums = append(groups[k].nums, v)
			continue
		}
		groups = append(groups, group{prefix: prefix, width: width, nums: []int{v}})
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		if g.width < 0 {
			parts = append(parts, g.prefix)
			continue
		}
		if len(g.nums) == 1 {
			parts = append(parts, g.prefix+fmt.Sprintf("%0*d", g.width, g.nums[0]))
			continue
		}
		var rs []string
		for i := 0; i < len(g.nums); {
			j := i
			for j+1 < len(g.nums) && g.nums[j+1] == g.nums[j]+1 {
				j++
			}
			if j == i {
				rs = append(rs, fmt.Sprintf("%0*d", g.width, g.nums[i]))
			} else {
				rs = append(rs, fmt.Sprintf("%0*d-%0*d", g.width, g.nums[i], g.width, g.nums[j]))
			}
			i = j + 1
		}
		parts = append(parts, g.prefix+"["+strings.Join(rs, ",")+"]")
	}
	return strings.Join(parts, ",")
}

func splitTrailingDigits(s string) (prefix, digits string) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[:i], s[i:]
}

// Compare orders node names as people count them: names that differ only
// in a trailing number by that number (n2 before n10, node09 before
// node10), others as strings. It returns -1, 0 or +1.
func Compare(a, b string) int {
	pa, da := splitTrailingDigits(a)
	pb, db := splitTrailingDigits(b)
	if pa == pb && da != "" && db != "" {
		ta, tb := strings.TrimLeft(da, "0"), strings.TrimLeft(db, "0")
		if len(ta) != len(tb) {
			return cmp.Compare(len(ta), len(tb))
		}
		if c := strings.Compare(ta, tb); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}
