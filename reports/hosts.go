package reports

import "github.com/sbench/sbench/slurm/hostlist"

// compressHosts writes node names as a Slurm hostlist (n1,n2,n3,n7 ->
// n[1-3,7]), keeping their order and dropping empty names and repeats.
func compressHosts(names []string) string {
	seen := make(map[string]bool, len(names))
	uniq := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			uniq = append(uniq, n)
		}
	}
	return hostlist.Compress(uniq)
}
