package compare

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/store"
)

func TestParseSelector(t *testing.T) {
	day := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want Selector
		text string // canonical form
	}{
		{"fabric=ib", Selector{Kind: SelectLabels, Labels: map[string]string{"fabric": "ib"}}, "fabric=ib"},
		{"run=before,fabric=ib", Selector{Kind: SelectLabels, Labels: map[string]string{"run": "before", "fabric": "ib"}}, "fabric=ib,run=before"},
		{"section=use tcp for osu_bw", Selector{Kind: SelectLabels, Labels: map[string]string{"section": "use tcp for osu_bw"}}, "section=use tcp for osu_bw"},
		{"url=http://x", Selector{Kind: SelectLabels, Labels: map[string]string{"url": "http://x"}}, "url=http://x"},
		{"empty=", Selector{Kind: SelectLabels, Labels: map[string]string{"empty": ""}}, "empty="},
		{"run:12", Selector{Kind: SelectRuns, RunIDs: []int64{12}}, "run:12"},
		{"run:9,3-5,4", Selector{Kind: SelectRuns, RunIDs: []int64{3, 4, 5, 9}}, "run:3-5,9"},
		{"runs:1", Selector{Kind: SelectRuns, RunIDs: []int64{1}}, "run:1"},
		{"campaign:acceptance", Selector{Kind: SelectCampaign, Campaign: "acceptance"}, "campaign:acceptance"},
		{"campaign:acc@2024-06-01", Selector{Kind: SelectCampaign, Campaign: "acc", Day: day}, "campaign:acc@2024-06-01"},
		{"baseline:pre-upgrade", Selector{Kind: SelectBaseline, Baseline: "pre-upgrade"}, "baseline:pre-upgrade"},
	} {
		got, err := ParseSelector(c.in)
		if err != nil {
			t.Errorf("ParseSelector(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseSelector(%q) = %+v, want %+v", c.in, got, c.want)
		}
		if s := got.String(); s != c.text {
			t.Errorf("ParseSelector(%q).String() = %q, want %q", c.in, s, c.text)
		}
	}
}

func TestParseSelectorErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "empty selector"},
		{"ib", `"ib" is not KEY=VALUE`},
		{"=ib", `"=ib" is not KEY=VALUE`},
		{"a=1,a=2", `label "a" given twice`},
		{"run:", "want a positive integer"},
		{"run:0", "want a positive integer"},
		{"run:x", "want a positive integer"},
		{"run:5-3", "want A-B with A ≤ B"},
		{"run:1-99999999", "more than"},
		{"campaign:", "campaign name is empty"},
		{"campaign:acc@June", "want YYYY-MM-DD"},
		{"baseline:", "baseline name is empty"},
		{"job:12", `unknown kind "job"`},
	} {
		_, err := ParseSelector(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSelector(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

type fakeBaselines map[string]store.Baseline

func (f fakeBaselines) Baseline(_ context.Context, name string) (store.Baseline, error) {
	b, ok := f[name]
	if !ok {
		return store.Baseline{}, store.ErrNotFound
	}
	return b, nil
}

func TestSelectorFilter(t *testing.T) {
	ctx := context.Background()
	bl := fakeBaselines{"ref": {Name: "ref", RunIDs: []int64{4, 7}}, "empty": {Name: "empty"}}
	day := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want store.Filter
	}{
		{"fabric=ib", store.Filter{Labels: map[string]string{"fabric": "ib"}}},
		{"run:1-2", store.Filter{RunIDs: []int64{1, 2}}},
		{"campaign:acc", store.Filter{Campaign: "acc"}},
		{"campaign:acc@2024-06-01", store.Filter{Campaign: "acc", Since: day, Until: day.AddDate(0, 0, 1)}},
		{"baseline:ref", store.Filter{RunIDs: []int64{4, 7}}},
	} {
		s, _ := ParseSelector(c.in)
		got, err := s.Filter(ctx, bl)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Filter = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	s, _ := ParseSelector("baseline:nope")
	if _, err := s.Filter(ctx, bl); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown baseline: %v", err)
	}
	s, _ = ParseSelector("baseline:empty")
	if _, err := s.Filter(ctx, bl); err == nil {
		t.Error("a baseline with no runs gave a filter (it would select every run)")
	}
	if _, err := s.Filter(ctx, nil); err == nil {
		t.Error("a baseline selector with no archive gave a filter")
	}
}

// FuzzParseSelector: any input is refused or parsed to a selector whose
// canonical text parses back to the same selector.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"fabric=ib", "run:1,3-5", "campaign:x@2024-01-02", "baseline:b", "a=1,b=2", "run:", ":", "=", "a=b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			return
		}
		again, err := ParseSelector(sel.String())
		if err != nil {
			t.Fatalf("%q parsed to %+v, whose text %q does not parse: %v", s, sel, sel.String(), err)
		}
		if !reflect.DeepEqual(again, sel) {
			t.Fatalf("%q: %+v, round trip through %q gives %+v", s, sel, sel.String(), again)
		}
	})
}
