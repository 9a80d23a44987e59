package reports

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

func TestHostMismatchWarning(t *testing.T) {
	host := func(node, rate string) results.Host {
		return results.Host{Hostname: node, NodeName: node, CPUModel: "Xeon", Cores: 36, Kernel: "5.14",
			IB: []results.IBPort{{Device: "mlx5_0", Port: 1, State: "ACTIVE", Rate: rate, LinkLayer: "InfiniBand"}}}
	}
	runs := []store.Run{
		{ID: 1, Benchmark: "bw", Status: results.StatusOK, Hosts: []results.Host{host("n1", "100 Gb/sec (4X EDR)"), host("n2", "50 Gb/sec (2X EDR)")}},
		{ID: 2, Benchmark: "bw", Status: results.StatusOK, Hosts: []results.Host{host("n1", "100 Gb/sec (4X EDR)"), host("n3", "100 Gb/sec (4X EDR)")}},
	}
	got := hostMismatches(runs)
	want := "InfiniBand differs between the nodes of one run: mlx5_0 port 1 ACTIVE 100 Gb/sec (4X EDR) InfiniBand on n1; mlx5_0 port 1 ACTIVE 50 Gb/sec (2X EDR) InfiniBand on n2."
	if len(got) != 1 || got[0] != want {
		t.Fatalf("mismatches %q\nwant %q", got, want)
	}
	var buf bytes.Buffer
	if err := Write(&buf, Data{Runs: runs, Generated: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, buf.Bytes())
	if !strings.Contains(text, "nodes of a run are not alike") || !strings.Contains(text, "50 Gb/sec") {
		t.Errorf("report lacks the warning:\n%s", text)
	}
}

// TestMPILibraryMismatches: the MPI library a tool loaded is in the
// system table, the nodes of a run that loaded different ones differ in
// it, and a library that is not its node's launcher's MPI says so, for
// one node too; Hydra's short version of the same MPICH does not.
func TestMPILibraryMismatches(t *testing.T) {
	host := func(node, launcher, lib, path string) results.Host {
		return results.Host{Hostname: node, NodeName: node, Kernel: "6.1", MPI: launcher, MPILibrary: lib, MPILibraryPath: path}
	}
	const ompi = "/usr/lib/x86_64-linux-gnu/libmpi.so.40"
	runs := []store.Run{
		// osu_bw built on Open MPI 4.1.4 under a 4.1.5 mpirun on n1 and n2.
		{ID: 1, Benchmark: "osu", Tool: "osu_bw", Status: results.StatusOK, Hosts: []results.Host{
			host("n1", "Open MPI 4.1.5", "Open MPI 4.1.4", ompi), host("n2", "Open MPI 4.1.5", "Open MPI 4.1.4", ompi)}},
		// n4 loads another copy than n3.
		{ID: 2, Benchmark: "imb", Tool: "IMB-MPI1", Status: results.StatusOK, Hosts: []results.Host{
			host("n3", "MPICH (Hydra) 4.0", "MPICH 4.0.2", "/opt/mpich/lib/libmpich.so.12"),
			host("n4", "MPICH (Hydra) 4.0", "MPICH 4.0.2", "/home/u/mpich/lib/libmpich.so.12")}},
		// One node: the same MPI, said by the launcher and the library.
		{ID: 3, Benchmark: "osu", Tool: "osu_latency", Status: results.StatusOK, Hosts: []results.Host{
			host("n5", "Open MPI 4.1.4", "Open MPI 4.1.4", ompi)}},
		// One node: an Intel MPI tool under Open MPI's mpirun.
		{ID: 4, Benchmark: "imb", Tool: "IMB-MPI1", Status: results.StatusOK, Hosts: []results.Host{
			host("n6", "Open MPI 4.1.4", "Intel(R) MPI Library 2021.10", "/opt/intel/mpi/lib/libmpi.so.12")}},
	}
	got := hostMismatches(runs)
	want := []string{
		"MPI library differs between the nodes of one run: MPICH 4.0.2 (/home/u/mpich/lib/libmpich.so.12) on n4; MPICH 4.0.2 (/opt/mpich/lib/libmpich.so.12) on n3.",
		"The MPI library the tool loaded is not the launcher's: osu_bw loaded Open MPI 4.1.4 (" + ompi + ") where the MPI in PATH is Open MPI 4.1.5, on n[1-2].",
		"The MPI library the tool loaded is not the launcher's: IMB-MPI1 loaded Intel(R) MPI Library 2021.10 (/opt/intel/mpi/lib/libmpi.so.12) where the MPI in PATH is Open MPI 4.1.4, on n6.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("mismatches:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if f := fieldsOf(hostMismatches(runs)); strings.Join(f, ",") != "MPI library" {
		t.Errorf("fields %q", f)
	}
	var buf bytes.Buffer
	if err := Write(&buf, Data{Runs: runs, Generated: time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(pdfText(t, buf.Bytes())), " ")
	for _, w := range []string{"MPI library", "is not the launcher's", "Open MPI 4.1.5", "the nodes of a run are not alike", "a tool ran with another MPI than its launcher's"} {
		if !strings.Contains(text, w) {
			t.Errorf("report lacks %q:\n%s", w, text)
		}
	}
}

func TestSameMPI(t *testing.T) {
	for _, tt := range []struct {
		launcher, library string
		same              bool
	}{
		{"Open MPI 4.1.4", "Open MPI 4.1.4", true},
		{"Open MPI 4.1.5", "Open MPI 4.1.4", false},
		{"MPICH (Hydra) 4.0", "MPICH 4.0.2", true},
		{"MPICH (Hydra) 4.1", "MPICH 4.0.2", false},
		{"MPICH 4.0.2", "MPICH 4.0.21", false},
		{"MVAPICH2 2.3.7", "MVAPICH2 2.3.7", true},
		{"Intel(R) MPI Library for Linux* OS, Version 2021.10 Build 20230619 (id: c2e19c2f3e)", "Intel(R) MPI Library 2021.10", true},
		{"Open MPI 4.1.4", "MPICH 4.0.2", false},
		{"some mpirun 1.0", "MPICH 4.0.2", true}, // an unknown launcher: cannot tell
		{"Open MPI 4.1.4", "MPICH", true},        // no version: cannot tell
	} {
		if got := sameMPI(tt.launcher, tt.library); got != tt.same {
			t.Errorf("sameMPI(%q, %q) = %v", tt.launcher, tt.library, got)
		}
	}
}
