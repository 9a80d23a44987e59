// Command synthruns writes a synthetic site-like archive (package
// internal/synth: clusters measured nightly for years, a kernel upgrade
// that costs one a fifth of its bandwidth, some failed runs) into a SQLite
// archive, for bench/site-scale.sh when bench/archive-scale.sh is not
// there to make one; or adds to any archive a night's runs made from its
// latest ones (-clone), for an incremental update to follow.
//
//	go run ./bench/synthruns -db site.db -runs 20000
//	go run ./bench/synthruns -db site.db -clone 10
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/sbench/sbench/internal/synth"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "synthruns:", err)
		os.Exit(1)
	}
}

func run() error {
	db := flag.String("db", "site.db", "archive to write (made if missing)")
	runs := flag.Int("runs", 20000, "runs to write (at least)")
	fromDay := flag.Int("from-day", 0, "first day, counted from 2022-01-01: a later night's runs")
	clone := flag.Int("clone", 0, "add this many runs copied from the archive's latest, a day later, their values 0.5% off")
	flag.Parse()
	if *clone > 0 {
		return cloneLatest(*db, *clone)
	}
	s := synth.Spec{Systems: []string{"alpha", "beta", "gamma"}, Start: time.Date(2022, 1, 1, 2, 0, 0, 0, time.UTC).AddDate(0, 0, *fromDay),
		Configs: 2, Sizes: 23, Repeats: 2, StepDay: 900 - *fromDay, FailEvery: 97, Seed: uint64(1 + *fromDay)}
	perDay := s.Runs()/max(1, s.Days) + len(s.Systems)*2*s.Configs
	s.Days = (*runs + perDay - 1) / perDay
	if s.StepDay <= 0 {
		s.StepDay = 0
	}
	a, err := store.Open(*db)
	if err != nil {
		return err
	}
	defer a.Close()
	ctx := context.Background()
	var batch []*results.Bundle
	n := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		_, err := a.Ingest(ctx, "synth", batch)
		batch = batch[:0]
		return err
	}
	err = synth.Each(s, func(b *results.Bundle) error {
		if n >= *runs {
			return nil
		}
		n++
		batch = append(batch, b)
		if len(batch) == 500 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d runs added\n", *db, n)
	return nil
}

// cloneLatest adds n runs to the archive at path: its n latest runs'
// bundles, a day later and 0.5% faster, as the next night would bring.
func cloneLatest(path string, n int) error {
	a, err := store.Open(path)
	if err != nil {
		return err
	}
	defer a.Close()
	ctx := context.Background()
	runs, err := a.Runs(ctx, store.Filter{})
	if err != nil {
		return err
	}
	var bs []*results.Bundle
	for i := len(runs) - 1; i >= 0 && len(bs) < n; i-- {
		b, err := a.Bundle(ctx, runs[i].ID)
		if err != nil {
			return err
		}
		b.Start, b.End = b.Start.AddDate(0, 0, 1), b.End.AddDate(0, 0, 1)
		if b.Job.ID != "" {
			b.Job.ID += "1"
		}
		for k := range b.Samples {
			b.Samples[k].Value *= 1.005
		}
		bs = append(bs, b)
	}
	if _, err := a.Ingest(ctx, "clone", bs); err != nil {
		return err
	}
	fmt.Printf("%s: %d runs added\n", path, len(bs))
	return nil
}
