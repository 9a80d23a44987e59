package ingest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/store"
)

// benchOSUFiles is the size of the ingest benchmark: the 10,000
// OSU files of ≈25 rows each.
const benchOSUFiles = 10000

// writeOSUFiles writes n distinct osu_latency outputs (sizes 0 … 8 MiB, 25
// rows) into dir.
func writeOSUFiles(tb testing.TB, dir string, n int) []string {
	tb.Helper()
	paths := make([]string, n)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.Reset()
		b.WriteString("# OSU MPI Latency Test v7.5\n# Datatype: MPI_CHAR.\n# Size       Avg Latency(us)\n")
		fmt.Fprintf(&b, "%-20d%.2f\n", 0, 1.00+float64(i)/100) // distinct per file
		for size := 1; size <= 8<<20; size *= 2 {
			fmt.Fprintf(&b, "%-20d%.2f\n", size, 1.5+float64(size)/1e3+float64(i%89)/100)
		}
		paths[i] = filepath.Join(dir, fmt.Sprintf("osu_latency-%05d.txt", i))
		if err := os.WriteFile(paths[i], []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return paths
}

// BenchmarkIngest ingests 10,000 OSU text files of 25 rows the way
// "sbench ingest DIR" does — read, sniff, parse, hash, encode, store, a
// savepoint per file and files-per-tx files per transaction (500 is the
// default) — and, as the ceiling it is measured against, writes the same
// rows with bare prepared INSERTs into the same schema, parsing nothing:
// in one transaction (plain/one-tx) and in one per file. The cli rows
// report their rate as a fraction of plain/one-tx's (x-plain; issue 3's
// target is at least 0.5 with the default batching). Compare the figures
// of one run: they share the machine's load; cpu-µs/sample is what each
// costs whatever the load (the CLI's on every core it uses).
func BenchmarkIngest(b *testing.B) {
	paths := writeOSUFiles(b, b.TempDir(), benchOSUFiles)
	ins := make([]Input, len(paths))
	for i, p := range paths {
		ins[i] = File(p, false)
	}
	ctx := context.Background()
	var plain float64 // samples/s of plain/one-tx
	stored := storedBundles(b, paths)
	for _, perTx := range []bool{false, true} {
		name := "plain/one-tx"
		if perTx {
			name = "plain/tx-per-file"
		}
		b.Run(name, func(b *testing.B) {
			rate := benchPlainInserts(b, ctx, perTx, stored)
			if !perTx {
				plain = rate
			}
		})
	}
	for _, batch := range []int{batchFiles, 1} {
		b.Run(fmt.Sprintf("cli/files-per-tx=%d", batch), func(b *testing.B) {
			old := batchFiles
			batchFiles = batch
			defer func() { batchFiles = old }()
			benchIngest(b, ctx, ins, plain)
		})
	}
}

func benchIngest(b *testing.B, ctx context.Context, ins []Input, plain float64) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := store.Open(filepath.Join(b.TempDir(), "bench.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu := time.Now(), cpuTime()
		sum, err := Files(ctx, db, ins, Options{Format: "auto"})
		elapsed, cpu := time.Since(start), cpuTime()-cpu
		b.StopTimer()
		if err != nil || sum.Added != benchOSUFiles {
			b.Fatalf("ingest: %v, %+v", err, sum)
		}
		b.ReportMetric(float64(benchOSUFiles)/elapsed.Seconds(), "files/s")
		rate := float64(benchOSUFiles*25) / elapsed.Seconds()
		b.ReportMetric(rate, "samples/s")
		b.ReportMetric(cpu.Seconds()*1e6/(benchOSUFiles*25), "cpu-µs/sample")
		if plain > 0 {
			b.ReportMetric(rate/plain, "x-plain")
		}
		db.Close()
	}
}

// cpuTime is the CPU time this process has used, user and system: on a
// machine other work shares, what a rate is made of when its wall time is
// not to be trusted.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// storedBundles is, for each file, the bundle's JSON that ingest stores
// for it (2,875 bytes for these files): the bundles row of "the same
// rows". Until this was used the plain inserts stored a 700-byte stand-in
// (the file's raw text alone), a quarter of the bytes ingest writes there.
func storedBundles(b *testing.B, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		runs, err := parsers.Parse(p, "auto", data)
		if err != nil || len(runs) != 1 {
			b.Fatalf("%s: %d runs, %v", p, len(runs), err)
		}
		js, err := json.Marshal(runs[0])
		if err != nil {
			b.Fatal(err)
		}
		out[i] = string(js)
	}
	return out
}

// benchPlainInserts writes the rows of the OSU files with bare prepared
// INSERTs, in one transaction or in one per file, and returns the last
// rate in samples/s.
func benchPlainInserts(b *testing.B, ctx context.Context, perFile bool, bundles []string) float64 {
	var rate float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "plain.db")
		s, err := store.Open(path) // the same schema, made by the same migrations
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=30000")
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		runSt, err1 := db.Prepare(`INSERT INTO runs (hash, campaign, variant, benchmark, kind, kernel, launcher, tool, tool_version,
			status, error, job_id, step, array_index, tasks, tasks_per_node, runner_version, source, origin, ingested_at)
			VALUES (?, '', '', 'osu_latency', 'tool', 'osu', '', 'osu_latency', '7.5', 'ok', '', '', '', '', 0, '', '', ?, '', ?)`)
		bundleSt, err2 := db.Prepare(`INSERT INTO bundles (run_id, encoding, data) VALUES (?, 'json', ?)`)
		sampleSt, err3 := db.Prepare(`INSERT INTO samples (run_id, seq, metric, unit, x, x_unit, value, iterations, repeat) VALUES (?, ?, 'latency', 'us', ?, 'bytes', ?, 0, 0)`)
		if err1 != nil || err2 != nil || err3 != nil {
			b.Fatal(err1, err2, err3)
		}
		now := time.Now().UTC().Format(time.RFC3339Nano)
		b.StartTimer()
		start, cpu := time.Now(), cpuTime()
		var tx *sql.Tx
		for f := 0; f < benchOSUFiles; f++ {
			if tx == nil {
				var err error
				if tx, err = db.BeginTx(ctx, nil); err != nil {
					b.Fatal(err)
				}
			}
			r, err := tx.Stmt(runSt).ExecContext(ctx, fmt.Sprintf("%064d", f), fmt.Sprintf("osu_latency-%05d.txt", f), now)
			if err != nil {
				b.Fatal(err)
			}
			id, _ := r.LastInsertId()
			if _, err := tx.Stmt(bundleSt).ExecContext(ctx, id, bundles[f]); err != nil {
				b.Fatal(err)
			}
			ss := tx.Stmt(sampleSt)
			x := 0.0
			for seq := 0; seq < 25; seq++ {
				if _, err := ss.ExecContext(ctx, id, seq, x, 1.5+x/1e3); err != nil {
					b.Fatal(err)
				}
				if x == 0 {
					x = 1
				} else {
					x *= 2
				}
			}
			if perFile || f == benchOSUFiles-1 {
				if err := tx.Commit(); err != nil {
					b.Fatal(err)
				}
				tx = nil
			}
		}
		elapsed, cpu := time.Since(start), cpuTime()-cpu
		b.StopTimer()
		b.ReportMetric(float64(benchOSUFiles)/elapsed.Seconds(), "files/s")
		rate = float64(benchOSUFiles*25) / elapsed.Seconds()
		b.ReportMetric(rate, "samples/s")
		b.ReportMetric(cpu.Seconds()*1e6/(benchOSUFiles*25), "cpu-µs/sample")
		db.Close()
	}
	return rate
}
