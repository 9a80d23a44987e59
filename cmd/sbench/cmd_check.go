package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/expect"
	"github.com/sbench/sbench/expect/judge"
	"github.com/sbench/sbench/store"
	"github.com/sbench/sbench/trend"
)

// checkOptions are check's flags.
type checkOptions struct {
	campaign string
	site     string
	json     bool
}

func newCheckCmd(e *env) *cobra.Command {
	var o checkOptions
	c := &cobra.Command{
		Use:   "check [SELECTOR] [--campaign FILE] [--site FILE] [--json]",
		Short: "Judge the runs against the campaign's expectations: PASS, FAIL, NO DATA",
		Long: `Check judges the archived runs against acceptance references: the
[[expect]] tables of a campaign (see docs/check.md). Each expectation binds a
benchmark, a metric and a point (at: an x such as 4MiB, "best" for the best
over every x, or none) to a bound: an absolute value with its unit (">= 24
GB/s", "<= 3 us"), a factor of the runs' link rate or Rpeak (">= 0.9 *
link_rate", ">= 0.75 * rpeak"), or a baseline's median with a margin (">=
baseline:pre-upgrade - 5%").

A bound is judged on the MEDIAN of the ok runs of the expectation's benchmark
(each run's value being the median of its samples at the point), per
configuration when the runs have several: one outlier never fails it. Each
line shows the status, the median and n, the bound's limit in the metric's
unit and where it came from (absolute, the link_rate label or the runs'
provenance, the rpeak label or the nodes' provenance, the baseline's median),
and the runs it rests on. A verdict of one run says n=1: it is judged, but
rests on one run. NO DATA (no run measured the metric at the point, an
unknown link rate, Rpeak or baseline) is said, not failed.

The expectations come from --campaign FILE, else from the archive: sbench
submit and sbench local record a campaign's expectations when they start it,
so "sbench check campaign:NAME" needs no file; with no selector, or another
one, every campaign's recorded expectations are judged. A campaign's
expectations judge its own runs, narrowed by SELECTOR (the selectors of sbench
compare: campaign:NAME@latest, job:ID, since:baseline:NAME …).

A site profile's [[expect]] tables (docs/site-profile.md) are recorded with
the campaign submitted or run under it, and judge that profile's system's
runs. --site FILE judges a profile's expectations as well, on the selected
runs of its system, whatever campaign they belong to; with --campaign, the
campaign is read under that profile (default: $SBENCH_SITE, else the
default profile path), as sbench render reads it.

Exit status 1 when any expectation FAILs.`,
		Example: `  sbench check campaign:acceptance
  sbench check campaign:acceptance@latest --json
  sbench check --campaign examples/quickstart.toml
  sbench check since:baseline:pre-upgrade`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), e, o, args)
		},
	}
	c.Flags().StringVar(&o.campaign, "campaign", "", "judge the expectations of this campaign file (default: those the archive recorded)")
	c.Flags().StringVar(&o.site, "site", "", "judge this site profile's expectations too, on its system's runs (with --campaign: read the campaign under it; default $SBENCH_SITE, else ~/.config/sbench/site.toml)")
	c.Flags().BoolVar(&o.json, "json", false, "print the verdicts as JSON")
	return c
}

