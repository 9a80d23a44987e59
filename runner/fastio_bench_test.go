package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// BenchmarkPingPong is the latency kernel's inner loop over loopback TCP,
// both ends in this process: one op is a round trip, us/one-way half of
// it, as the kernel reports. "net" is Go's own I/O (Read and Write
// through the poller), which the link used before fastConn; on two cores the ends of "spin" busy-poll one
// core each.
//
//	go test -run '^$' -bench PingPong -benchtime 20000x ./runner/
func BenchmarkPingPong(b *testing.B) {
	for _, mode := range []string{"net", PollSpin, PollBlock} {
		for _, size := range []int{1, 4096, 65536} {
			b.Run(fmt.Sprintf("%s/size=%d", mode, size), func(b *testing.B) {
				a, z := tcpPair(b)
				ctx := context.Background()
				linkMode := mode
				if mode == "net" {
					linkMode = PollSpin
				}
				done := make(chan error, 1)
				ready := make(chan struct{})
				go func() {
					// The echoing end, set up in its own goroutine: block
					// mode binds it to its thread.
					l := testLink(b, ctx, z, linkMode, time.Minute)
					defer l.close()
					if mode == "net" {
						l.fast = nil
					}
					close(ready)
					buf := make([]byte, size)
					for i := 0; i < b.N; i++ {
						l.refresh(time.Now())
						if err := l.read(buf); err != nil {
							done <- err
							return
						}
						if err := l.write(buf); err != nil {
							done <- err
							return
						}
					}
					done <- nil
				}()
				<-ready
				l := testLink(b, ctx, a, linkMode, time.Minute)
				defer l.close()
				if mode == "net" {
					l.fast = nil
				}
				msg, buf := make([]byte, size), make([]byte, size)
				b.SetBytes(int64(2 * size))
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					l.refresh(time.Now())
					if err := l.write(msg); err != nil {
						b.Fatal(err)
					}
					if err := l.read(buf); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2/1e3, "us/one-way")
			})
		}
	}
}

// BenchmarkKernelLatency runs the latency kernel as it runs for real: two
// sbench-runner processes on 127.0.0.1, started by LocalStep, b.N timed
// iterations. ns/op (a round trip), us/one-way (the mean) and p50-us are
// the kernel's own figures from the bundle, not the benchmark's wall
// clock, which includes starting the processes.
//
//	go test -run '^$' -bench KernelLatency -benchtime 20000x ./runner/
func BenchmarkKernelLatency(b *testing.B) {
	bin := benchRunnerBinary(b)
	for _, poll := range []string{PollSpin, PollBlock} {
		for _, size := range []int{1, 4096} {
			b.Run(fmt.Sprintf("%s/size=%d", poll, size), func(b *testing.B) {
				v := kernelSample(b, bin, "latency", "sizes="+fmt.Sprint(size), "iterations="+fmt.Sprint(b.N), "poll="+poll)
				b.ReportMetric(2*v.Value*1e3, "ns/op")
				b.ReportMetric(v.Value, "us/one-way")
				b.ReportMetric(*v.P50, "p50-us")
			})
		}
	}
}

// BenchmarkKernelBandwidth is BenchmarkKernelLatency for the bw kernel at
// 4 MiB: b.N windows of 8 messages; MB/s is the bundle's figure (osu_bw's
// count) and ns/op a window's time at that rate.
//
//	go test -run '^$' -bench KernelBandwidth -benchtime 100x ./runner/
func BenchmarkKernelBandwidth(b *testing.B) {
	bin := benchRunnerBinary(b)
	for _, poll := range []string{PollSpin, PollBlock} {
		b.Run(poll+"/size=4194304", func(b *testing.B) {
			const size, window = 4 << 20, 8
			v := kernelSample(b, bin, "bw", "sizes=4M", "window=8", "iterations="+fmt.Sprint(b.N), "poll="+poll)
			b.ReportMetric(v.Value, "MB/s")
			b.ReportMetric(size*window/v.Value*1e3, "ns/op")
		})
	}
}

// kernelSample runs a native kernel between two sbench-runner processes
// and returns its one sample.
func kernelSample(b *testing.B, bin, kernel string, params ...string) results.Sample {
	b.Helper()
	dir := b.TempDir()
	args := []string{"run", "--campaign", "bench", "--variant", "loopback", "--benchmark", "k", "--kernel", kernel, "--results", dir}
	for _, p := range params {
		args = append(args, "--param", p)
	}
	s := LocalStep{
		Runner: bin, Args: args,
		Nodes: []string{"local1"}, TasksPerNode: 2, JobID: fmt.Sprint(3000 + jobSeq.Add(1)), StepID: "0", JobName: "bench",
		Env: []string{"SBENCH_TOKEN=bench", "SBENCH_BIND=127.0.0.1"},
	}
	if err := s.Run(context.Background()); err != nil {
		b.Fatal(err)
	}
	bundle, err := results.ReadFile(BundlePath(dir, Identity{JobID: s.JobID, StepID: "0"}, "k"))
	if err != nil {
		b.Fatal(err)
	}
	if bundle.Status != results.StatusOK || len(bundle.Samples) != 1 {
		b.Fatalf("status %s %s, %d samples", bundle.Status, bundle.Error, len(bundle.Samples))
	}
	return bundle.Samples[0]
}
