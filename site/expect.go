package site

import (
	"strconv"

	"github.com/sbench/sbench/expect"
	"github.com/sbench/sbench/expect/judge"
	"github.com/sbench/sbench/store"
)

// expectTable is the campaigns' recorded expectations judged on the
// site's runs, as sbench check prints them: a row per expectation and
// configuration, a FAIL marked as a failed run is; nil when none was
// recorded.
func (b *builder) expectTable(runs []store.Run) (*tableView, error) {
	sets, err := judge.Recorded(b.ctx, b.db, runs)
	if err != nil || len(sets) == 0 {
		return nil, err
	}
	vs, err := judge.JudgeSets(b.ctx, b.db, sets, b.o.Filter)
	if err != nil || len(vs) == 0 {
		return nil, err
	}
	t := newTable([]string{"Status", "Campaign", "Expectation", "Median", "n", "Bound", "Limit", "Runs", "Evidence"}, false, false, false, true, true, false, true)
	for _, v := range vs {
		evidence := v.Evidence()
		cells := texts(string(v.Status), orDash(v.Campaign), v.Label(), v.ValueText(), strconv.Itoa(v.N), v.Ref.Bound, v.LimitValue(), "", orDash(evidence))
		cells[7] = cell{Text: "—"}
		if len(v.Runs) > 0 {
			// The runs' ids, the first a link to its page.
			cells[7] = linkCell(runPath(v.Runs[0]), store.FormatRunIDs(v.Runs))
		}
		t.add(row{Cells: cells, Bad: v.Status == expect.Fail})
	}
	return t, nil
}
