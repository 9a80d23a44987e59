package store

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/sbench/sbench/hpl" // registers the HPL and HPCC readers
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// configuringParams are the parameters our readers emit that configure a
// measurement: a different value is a different configuration. Every
// parameter a reader emits on a real output must be here or be
// descriptive (results.DescriptiveParam), so that a new key is a decision,
// not an accident that splits repeats or merges configurations.
var configuringParams = map[string][]string{
	"IMB":     {"datatype", "reduction_datatype", "reduction_op", "groups", "mode", "processes"},
	"NetPIPE": {"cache", "integrity_check", "mode", "module", "perturbation", "receive_buffer_bytes", "send_buffer_bytes"},
	"ib_": {"atomic_type", "connection_type", "cq_moderation", "data_ex_method", "device", "dual_port", "gid_index",
		"ibv_wr_api", "link_type", "max_inline_data", "mtu", "number_of_qps", "outstand_reads", "pcie_relax_order",
		"post_list", "rdma_cm_qps", "role", "rx_depth", "test", "transport_type", "tx_depth", "using_srq",
		"bidirectional", "multicast", "size", "iterations"},
	"iperf3": {"bidir", "blksize_bytes", "duration_s", "omit_s", "parallel", "protocol", "rcvbuf_bytes",
		"receiver_tcp_congestion", "reverse", "role", "sender_tcp_congestion", "sndbuf_bytes", "target_bitrate_bps",
		"bytes", "blocks", "tos"},
	"osu-micro-benchmarks": {"datatype", "device", "pairs", "processes", "receiver_processes", "sender_processes",
		"synchronization", "window_creation", "window_size", "send_buffer", "recv_buffer", "rank0_memory", "rank1_memory",
		"ddt_block_length", "ddt_stride"},
	"perf_main": {"direction", "port", "test", "transport"},
	"sockperf":  {"ip_fragments_per_message", "msg_size_bytes", "protocol", "warmup_ms"},
	// HPL's HPL.dat settings, each T/V row's own values (HPCC runs HPL).
	"xhpl": hplSettings,
	"hpcc": append(hplSettings, "HPL_cpfact", "HPL_crfact", "HPL_order"),
}

var hplSettings = []string{"tv", "N", "NB", "P", "Q", "PMAP", "PFACT", "NBMIN", "NDIV", "RFACT", "BCAST", "DEPTH",
	"SWAP", "L1", "U", "EQUIL", "ALIGN"}

func configuring(tool, key string) bool {
	for prefix, keys := range configuringParams {
		if strings.HasPrefix(tool, prefix) && slices.Contains(keys, key) {
			return true
		}
	}
	return false
}

// TestEveryParameterIsClassified reads every real output we keep and
// checks each parameter the readers emit is either configuring or
// descriptive.
func TestEveryParameterIsClassified(t *testing.T) {
	var dirs = []string{"../parsers/testdata", "../hpl/testdata", "../examples/articles/testdata"}
	unknown := map[string]bool{}
	files := 0
	for _, dir := range dirs {
		paths, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, path := range paths {
			data, err := os.ReadFile(path)
			if err != nil {
				continue // a directory
			}
			bundles, err := parsers.Parse(path, "auto", data)
			if err != nil {
				continue // a file no reader takes (a README, an input file)
			}
			files++
			for _, b := range bundles {
				for k := range b.Params {
					if results.DescriptiveParam(b.Benchmark.Tool, k) || configuring(b.Benchmark.Tool, k) {
						continue
					}
					r := &Run{Tool: b.Benchmark.Tool, Params: b.Params}
					if DescriptiveParamOf(r, k) {
						continue
					}
					unknown[b.Benchmark.Tool+": "+k+" (e.g. "+filepath.Base(path)+")"] = true
				}
			}
		}
	}
	if files < 40 {
		t.Fatalf("read %d files of real output, want the fixtures (≥ 40)", files)
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range unknown {
			if !yield(k) {
				return
			}
		}
	}) {
		t.Errorf("parameter not classified as configuring or descriptive: %s", k)
	}
}

func TestConfigOf(t *testing.T) {
	r := &Run{Campaign: "c", Variant: "ppn=1", Tool: "xhpl", Tasks: 4,
		Params: map[string]string{"repeat": "3", "test": "2", "N": "5000", "N.list": "5000 6000", "date": "today", "ppn": "1"},
		Labels: map[string]string{"fabric": "ib", "link_rate": "100Gbps", "rpeak": "4096", "site_profile": "alpha sha256:00"}}
	got := ConfigOf(r).String()
	want := "campaign=c,variant=ppn=1,N=5000,ppn=1,fabric=ib,processes=4"
	if got != want {
		t.Errorf("ConfigOf = %s, want %s", got, want)
	}
	// The repeat index, HPL's row number, a date: the same configuration.
	r2 := *r
	r2.Params = map[string]string{"repeat": "0", "test": "1", "N": "5000", "N.list": "5000", "date": "yesterday", "ppn": "1"}
	if ConfigOf(r).Key() != ConfigOf(&r2).Key() {
		t.Errorf("runs differing in what numbers or describes them have different configurations")
	}
	// The tool's process count wins over the step's tasks.
	r2.Params["processes"] = "2"
	if ProcessCount(&r2) != 2 || ConfigOf(r).Key() == ConfigOf(&r2).Key() {
		t.Errorf("IMB's 2-process table of a 4-task step: count %d, same configuration as 4", ProcessCount(&r2))
	}
	if v, ok := ConfigOf(&r2).Lookup("processes"); !ok || v != "2" {
		t.Errorf("Lookup(processes) = %q, %v", v, ok)
	}
}
