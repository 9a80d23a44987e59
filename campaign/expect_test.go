package campaign

import (
	"strings"
	"testing"
)

// TestExpectProblems: every wrong [[expect]] key is a problem at its own
// file:line, all at once.
func TestExpectProblems(t *testing.T) {
	checkProblems(t, []problemCase{{"expectations", problemHead + `[[benchmark]]
name = "bw"
kernel = "bw"
[[expect]]
benchmark = "bww"
metric = "bandwidth"
at = "4MiB"
bound = "24 GB/s"
[[expect]]
benchmark = "bw"
metric = "bandwidth"
at = "huge"
bound = ">= 3 us"
where = "fabric"
[[expect]]
metric = "latency"
bound = ">= 0.75 * rpeak"
[[expect]]
benchmark = "bw"
metric = "bandwidth"
`, []string{
		`c.toml:10:1: expect[0].benchmark: no benchmark is called "bww" (did you mean "bw"?)`,
		`c.toml:13:1: expect[0].bound: bound "24 GB/s": want an operator first (>=, <=, >, <), e.g. ">= 24 GB/s", "<= 3 us", ">= 0.9 * link_rate", ">= 0.75 * rpeak" or ">= baseline:NAME - 5%"`,
		`c.toml:17:1: expect[1].at: at "huge": want an x such as 4MiB, 4194304 or 8, or "best" for the best over every x`,
		`c.toml:18:1: expect[1].bound: unit us is a time, the metric's MB/s a data rate`,
		`c.toml:19:1: expect[1].where: where "fabric": "fabric" is not KEY=VALUE`,
		`c.toml:20:1: expect[2].benchmark: is missing: name a [[benchmark]] of the campaign`,
		`c.toml:22:1: expect[2].bound: rpeak is a flop rate; the metric's unit us is not`,
		`c.toml:23:1: expect[3].bound: is missing: e.g. bound = ">= 24 GB/s"`,
	}}})
}

// The campaign's expectations as check judges them, each with its
// file:line.
func TestCampaignRefs(t *testing.T) {
	c, err := Parse("c.toml", []byte(problemHead+`[[benchmark]]
name = "bw"
kernel = "bw"
[[expect]]
benchmark = "bw"
metric = "bandwidth"
at = "4MiB"
bound = ">= 24 GB/s"
`))
	if err != nil {
		t.Fatal(err)
	}
	refs := c.Refs()
	if len(refs) != 1 || refs[0].Bound != ">= 24 GB/s" || refs[0].At != "4MiB" || !strings.Contains(refs[0].Source, "c.toml:9") {
		t.Errorf("refs %+v", refs)
	}
	if got := ExpectRefs(c.Expects, "site profile x"); got[0].Source != "site profile x" || got[0].Benchmark != "bw" {
		t.Errorf("ExpectRefs %+v", got)
	}
}
