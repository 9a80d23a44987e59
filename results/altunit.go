package results

import "strings"

// altUnitSuffixes end the names of metrics that carry a tool's figure in
// the tool's own unit. A primary metric is named for the quantity it
// measures (bandwidth, message_rate); its copy adds the unit it was printed
// in (bandwidth_mbps, message_rate_mpps), or the tool, where the unit's
// name is ambiguous (IMB's "Mbytes/sec" is 10^6 or 2^20 bytes depending on
// the version: bandwidth_imb).
var altUnitSuffixes = map[string]bool{
	"bps": true, "kbps": true, "mbps": true, "gbps": true, // bits/s (iperf3, NetPIPE)
	"kibps": true, "mibps": true, "gibps": true, // binary bytes/s (perf_main, sockperf, NetPIPE -MB)
	"pps": true, "kpps": true, "mpps": true, // packets or messages/s (perftest's MsgRate)
	"imb": true, // IMB's own Mbytes/sec
}

// AltUnitMetric reports whether metric repeats another metric of the same
// run in the tool's own unit; views draw and judge the normalised one only.
//
// Parsers normalise units so that curves from different tools can be drawn
// together (MB/s = 10^6 bytes/s, µs, messages/s) and keep the figure the
// tool printed beside it, so that a reader can check it against the
// original output. One measured quantity must still make one figure and
// one verdict line: every view (report, compare, history, export summaries)
// skips a metric for which AltUnitMetric is true. Its primary twin is the
// same name without its last "_" part, with the same x values and tags:
//
//	bandwidth_mbps           NetPIPE's Mbps                       → bandwidth
//	bandwidth_mibps          MiB/s of perf_main, sockperf and     → bandwidth
//	                         NetPIPE -MB (MBps)
//	bandwidth_imb            IMB's Mbytes/sec                     → bandwidth
//	bandwidth_avg            perftest's BW average (MiB/s, Gb/s)  → bandwidth
//	bandwidth_peak           perftest's BW peak (MiB/s, Gb/s)     → bandwidth's Max
//	bandwidth_portN_avg      perftest's dual-port BW              → bandwidth_portN
//	message_rate_mpps        perftest's MsgRate in Mpps           → message_rate
//	message_rate_portN_mpps  perftest's dual-port MsgRate         → message_rate_portN
//	bandwidth_bps            iperf3's bits_per_second             → bandwidth
//	sent_bandwidth_bps       the sender's bits_per_second         → sent_bandwidth
//
// In general: a name ending in a unit (_bps, _kbps, _mbps, _gbps, _kibps,
// _mibps, _gibps, _pps, _kpps, _mpps) or in _imb, and a bandwidth… name
// ending in _avg or _peak (perftest's column names, kept as archived).
// Case is ignored. Names are recognised rather than renamed so that runs
// already in an archive are judged like new ones.
func AltUnitMetric(metric string) bool {
	m := strings.ToLower(metric)
	i := strings.LastIndexByte(m, '_')
	if i <= 0 {
		return false // no twin to repeat: the name is all there is
	}
	base, suffix := m[:i], m[i+1:]
	if altUnitSuffixes[suffix] {
		return true
	}
	// perftest prints "BW average" and "BW peak" in MiB/s or Gb/s; the
	// average becomes bandwidth in MB/s and the peak its Max. An average or
	// peak of any other quantity is a figure of its own.
	return (suffix == "avg" || suffix == "peak") && strings.HasPrefix(base, "bandwidth")
}
