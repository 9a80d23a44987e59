package reports

import (
	"fmt"
	"strconv"
	"strings"
)

// compressHosts writes node names as a Slurm hostlist (n1,n2,n3,n7 ->
// n[1-3,7]), keeping their order and dropping repeats. It mirrors
// slurm.CompressHostlist, which this package may not import (reports sits
// downstream of the archive, not of Slurm), and only ever formats: nothing
// is parsed back from its output.
func compressHosts(names []string) string {
	type group struct {
		prefix string
		width  int // 0: unpadded numbers; >0: zero-padded to width; <0: no number
		nums   []int
	}
	seen := make(map[string]bool, len(names))
	var groups []group
	for _, n := range names {
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		prefix, digits := splitTrailingDigits(n)
		if digits == "" || len(digits) > 9 {
			groups = append(groups, group{prefix: n, width: -1})
			continue
		}
		v, _ := strconv.Atoi(digits)
		width := len(digits)
		if digits[0] != '0' || len(digits) == 1 {
			width = 0
		}
		if k := len(groups) - 1; k >= 0 && groups[k].prefix == prefix &&
			(groups[k].width == width || (groups[k].width > 0 && len(digits) == groups[k].width)) {
			groups[k].nums = append(groups[k].nums, v)
			continue
		}
		groups = append(groups, group{prefix: prefix, width: width, nums: []int{v}})
	}
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		switch {
		case g.width < 0:
			parts = append(parts, g.prefix)
		case len(g.nums) == 1:
			parts = append(parts, fmt.Sprintf("%s%0*d", g.prefix, g.width, g.nums[0]))
		default:
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
