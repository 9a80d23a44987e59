package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/sbench/sbench/compare"
	"github.com/sbench/sbench/store"
)

func main() {
	db, err := store.OpenReadOnly(os.Args[1])
	if err != nil {
		panic(err)
	}
	f, _ := os.Create(os.Args[2])
	pprof.StartCPUProfile(f)
	t := time.Now()
	a, _ := compare.ParseSelector("system=alpha")
	b, _ := compare.ParseSelector("system=beta")
	res, err := compare.Compare(context.Background(), db, a, b, compare.DefaultOptions())
	pprof.StopCPUProfile()
	fmt.Println(time.Since(t), err, len(res.Tables))
	if len(os.Args) > 3 {
		runtime.GC()
		mf, _ := os.Create(os.Args[3])
		pprof.WriteHeapProfile(mf)
		mf.Close()
		rows := 0
		for _, t := range res.Tables {
			rows += len(t.Rows)
		}
		fmt.Println("rows", rows)
	}
	runtime.KeepAlive(res)
}
