package compare

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sbench/sbench/store"
)

// SelectorKind says how a Selector picks runs.
type SelectorKind int

const (
	// SelectLabels picks the runs carrying every one of a set of labels.
	SelectLabels SelectorKind = iota + 1
	// SelectRuns picks runs by archive id.
	SelectRuns
	// SelectCampaign picks the runs of a campaign, optionally of one day.
	SelectCampaign
	// SelectBaseline picks the runs recorded under a baseline's name.
	SelectBaseline
)

// Selector is one side of a comparison, as the user wrote it:
//
//	fabric=ib,mpi=openmpi    runs with all these labels
//	run:12,14-16             runs 12, 14, 15 and 16
//	campaign:acceptance      every run of a campaign
//	campaign:acceptance@2024-06-01   those that started that day (UTC)
//	baseline:pre-upgrade     the runs a baseline was set to
type Selector struct {
	Kind     SelectorKind
	Labels   map[string]string
	RunIDs   []int64
	Campaign string
	Day      time.Time // midnight UTC of the day, or zero for any day
	Baseline string
}

// ParseSelector reads a selector. Errors say what was expected.
func ParseSelector(s string) (Selector, error) {
	if strings.TrimSpace(s) == "" {
		return Selector{}, errors.New("empty selector: want KEY=VALUE[,…], run:ID[,…], campaign:NAME[@DATE] or baseline:NAME")
	}
	kind, rest, hasKind := strings.Cut(s, ":")
	if hasKind {
		switch kind {
		case "run", "runs":
			ids, err := store.ParseRunIDs(rest)
			if err != nil {
				return Selector{}, fmt.Errorf("selector %q: %w", s, err)
			}
			return Selector{Kind: SelectRuns, RunIDs: ids}, nil
		case "campaign":
			name, day, hasDay := strings.Cut(rest, "@")
			if name == "" {
				return Selector{}, fmt.Errorf("selector %q: campaign name is empty", s)
			}
			sel := Selector{Kind: SelectCampaign, Campaign: name}
			if hasDay {
				t, err := time.Parse(time.DateOnly, day)
				if err != nil {
					return Selector{}, fmt.Errorf("selector %q: date %q: want YYYY-MM-DD", s, day)
				}
				sel.Day = t
			}
			return sel, nil
		case "baseline":
			if rest == "" {
				return Selector{}, fmt.Errorf("selector %q: baseline name is empty", s)
			}
			return Selector{Kind: SelectBaseline, Baseline: rest}, nil
		}
		if !strings.Contains(s, "=") {
			return Selector{}, fmt.Errorf("selector %q: unknown kind %q: want run:, campaign:, baseline: or KEY=VALUE labels", s, kind)
		}
	}
	labels := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return Selector{}, fmt.Errorf("selector %q: %q is not KEY=VALUE", s, kv)
		}
		if old, dup := labels[k]; dup && old != v {
			return Selector{}, fmt.Errorf("selector %q: label %q given twice", s, k)
		}
		labels[k] = v
	}
	return Selector{Kind: SelectLabels, Labels: labels}, nil
}

// String returns the selector in its canonical form, which ParseSelector
// reads back to the same selector.
func (s Selector) String() string {
	switch s.Kind {
	case SelectLabels:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
			parts = append(parts, k+"="+s.Labels[k])
		}
		return strings.Join(parts, ",")
	case SelectRuns:
		return "run:" + store.FormatRunIDs(s.RunIDs)
	case SelectCampaign:
		if s.Day.IsZero() {
			return "campaign:" + s.Campaign
		}
		return "campaign:" + s.Campaign + "@" + s.Day.Format(time.DateOnly)
	case SelectBaseline:
		return "baseline:" + s.Baseline
	}
	return ""
}

// Baselines looks baselines up by name; *store.DB is one.
type Baselines interface {
	Baseline(ctx context.Context, name string) (store.Baseline, error)
}

// Filter returns the archive filter selecting the selector's runs. Only a
// baseline needs bl; it may be nil for the other kinds.
func (s Selector) Filter(ctx context.Context, bl Baselines) (store.Filter, error) {
	switch s.Kind {
	case SelectLabels:
		return store.Filter{Labels: s.Labels}, nil
	case SelectRuns:
		return store.Filter{RunIDs: s.RunIDs}, nil
	case SelectCampaign:
		f := store.Filter{Campaign: s.Campaign}
		if !s.Day.IsZero() {
			f.Since, f.Until = s.Day, s.Day.AddDate(0, 0, 1)
		}
		return f, nil
	case SelectBaseline:
		if bl == nil {
			return store.Filter{}, fmt.Errorf("selector %s: no archive to look the baseline up in", s)
		}
		b, err := bl.Baseline(ctx, s.Baseline)
		if err != nil {
			return store.Filter{}, err
		}
		if len(b.RunIDs) == 0 {
			return store.Filter{}, fmt.Errorf("baseline %s has no runs", s.Baseline)
		}
		return store.Filter{RunIDs: b.RunIDs}, nil
	}
	return store.Filter{}, errors.New("selector is empty")
}
