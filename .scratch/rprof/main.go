package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/sbench/sbench/reports"
	"github.com/sbench/sbench/store"
)

type src struct{ db *store.DB }

func (s src) EachSample(ctx context.Context, fn func(store.Sample) error) error {
	return s.db.EachSample(ctx, store.Filter{}, store.SampleOptions{}, fn)
}
func (s src) EachScalar(ctx context.Context, fn func(store.Scalar) error) error {
	return s.db.EachScalar(ctx, store.Filter{}, fn)
}
func (s src) Raw(ctx context.Context, id int64) (string, error) {
	b, err := s.db.Bundle(ctx, id)
	if err != nil {
		return "", err
	}
	return b.Raw, nil
}
func (s src) Script(context.Context, string) (string, error) { return "", nil }

func main() {
	ctx := context.Background()
	db, err := store.OpenReadOnly(os.Args[1])
	if err != nil {
		panic(err)
	}
	f, _ := os.Create(os.Args[2])
	pprof.StartCPUProfile(f)
	t := time.Now()
	var d reports.Data
	db.EachRun(ctx, store.Filter{}, store.RunOptions{}, func(r *store.Run) error { d.Runs = append(d.Runs, *r); return nil })
	slices.SortFunc(d.Runs, func(a, b store.Run) int { return cmp.Compare(a.ID, b.ID) })
	d.Checks, _ = db.Checks(ctx, store.Filter{})
	t1 := time.Since(t)
	r, err := reports.NewFrom(ctx, d, src{db})
	if err != nil {
		panic(err)
	}
	t2 := time.Since(t)
	if len(os.Args) > 3 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Println("live heap after NewFrom", ms.HeapAlloc>>20, "MiB; sys", ms.Sys>>20)
		mf, _ := os.Create(os.Args[3])
		pprof.WriteHeapProfile(mf)
		mf.Close()
	}
	_ = d
	n, err := r.WriteTo(io.Discard)
	pprof.StopCPUProfile()
	fmt.Println(t1, t2, time.Since(t), n, err)
	runtime.KeepAlive(r)
}
