package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/sbench/sbench/campaign"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// reparseLong is ingest --reparse's part of ingest's help.
const reparseLong = `

--reparse [SELECTOR] reads archived runs again instead of adding files: the
samples of their user-defined metrics ([[benchmark.metric]]) and the verdict
of their sanity patterns (require, reject) are derived anew from the raw
output each run's bundle keeps, with the definitions the run recorded, or,
with --campaign FILE, with that campaign's current definitions for the runs
of its benchmarks. SELECTOR is one selector of sbench compare (run:ID,
campaign:NAME, job:ID …); without one, every run of --campaign's campaign,
else every archived run. The runs are rewritten in one transaction, each
keeping its id; the samples of the tool's own parser, and metrics read from
a file other than the output (whose content is not archived), are kept as
they are. Every run that changed is listed with its status and samples
before and after.`

// runReparse is sbench ingest --reparse.
func runReparse(ctx context.Context, e *env, o ingestOptions, args []string) error {
	for _, f := range []struct {
		set  bool
		name string
	}{{o.format != "auto", "--format"}, {len(o.labels) > 0, "--label"}, {o.system != "", "--system"}, {o.json, "--json"}} {
		if f.set {
			return usagef("ingest --reparse: %s is for ingesting files", f.name)
		}
	}
	if len(args) > 1 {
		return usagef("ingest --reparse: at most one selector, got %d", len(args))
	}
	var camp *campaign.Campaign
	if o.campaign != "" {
		c, err := campaign.Load(o.campaign)
		if err != nil {
			return err
		}
		camp = c
	}
	db, err := openDBExisting(e)
	if err != nil {
		return err
	}
	defer db.Close()
	flt := store.Filter{}
	if len(args) == 1 {
		sels, err := parseSelectors("ingest --reparse", args)
		if err != nil {
			return err
		}
		if flt, err = sels[0].Filter(ctx, db); err != nil {
			return err
		}
	} else if camp != nil {
		flt.Campaign = camp.Campaign.Name
	}
	runs, err := db.Runs(ctx, flt)
	if err != nil {
		return err
	}
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	var reports []string
	read := 0
	changed, err := db.Rederive(ctx, ids, func(id int64, b *results.Bundle) (bool, error) {
		def := b.Benchmark.Extract
		if camp != nil && b.Campaign == camp.Campaign.Name {
			if i := slices.IndexFunc(camp.Benchmarks, func(x campaign.Benchmark) bool { return x.Name == b.Benchmark.Name }); i >= 0 {
				def = camp.Benchmarks[i].Extract()
			}
		}
		if def.Empty() && b.Benchmark.Extract.Empty() {
			return false, nil
		}
		x, err := parsers.Compile(def)
		if err != nil {
			return false, err
		}
		read++
		before, key := describeDerived(b), derivedKey(b)
		recorded := b.Benchmark.Extract
		x.Reapply(b, []byte(results.ToolOutput(b.Raw)), nil)
		if derivedKey(b) == key && sameExtract(def, recorded) {
			return false, nil
		}
		after := describeDerived(b)
		reports = append(reports, fmt.Sprintf("run %d %s: %s → %s", id, b.Benchmark.Name, before, after))
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, r := range reports {
		fmt.Fprintln(e.stdout, r)
	}
	fmt.Fprintf(e.stdout, "%d run(s) re-parsed, %d changed, in %s\n", read, len(changed), e.db)
	return nil
}

// sameExtract reports whether two definitions are the same.
func sameExtract(a, b *results.Extract) bool {
	if a.Empty() || b.Empty() {
		return a.Empty() == b.Empty()
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// describeDerived says what an extraction decides of a run: its status,
// its samples per metric (a metric's value when it has one sample, else
// its count), by metric name, and its error.
func describeDerived(b *results.Bundle) string {
	byMetric := map[string][]float64{}
	for _, s := range b.Samples {
		byMetric[s.Metric] = append(byMetric[s.Metric], s.Value)
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(byMetric)) {
		if vs := byMetric[n]; len(vs) == 1 {
			parts = append(parts, fmt.Sprintf("%s=%g", n, vs[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%s×%d", n, len(vs)))
		}
	}
	out := fmt.Sprintf("%s [%s]", b.Status, strings.Join(parts, " "))
	if b.Error != "" {
		out += fmt.Sprintf(" (%s)", strings.ReplaceAll(b.Error, "\n", "; "))
	}
	return out
}

// derivedKey is what an extraction decides of a run, to tell whether a
// new one changed it: status, error and samples, in metric order.
func derivedKey(b *results.Bundle) string {
	samples := slices.Clone(b.Samples)
	slices.SortStableFunc(samples, func(x, y results.Sample) int { return strings.Compare(x.Metric, y.Metric) })
	data, _ := json.Marshal(samples)
	return string(b.Status) + "\x00" + b.Error + "\x00" + string(data)
}
