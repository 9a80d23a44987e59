package reports

import (
	"fmt"
	"strconv"

	"github.com/sbench/sbench/expect"
	"github.com/sbench/sbench/store"
)

// expectColumns are the acceptance references' table, as sbench check
// prints it.
var expectColumns = []column{
	{title: "Status", width: 46},
	{title: "Expectation"},
	{title: "Median", width: 84, right: true}, // "27.16 timesteps/s" on one line
	{title: "n", width: 20, right: true},
	{title: "Bound", width: 100},
	{title: "Limit", width: 84, right: true},
	{title: "Runs", width: 44, right: true},
}

// expectationsTable writes the acceptance references judged on the runs
// (Data.Expectations): a row per expectation and configuration, the
// median with n, the bound, its limit in the metric's unit and the runs;
// under a row where the limit came from and what the verdict rests on.
func (r *Report) expectationsTable(d *content) {
	vs := r.data.Expectations
	if len(vs) == 0 {
		return
	}
	d.space(6)
	d.heading("Acceptance references", h2Size, 40)
	d.para(fmt.Sprintf("[[expect]] of the campaign and its site profile, judged on the runs' median (sbench check): %s.", expect.Summary(vs)),
		"I", smallSize, grey)
	d.space(3)
	d.need(rowHeight * float64(2+min(len(vs), 10)))
	t := d.table(expectColumns)
	for _, v := range vs {
		c := redIf(v.Status == expect.Fail)
		row := t.row([]string{string(v.Status), v.Label(), v.ValueText(), strconv.Itoa(v.N), v.Ref.Bound, v.LimitValue(), orDash(store.FormatRunIDs(v.Runs))}, c, nil)
		if under := v.Evidence(); under != "" {
			explain(row, under, 2, grey, true)
		}
	}
	d.space(4)
}