// runCheck judges the expectations and prints the verdicts.
func runCheck(ctx context.Context, e *env, o checkOptions, args []string) error {
	var sel *compare.Selector
	if len(args) == 1 {
		sels, err := parseSelectors("check", args)
		if err != nil {
			return err
		}
		sel = &sels[0]
	}
	var sets []judge.Set
	switch {
	case o.campaign != "":
		camp, err := loadCampaignSite(e, o.campaign, o.site)
		if err != nil {
			return err
		}
		sets = append(sets, judge.Set{Campaign: camp.Campaign.Name, Refs: camp.Refs()})
	case o.site != "":
		s, err := loadSite(e, o.site)
		if err != nil {
			return err
		}
		if s == nil {
			return usagef("check: --site %s: no profile", o.site)
		}
		sets = append(sets, judge.Set{Refs: s.Refs()})
	}
	db, err := openDBRead(e)
	if err != nil {
		return err
	}
	defer db.Close()
	if o.campaign == "" {
		name := ""
		if sel != nil && sel.Kind == compare.SelectCampaign {
			name = sel.Campaign
		}
		recorded, err := db.Expectations(ctx, name)
		if err != nil {
			return err
		}
		for _, r := range recorded {
			sets = append(sets, judge.Set{Campaign: r.Campaign, Refs: r.Refs})
		}
	}
	sets = withoutRepeatedRefs(sets)
	base := store.Filter{}
	if sel != nil {
		if base, err = sel.Filter(ctx, db); err != nil {
			return dataError(fmt.Errorf("check: %w", err))
		}
	}
	verdicts, err := judge.JudgeSets(ctx, db, sets, base)
	if err != nil {
		return err
	}
	if len(verdicts) == 0 {
		return usagef("check: no expectations to judge: give a campaign with [[expect]] tables (--campaign FILE), or run or submit one so that the archive records them")
	}
	r := checkResult{Verdicts: verdicts}
	if err := writeResult(e, r, o.json); err != nil {
		return err
	}
	if failed := r.failed(); len(failed) > 0 {
		return exitError{code: exitGate, msg: fmt.Sprintf("check: %d expectation(s) failed: %s", len(failed), strings.Join(failed, "; "))}
	}
	return nil
}

// checkResult is check's output.
type checkResult struct {
	Verdicts []expect.Verdict `json:"verdicts"`
}

// failed names the failed expectations, each once.
func (r checkResult) failed() []string {
	var out []string
	for _, v := range r.Verdicts {
		if v.Status == expect.Fail && !slices.Contains(out, v.Ref.Title()) {
			out = append(out, v.Ref.Title())
		}
	}
	return out
}

