package results

import "strings"

// descriptiveParams are parameters that describe a run without configuring
// it: a repetition's number, when and where a tool says it ran, a tool's
// own version strings, notes on how its numbers were printed. Two runs
// that differ only in these are repeats of one configuration.
var descriptiveParams = map[string]bool{
	// The runner's repetition index (--repeat): it only numbers a run.
	"repeat": true,
	// IMB's header: when, where and with what it ran.
	"date": true, "machine": true, "system": true, "release": true,
	"kernel_version": true, "mpi_version": true, "mpi_thread_environment": true,
	"calling_sequence": true, "min_message_length": true, "max_message_length": true,
	"message_lengths": true, "failed_sizes": true, "imb_mbyte": true, "imb_mbyte_basis": true,
	// IMB: ranks that wait while a subset measures follow from
	// "processes", which is the setting.
	"additional_processes": true,
	// HPL/HPCC: versions, the machine epsilon and residual threshold it
	// printed, when the solve started and ended, tests HPCC did not run,
	// which timer it used, the language HPCC was built in.
	"hpl_version": true, "eps": true, "threshold": true,
	"pdgesv_start": true, "pdgesv_end": true, "not_measured": true,
	"timer": true, "VersionRelease": true, "LANG": true,
	// perftest: which of its columns became the latency, how it labelled
	// its bandwidth unit, and the queue pairs' addresses of this run.
	"latency_value": true, "bandwidth_unit_note": true,
	"local_address": true, "remote_address": true, "local_gid": true, "remote_gid": true,
	// perf_main: the CPU clock and architecture it printed.
	"cpu_mcps": true, "arch": true,
	// NetPIPE: where the output went, and the hosts it names (the
	// run's hosts are its provenance, not its configuration).
	"output_file": true, "source": true, "rank0_host": true, "rank1_host": true,
	// OSU: the benchmark's title line, which carries the OSU version.
	"title": true,
	// iperf3: the default MSS it reports.
	"tcp_mss_default_bytes": true,
}

// descriptiveToolParams are descriptive for one tool only: the TCP
// endpoints of iperf3 and sockperf (an ephemeral port, an address) differ
// from run to run, while perf_main's "port" is the HCA port it measured.
var descriptiveToolParams = map[string]map[string]bool{
	"iperf3":   {"port": true, "client": true, "server": true},
	"sockperf": {"port": true, "ip": true},
}

// hplTools are the tools whose "test" parameter is HPL's row number: the
// T/V row's settings (N, NB, P, Q, the variant code) are parameters of
// their own, so the position of a row in HPL.dat's list only numbers it.
// perftest and perf_main name their test in "test", which configures.
var hplTools = map[string]bool{"xhpl": true, "hpcc": true, "hpl": true}

// DescriptiveParam reports whether a run parameter describes the run
// rather than configures it, for runs of tool (the bundle's
// Benchmark.Tool, "" for native kernels). Every view that tells
// configurations apart — compare, history, report, export — leaves
// descriptive parameters out, so that repeats of one configuration are
// pooled. HPL's lists of values ("N.list") are descriptive: each run
// states its own value under the plain key.
func DescriptiveParam(tool, key string) bool {
	if descriptiveParams[key] || strings.HasSuffix(key, ".list") {
		return true
	}
	t := strings.ToLower(tool)
	return descriptiveToolParams[t][key] || key == "test" && hplTools[t]
}

// descriptiveTags number or describe a sample rather than identify what
// it measured: the round of disjoint pairs a node pair was measured in
// and the schedule of those rounds (the matrix kernel), the pass of a
// re-test. Two samples that differ only in these are repeats of one
// measurement.
var descriptiveTags = map[string]bool{"round": true, "schedule": true, "pass": true}

// pairTags name the node pair a sample measured: its nodes (from, to) and
// their placement (intra- or inter-node). Sample.Pair holds the ranks.
var pairTags = map[string]bool{"from": true, "to": true, "placement": true}

// DescriptiveTag reports whether a sample tag only numbers or describes
// the sample (a matrix round, a re-test pass): never part of a
// configuration, a compare row or a figure's line.
func DescriptiveTag(key string) bool { return descriptiveTags[key] }

// PairTag reports whether a sample tag names the node pair it measured
// (from, to, placement): samples that differ only in their pair are the
// rows of one table (compare) or the cells of one heatmap, not tables of
// their own.
func PairTag(key string) bool { return pairTags[key] }
