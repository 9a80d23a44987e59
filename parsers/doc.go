// Package parsers turns benchmark tools' text output into result bundles:
// OSU Micro-Benchmarks, NetPIPE, IMB, perftest, iperf3, sockperf and
// perf_main, one file per tool. Every line-based one is a Reader in the
// shape of benchfmt's (Scan, Result, Err), driven by one Scanner: a record
// is a *Run or a *SyntaxError naming the file and line, launcher noise
// around the tables is skipped, and only I/O errors stop a scan. Collect
// reads a Reader to the end for Parse: the runs, or every syntax error in
// line order. hpl's xhpl reader is one more Reader.
//
// Formats register themselves (like image.RegisterFormat) with a name, a
// sniffer and a parse function; the hpl package registers HPL and HPCC the
// same way. Parse with format "auto" first splits an input into the sections
// a job script marks (++++++ NAME: START … ------ NAME: END), then sniffs
// each section and hands it to the best format. Shell scripts and the files
// sbench writes beside its results (NotToolOutput, SbenchWritten) are
// refused before any sniffer sees them: their comments name tools.
//
// Units are normalised where curves must be drawn together, keeping the
// original: OSU's MB/s stays MB/s (10^6 bytes/s); NetPIPE's Mbps becomes MB/s
// with the original figure kept as a sample of its own metric, named so
// that results.AltUnitMetric knows it for a copy (bandwidth_mbps).
//
// Each metric a parser writes has a row of results' metric table
// (results/metric.go: its unit, hence its direction, and the figure it is
// drawn in), and each benchmark it names whose latency or bandwidth
// compares with other tools' a family (family.go: point-to-point, or the
// collective it times). Adding a parser is a file here, its rows in
// family.go, and for a metric no tool wrote before a row of the metric
// table; TestEveryParsedMetricHasARow holds the real outputs of testdata
// to both. Nothing in compare or reports guesses from a name.
//
// The package imports only results: the runner, the archive and the
// command line all sit above it.
package parsers
