package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/sbench/sbench/expect"
)

// ArchiveSchemaExpectations is ArchiveSchemaBaselines with the campaigns'
// recorded expectations (what sbench check campaign:NAME judges): after
// the baselines, one line per set, a campaign's own or a site profile's,
// with the time it was recorded. An export carries the sets of every
// campaign it exports a run of, and is this schema only when there is
// one, so that an sbench that knows v1 and v2 only still reads the
// others.
const ArchiveSchemaExpectations = "sbench.archive/v3"

// archiveExpectations is a recorded expectation set as an archive file
// carries it.
type archiveExpectations struct {
	Campaign string       `json:"campaign"`
	Site     string       `json:"site"`
	Recorded string       `json:"recorded"`
	Refs     []expect.Ref `json:"refs"`
}

// expectationSetName names the set of campaign from site: "acc", or
// "acc (site hpc1)".
func expectationSetName(campaign, site string) string {
	if site == "" {
		return campaign
	}
	return campaign + " (site " + site + ")"
}

// exportedExpectations are the expectation sets of the campaigns of the
// runs where (as Filter.where gives it, runs aliased r) selects; out
// names them.
func exportedExpectations(ctx context.Context, tx *sql.Tx, where string, args []any, out *ArchiveExport) ([]archiveExpectations, error) {
	sets, err := loadExpectationSets(ctx, tx, "e.campaign IN (SELECT r.campaign FROM runs r"+where+")", args...)
	if err != nil {
		return nil, err
	}
	carried := make([]archiveExpectations, 0, len(sets))
	for _, s := range sets {
		carried = append(carried, archiveExpectations{Campaign: s.Campaign, Site: s.Site, Recorded: s.Recorded.UTC().Format(timeLayout), Refs: s.Refs})
		out.Expectations = append(out.Expectations, expectationSetName(s.Campaign, s.Site))
	}
	return carried, nil
}

// setOutcome is what importing an expectation set did.
type setOutcome int

const (
	setRecorded setOutcome = iota // recorded: this archive had none, or older
	setKnown                      // this archive has the same, recorded at the same time
	setKept                       // this archive's was recorded later (or at the same time, other)
)

// importExpectations records an expectation set the file carries, unless
// this archive's set of the same campaign and site was recorded at the
// same time or later.
func importExpectations(ctx context.Context, tx *sql.Tx, s *archiveExpectations) (setOutcome, error) {
	if s.Campaign == "" {
		return 0, errors.New("no campaign")
	}
	if len(s.Refs) == 0 {
		return 0, errors.New("no references")
	}
	recorded, err := parseTime(sql.NullString{String: s.Recorded, Valid: true})
	if err == nil && recorded.IsZero() {
		err = errors.New("is empty")
	}
	if err == nil {
		err = checkTime(recorded)
	}
	if err != nil {
		return 0, fmt.Errorf("recorded: %w", err)
	}
	have, err := loadExpectationSets(ctx, tx, "e.campaign = ? AND e.site = ?", s.Campaign, s.Site)
	if err != nil {
		return 0, err
	}
	if len(have) > 0 {
		switch {
		case have[0].Recorded.Equal(recorded) && slices.Equal(have[0].Refs, s.Refs):
			return setKnown, nil
		case !have[0].Recorded.Before(recorded):
			return setKept, nil
		}
	}
	return setRecorded, recordExpectations(ctx, tx, s.Campaign, s.Site, s.Refs, recorded)
}
