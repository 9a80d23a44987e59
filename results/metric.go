package results

// Kind is the figure a metric is drawn in: its curve against message size
// goes in the bandwidth or the latency figure; a metric of no kind ("") is
// a figure of its own (a table, a key figure), never a curve of those.
type Kind string

const (
	KindBandwidth Kind = "bandwidth"
	KindLatency   Kind = "latency"
)

// FamilyPointToPoint is the family of the latency and bandwidth of
// point-to-point benchmarks (ping-pong, streaming, bidirectional); a
// collective's family is its operation ("allreduce"). Parsers and kernels
// declare their benchmarks' families (parsers.BenchmarkFamily,
// kernels.Kernel.Family).
const FamilyPointToPoint = "point-to-point"

// Collectives are the families of collective benchmarks: the operations
// they time, as parsers and kernels name them.
var Collectives = []string{"allgather", "allreduce", "alltoall", "barrier", "bcast", "gather", "reduce", "reduce_scatter", "scatter"}

// Metric is one row of the metric table: a metric as parsers and native
// kernels name it, the unit they write it in and the figure it is drawn
// in. Its direction is its unit's (Better).
type Metric struct {
	Name string
	Unit string
	Kind Kind
}

// Better is the direction in which the metric improves: its unit's.
func (m Metric) Better() Better { return BetterFor(m.Unit) }

// metrics is the metric table: every sample metric a parser (package
// parsers, hpl) or a native kernel (package kernels) writes, declared
// once. A parser or kernel that writes a new metric adds its row here;
// the tests of parsers and kernels fail on a metric without one. A name
// absent here (a bundle of another program) has no kind: it is drawn
// and judged on its own, never in the bandwidth or latency figure.
var metrics = rows(
	// Point-to-point and collective benchmarks: every tool's and kernel's.
	Metric{"latency", UnitMicroseconds, KindLatency},
	Metric{"bandwidth", UnitMBps, KindBandwidth},
	Metric{"bidirectional_bandwidth", UnitMBps, KindBandwidth},
	Metric{"message_rate", "messages/s", ""},
	// The tools' figures in their own units (AltUnitMetric): kept beside
	// the normalised one, drawn and judged as it.
	Metric{"bandwidth_imb", "Mbytes/sec", KindBandwidth},   // IMB
	Metric{"bandwidth_mbps", "Mbps", KindBandwidth},        // NetPIPE
	Metric{"bandwidth_mibps", "MiB/s", KindBandwidth},      // perf_main, sockperf, NetPIPE -MB
	Metric{"bandwidth_bps", "bit/s", KindBandwidth},        // iperf3
	Metric{"sent_bandwidth_bps", "bit/s", KindBandwidth},   // iperf3
	Metric{"bandwidth_avg", "MiB/s", KindBandwidth},        // perftest (MiB/s or Gb/s)
	Metric{"bandwidth_peak", "MiB/s", KindBandwidth},       // perftest
	Metric{"bandwidth_port1_avg", "MiB/s", KindBandwidth},  // perftest, dual port
	Metric{"bandwidth_port2_avg", "MiB/s", KindBandwidth},  // perftest, dual port
	Metric{"message_rate_mpps", "Mpps", ""},                // perftest
	Metric{"message_rate_port1_mpps", "Mpps", ""},          // perftest, dual port
	Metric{"message_rate_port2_mpps", "Mpps", ""},          // perftest, dual port
	Metric{"bandwidth_port1", UnitMBps, KindBandwidth},     // perftest, dual port
	Metric{"bandwidth_port2", UnitMBps, KindBandwidth},     // perftest, dual port
	Metric{"message_rate_port1", "messages/s", ""},         // perftest, dual port
	Metric{"message_rate_port2", "messages/s", ""},         // perftest, dual port
	Metric{"latency_p999", UnitMicroseconds, KindLatency},  // perftest
	Metric{"latency_stdev", UnitMicroseconds, KindLatency}, // perftest
	Metric{"transaction_rate", "Transactions/s", ""},       // perftest
	// IMB before its own rows were named as OSU's.
	Metric{"t_avg_latency", UnitMicroseconds, KindLatency},
	// Non-blocking collectives (OSU's i*, IMB-NBC).
	Metric{"latency_overlapped", UnitMicroseconds, KindLatency},
	Metric{"pure_comm_latency", UnitMicroseconds, KindLatency},
	Metric{"compute_time", UnitMicroseconds, ""},
	Metric{"cpu_time", UnitMicroseconds, ""},
	Metric{"overlap", "%", ""},
	// sockperf.
	Metric{"rtt", UnitMicroseconds, ""},
	Metric{"packet_rate", "pkt/s", ""},
	// iperf3: against the interval's end (s), not a size.
	Metric{"interval_bandwidth", UnitMBps, KindBandwidth},
	Metric{"sent_bandwidth", UnitMBps, KindBandwidth},
	Metric{"stream_bandwidth", UnitMBps, KindBandwidth},
	Metric{"jitter", "ms", ""},
	Metric{"lost_packets", "packets", ""},
	Metric{"lost_percent", "%", ""},
	Metric{"packets", "packets", ""},
	Metric{"retransmits", "count", ""},
	// Native kernels: pairs, matrix, STREAM, HPL.
	Metric{"aggregate_bandwidth", UnitMBps, KindBandwidth},
	Metric{"matrix_latency", UnitMicroseconds, KindLatency},
	Metric{"matrix_bandwidth", UnitMBps, KindBandwidth},
	Metric{"matrix_retest_latency", UnitMicroseconds, KindLatency},
	Metric{"matrix_retest_bandwidth", UnitMBps, KindBandwidth},
	Metric{"stream_copy", UnitMBps, ""},
	Metric{"stream_scale", UnitMBps, ""},
	Metric{"stream_add", UnitMBps, ""},
	Metric{"stream_triad", UnitMBps, ""},
	Metric{"node_stream_copy", UnitMBps, ""},
	Metric{"node_stream_scale", UnitMBps, ""},
	Metric{"node_stream_add", UnitMBps, ""},
	Metric{"node_stream_triad", UnitMBps, ""},
	Metric{"hpl_gflops", "Gflops", ""},
	Metric{"node_hpl_gflops", "Gflops", ""},
	Metric{"hpl_time", UnitSeconds, ""},
	Metric{"hpl_residual", "", ""},
	// A wrapped command without a parser.
	Metric{MetricWallTime, UnitSeconds, ""},
)

func rows(ms ...Metric) map[string]Metric {
	t := make(map[string]Metric, len(ms))
	for _, m := range ms {
		if _, dup := t[m.Name]; dup {
			panic("results: metric " + m.Name + " declared twice")
		}
		t[m.Name] = m
	}
	return t
}

// MetricOf is the metric table's row for name; false for a name it does
// not declare.
func MetricOf(name string) (Metric, bool) {
	m, ok := metrics[name]
	return m, ok
}

// KindOf is the figure metric is drawn in (Metric.Kind), "" for a metric
// of no kind or one the table does not declare.
func KindOf(metric string) Kind { return metrics[metric].Kind }
