package kernels

import "strings"

// The kernels a screening runs (package screen), by their names in Table.
const (
	KernelMatrix = "matrix"
	KernelStream = "stream"
	KernelHPL    = "hpl"
)

// The metrics the screening judges, as the runner writes them: the matrix
// kernel's first pass and the re-test passes of the pairs it found
// suspect, and the per-node figures of the stream and hpl kernels.
const (
	MetricMatrixLatency         = "matrix_latency"
	MetricMatrixBandwidth       = "matrix_bandwidth"
	MetricMatrixRetestLatency   = "matrix_retest_latency"
	MetricMatrixRetestBandwidth = "matrix_retest_bandwidth"
	MetricNodeStreamTriad       = "node_stream_triad"
	MetricNodeHPLGflops         = "node_hpl_gflops"
)

// MatrixMetric reports whether metric is one of the matrix kernel's, and
// whether it is a re-test pass's.
func MatrixMetric(metric string) (matrix, retest bool) {
	return strings.HasPrefix(metric, "matrix_"), strings.HasPrefix(metric, "matrix_retest_")
}