// WriteText prints a table of the verdicts, then what each rests on.
func (r checkResult) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tEXPECTATION\tMEDIAN\tN\tBOUND\tLIMIT\tRUNS\tFROM")
	var notes []string
	for _, v := range r.Verdicts {
		name := v.Label()
		runs := store.FormatRunIDs(v.Runs)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", v.Status, name, v.ValueText(), v.N, v.Ref.Bound, limitCell(v), dash(runs), dash(v.Ref.Source))
		if v.Note != "" {
			notes = append(notes, fmt.Sprintf("  %s: %s", name, v.Note))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	_, err := fmt.Fprintln(w, expect.Summary(r.Verdicts))
	return err
}

// limitCell is the limit and where it came from.
func limitCell(v expect.Verdict) string {
	if v.Status == expect.NoData && v.LimitFrom == "" {
		return "—"
	}
	s := expect.FormatValue(v.Limit, v.Unit)
	if v.LimitFrom != "" && v.LimitFrom != "absolute" {
		s += " (" + v.LimitFrom + ")"
	}
	return s
}

// WriteJSON prints the verdicts and their counts.
func (r checkResult) WriteJSON(w io.Writer) error {
	c := expect.Counts(r.Verdicts)
	return writeJSONTo(w, struct {
		Verdicts []expect.Verdict `json:"verdicts"`
		Pass     int              `json:"pass"`
		Fail     int              `json:"fail"`
		NoData   int              `json:"no_data"`
	}{r.Verdicts, c[expect.Pass], c[expect.Fail], c[expect.NoData]})
}

// recordExpectations records the campaign's expectations in the archive,
// for sbench check campaign:NAME: its own, replacing those it was last
// started with, and its site profile's, replacing those of its last run
// under that profile (a run under another profile keeps its own).
func recordExpectations(ctx context.Context, db *store.DB, camp *campaign.Campaign) error {
	if err := db.SetExpectations(ctx, camp.Campaign.Name, "", camp.OwnRefs()); err != nil {
		return err
	}
	if s := camp.Site(); s != nil {
		return db.SetExpectations(ctx, camp.Campaign.Name, s.Site.Name, camp.SiteRefs())
	}
	return nil
}

// recordedVerdicts judges the recorded expectations of the campaigns of
// runs on the runs flt selects: the report's table.
func recordedVerdicts(ctx context.Context, db *store.DB, runs []store.Run, flt store.Filter) ([]expect.Verdict, error) {
	sets, err := judge.Recorded(ctx, db, runs)
	if err != nil {
		return nil, err
	}
	return judge.JudgeSets(ctx, db, sets, flt)
}

// historyBounds are the lines history draws on its chart: the limits of
// the recorded expectations of the history's campaigns on its benchmark,
// metric and x, judged on its runs.
func historyBounds(ctx context.Context, db *store.DB, h *compare.History) ([]trend.Option, []string, error) {
	ids := make([]int64, len(h.Points))
	for i, p := range h.Points {
		ids[i] = p.Run
	}
	f := store.Filter{RunIDs: ids}
	runs, err := db.Runs(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	sets, err := judge.Recorded(ctx, db, runs)
	if err != nil {
		return nil, nil, err
	}
	for i := range sets {
		sets[i].Refs = slices.DeleteFunc(sets[i].Refs, func(r expect.Ref) bool { return !boundOf(r, h) })
	}
	vs, err := judge.JudgeSets(ctx, db, sets, f)
	if err != nil {
		return nil, nil, err
	}
	var opts []trend.Option
	var said []string
	for _, v := range vs {
		if v.LimitFrom == "" || v.Status == expect.NoData {
			continue
		}
		y, err := expect.Convert(v.Limit, v.Unit, h.Unit)
		if err != nil {
			continue
		}
		label := v.Ref.Title() + " " + v.Ref.Bound
		if v.Ref.Bound != v.LimitText() {
			label += " (" + expect.FormatValue(y, h.Unit) + ")"
		}
		opts = append(opts, trend.WithBound(y, label))
		said = append(said, fmt.Sprintf("%s: %s", label, v.Status))
	}
	return opts, said, nil
}

// boundOf reports whether expectation r is about history h's benchmark,
// metric and x.
func boundOf(r expect.Ref, h *compare.History) bool {
	if r.Benchmark != h.Benchmark || r.Metric != h.Metric {
		return false
	}
	pt, err := expect.ParseAt(r.At)
	switch {
	case err != nil || pt.Best:
		return false
	case pt.X == nil || h.X == nil:
		return pt.X == nil && h.X == nil
	}
	return math.Abs(*pt.X-*h.X) <= 1e-9*math.Abs(*h.X)
}

// withoutRepeatedRefs drops an expectation that an earlier set already
// holds: a profile's given with --site and recorded with the campaign run
// under it is judged once.
func withoutRepeatedRefs(sets []judge.Set) []judge.Set {
	// An expectation is itself wherever it is written (Source aside).
	what := func(r expect.Ref) expect.Ref { r.Source = ""; return r }
	kept := map[string]map[expect.Ref]bool{} // by campaign
	recorded := map[expect.Ref]bool{}        // kept with any campaign
	var out []judge.Set
	// The campaigns' sets first: an expectation recorded with a campaign
	// is judged on that campaign's runs rather than on every run.
	for _, anyCampaign := range []bool{false, true} {
		for _, st := range sets {
			if (st.Campaign == "") != anyCampaign {
				continue
			}
			if kept[st.Campaign] == nil {
				kept[st.Campaign] = map[expect.Ref]bool{}
			}
			var refs []expect.Ref
			for _, r := range st.Refs {
				k := what(r)
				if kept[st.Campaign][k] || anyCampaign && recorded[k] {
					continue
				}
				kept[st.Campaign][k] = true
				if !anyCampaign {
					recorded[k] = true
				}
				refs = append(refs, r)
			}
			if len(refs) > 0 {
				out = append(out, judge.Set{Campaign: st.Campaign, Refs: refs})
			}
		}
	}
	return out
}
