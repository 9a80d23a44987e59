package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// benchFiles is how many result files one benchmark operation ingests: a
// large campaign's worth, so that the archive grows as it would in use.
const benchFiles = 10000

// benchBundles returns n synthetic OSU bundles of 25 samples each, all
// different, as the runner would write them (two hosts, labels, params, raw
// output).
func benchBundles(n int) []*results.Bundle {
	bs := make([]*results.Bundle, n)
	for i := range bs {
		bs[i] = osuBundle("bench", fmt.Sprint("variant-", i%16), fmt.Sprint(100000+i), 25)
	}
	return bs
}

// rowsStored counts every row Ingest wrote, to turn files/s into rows/s.
func rowsStored(b *testing.B, db *DB) int {
	n := 0
	for _, tb := range dataTables {
		n += count(b, db, tb)
	}
	return n
}

// benchFill times fill on a new archive per iteration, named name-i.db, and
// reports its rates: only fill is timed, not opening or counting.
func benchFill(b *testing.B, name string, fill func(ctx context.Context, db *DB)) {
	ctx := context.Background()
	rows := 0
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := Open(filepath.Join(b.TempDir(), fmt.Sprint(name, "-", i, ".db")))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c0 := cpuTime()
		fill(ctx, db)
		cpu += cpuTime() - c0
		b.StopTimer()
		rows = rowsStored(b, db)
		db.Close()
	}
	report(b, rows, cpu)
}

// BenchmarkIngestOSUFiles ingests benchFiles bundles into a new archive, one
// Ingest call (one transaction) per file, as `sbench ingest results/` does.
func BenchmarkIngestOSUFiles(b *testing.B) {
	bundles := benchBundles(benchFiles)
	benchFill(b, "ingest", func(ctx context.Context, db *DB) {
		for _, bu := range bundles {
			if _, err := db.Ingest(ctx, "results.json", []*results.Bundle{bu}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkIngestFilesBatch ingests the same files with IngestFiles, 1,000
// files (one transaction, a savepoint each) per call.
func BenchmarkIngestFilesBatch(b *testing.B) {
	bundles := benchBundles(benchFiles)
	files := make([]File, len(bundles))
	for i, bu := range bundles {
		files[i] = File{Source: "results.json", Bundles: []*results.Bundle{bu}}
	}
	benchFill(b, "batch", func(ctx context.Context, db *DB) {
		for lo := 0; lo < len(files); lo += 1000 {
			res, err := db.IngestFiles(ctx, files[lo:min(lo+1000, len(files))])
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range res {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
	})
}

// BenchmarkPlainInserts writes the same rows into the same schema with bare
// prepared INSERTs: values computed beforehand, no validation, no hashing,
// no duplicate check. It is the ceiling Ingest is measured against.
// tx-per-file commits once per file as Ingest does; one-tx commits once.
func BenchmarkPlainInserts(b *testing.B) {
	files := plainRows(b, benchBundles(benchFiles))
	for _, mode := range []string{"tx-per-file", "one-tx"} {
		b.Run(mode, func(b *testing.B) {
			benchFill(b, "plain", func(ctx context.Context, db *DB) {
				var tx *sql.Tx
				for f, file := range files {
					if tx == nil {
						var err error
						if tx, err = db.w.BeginTx(ctx, nil); err != nil {
							b.Fatal(err)
						}
					}
					in := db.ins.in(ctx, tx)
					r, err := in.run.ExecContext(ctx, file.run...)
					if err != nil {
						b.Fatal(err)
					}
					id, _ := r.LastInsertId()
					exec := func(s *sql.Stmt, args [][]any) {
						for _, a := range args {
							a[0] = id
							if _, err := s.ExecContext(ctx, a...); err != nil {
								b.Fatal(err)
							}
						}
					}
					exec(in.bundle, file.bundle)
					exec(in.label, file.labels)
					exec(in.param, file.params)
					for _, h := range file.newHosts {
						if _, err := in.host.ExecContext(ctx, h...); err != nil {
							b.Fatal(err)
						}
					}
					exec(in.runHost, file.runHosts)
					exec(in.sample, file.samples)
					if mode == "tx-per-file" || f == len(files)-1 {
						if err := tx.Commit(); err != nil {
							b.Fatal(err)
						}
						tx = nil
					}
				}
			})
		})
	}
}

// cpuTime is the process's user+system time, to report alongside wall
// rates: on a shared machine it varies far less than they do.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(b *testing.B, rows int, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Microseconds())/float64(benchFiles*b.N), "cpu-us/file")
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(benchFiles*b.N)/s, "files/s")
	b.ReportMetric(float64(rows*b.N)/s, "rows/s")
	b.ReportMetric(0, "ns/op") // one op is 10,000 files: the rates say more
}

// plainFile is one file's rows as INSERT arguments; the first argument of
// each child row is replaced by the run id at insert time.
type plainFile struct {
	run                                                 []any
	bundle, labels, params, newHosts, runHosts, samples [][]any
}

func plainRows(b *testing.B, bundles []*results.Bundle) []plainFile {
	out := make([]plainFile, len(bundles))
	hostIDs := map[string]int64{}
	js := func(v any) string {
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		return string(data)
	}
	for i, bu := range bundles {
		hash, _ := results.Hash(bu)
		f := plainFile{run: []any{hash, bu.Campaign, bu.Variant, bu.Benchmark.Name, bu.Benchmark.Kind, bu.Benchmark.Kernel,
			js(bu.Benchmark.Command), bu.Benchmark.Launcher, bu.Benchmark.Tool, bu.Benchmark.ToolVersion, string(bu.Status), bu.Error,
			bu.Job.ID, bu.Job.Step, bu.Job.ArrayIndex, js(bu.Job.Nodes), bu.Job.Tasks, bu.Job.TasksPerNode,
			formatTime(bu.Start), formatTime(bu.End), bu.RunnerVersion, "results.json", bu.Source, formatTime(clock), bu.Job.Restart, SystemOf(bu)}}
		f.bundle = [][]any{{nil, encodingJSON, js(bu)}}
		for _, k := range slices.Sorted(maps.Keys(bu.Labels)) {
			f.labels = append(f.labels, []any{nil, k, bu.Labels[k]})
		}
		for _, k := range slices.Sorted(maps.Keys(bu.Params)) {
			f.params = append(f.params, []any{nil, k, bu.Params[k]})
		}
		// Hosts are stored once; their ids are known in advance here.
		for j, h := range bu.Hosts {
			data := js(h)
			id, ok := hostIDs[data]
			if !ok {
				id = int64(len(hostIDs) + 1)
				hostIDs[data] = id
				sum := sha256.Sum256([]byte(data))
				f.newHosts = append(f.newHosts, []any{hex.EncodeToString(sum[:]), h.Hostname, h.NodeName, h.CPUModel, h.Cores, int64(h.MemoryBytes), h.Kernel, h.OS, h.MPI, data})
			}
			f.runHosts = append(f.runHosts, []any{nil, j, id})
		}
		for j, s := range bu.Samples {
			f.samples = append(f.samples, []any{nil, j, s.Metric, s.Unit, optFloat(s.X), s.XUnit, s.Value,
				optFloat(s.Min), optFloat(s.Max), optFloat(s.P50), optFloat(s.P99), s.Iterations, s.Repeat, nil, nil})
		}
		out[i] = f
	}
	return out
}
