package parsers

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
)

// sockperf (Mellanox/NVIDIA) prints its client results as "sockperf: "
// lines, coloured with ANSI escapes whether or not the output is a
// terminal. Latency modes (ping-pong, under-load) print, per server:
//
//	sockperf: [Valid Duration] RunTime=2.550 sec; SentMessages=129081; ReceivedMessages=129081
//	sockperf: ====> avg-latency=9.868 (std-dev=24.817)
//	sockperf: # dropped messages = 0; # duplicated messages = 0; # out-of-order messages = 0
//	sockperf: Summary: Latency is 9.868 usec
//	sockperf: Total 129081 observations; each percentile contains 1290.81 observations
//	sockperf: ---> <MAX> observation = 2621.842
//	sockperf: ---> percentile 99.999 = 2424.526
//	…
//	sockperf: ---> <MIN> observation =    8.059
//
// "latency" is half the round trip, as sockperf computes it; --full-rtt
// prints avg-rtt and "Round trip is", read as metric "rtt". Older releases
// print "avg-lat=" and "dropped packets"; both are read. Throughput mode
// prints a message rate and "BandWidth is 4.597 MBps (36.780 Mbps)", where
// MBps is 2^20 bytes/s (3275 msg/s × 1472 B = 4.597 × 2^20 B/s).
//
// The message size is not printed by the latency modes; it is x only when
// the output states it (a "test was performed using the following
// parameters: … --msg-size=N" line, or throughput's msg-size note).

func init() {
	Register(Format{
		Name:  "sockperf",
		Tools: "sockperf 2.x-3.x client output: ping-pong / under-load latency (with or without --full-rtt), throughput",
		Sniff: sniffSockperf,
		Parse: ParseSockperf,
	})
}

// SockperfTool is Benchmark.Tool of every sockperf run.
const SockperfTool = "sockperf"

var (
	// With or without the escape byte: a web page drops it and keeps "[0m".
	spANSIRE     = LazyRegexp("\x1b\\[[0-9;]*m|\\[[0-9;]+m")
	spVersionRE  = LazyRegexp(`^== version #(\S*)\s*==$`)
	spTargetRE   = LazyRegexp(`^\[\s*\d+\]\s*IP\s*=\s*(\S+)\s+PORT\s*=\s*(\d+)\s*#\s*(\w+)$`)
	spTotalRunRE = LazyRegexp(`^\[(?:Total Run|including warmup)\] RunTime=(\S+) sec;(?: Warm up time=(\d+) msec;)? SentMessages=(\d+); ReceivedMessages=(\d+)$`)
	spServerRE   = LazyRegexp(`^=+ Printing statistics for Server No: (\d+)$`)
	spValidRE    = LazyRegexp(`^\[Valid Duration\] RunTime=(\S+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)$`)
	spAvgRE      = LazyRegexp(`^=+> avg-(lat|latency|rtt)=\s*(\S+?)(?:\s*\((.*)\))?$`)
	// 3.8 adds more statistics after std-dev: "mean-ad=240.040, …, cv=0.223,
	// std-error=1.302, 99.0% ci=[1889.246, 1895.954]".
	spStatRE      = LazyRegexp(`([0-9.]+% ci|[a-z][a-z-]*)=\s*(\[[^\]]*\]|[^,\s]+)`)
	spDropRE      = LazyRegexp(`^# dropped (?:messages|packets) = (\d+); # duplicated (?:messages|packets) = (\d+); # out-of-order (?:messages|packets) = (\d+)$`)
	spSummaryRE   = LazyRegexp(`^Summary: (?:Latency|Round trip) is (\S+) usec$`)
	spObsRE       = LazyRegexp(`^Total (\d+) observations(?:; each percentile contains (\S+) observations)?$`)
	spMinMaxRE    = LazyRegexp(`^-+> <?(MAX|MIN)>? observation =\s*(\S+)$`)
	spPctRE       = LazyRegexp(`^-+> percentile\s+(\S+)\s*=\s*(\S+)$`)
	spSentRE      = LazyRegexp(`^Total of (\d+) messages sent in (\S+) sec$`)
	spRateRE      = LazyRegexp(`^Summary: Message Rate is (\d+) \[msg/sec\](?:, Packet Rate is about (\d+) \[pkt/sec\] \((\d+) ip frags / msg\))?$`)
	spBandwidthRE = LazyRegexp(`^Summary: BandWidth is (\S+) MBps \((\S+) Mbps\)$`)
	spMsgNoteRE   = LazyRegexp(`^NOTE: test was performed, using msg-size=(\d+)\.`)
	spParamsRE    = LazyRegexp(`test was performed using the following parameters:\s*(.*)$`)
	// Lines that start like a result: they must parse.
	spResultLikeRE = LazyRegexp(`^(?:-+> (?:percentile|<?MAX|<?MIN)|=+> avg-|Summary: (?:Latency|Round trip|Message Rate|BandWidth) is|\[Valid Duration\]|Total \d+ observations|# dropped )`)
)

// spStats is one server's latency statistics.
type spStats struct {
	line        int
	server      string
	metric      string // latency or rtt
	avg, stddev float64
	hasStd      bool
	min, max    *float64
	pct         [][2]float64 // percentile, value, as printed
	obs         int64
	valid       []string // [Valid Duration] runtime, sent, received
	drops       []string // dropped, duplicated, out-of-order
	extra       []spExtra
	ciLevel     string
}

// spExtra is one more statistic of 3.8's average line.
type spExtra struct {
	name, unit string
	v          float64
}

// spRun is one sockperf run, from its version banner.
type spRun struct {
	line       int
	version    string
	params     map[string]string
	msgSize    int64 // 0 if not stated
	stats      []*spStats
	cur        *spStats
	rate       *[3]string // msg/s, pkt/s, frags
	bandwidth  *float64   // MBps as printed
	sent       []string   // throughput: messages, seconds
	failure    string
	failLine   int
	noObs      int // "No valid observations found."
	broken     bool
	hasContent bool
}

func (run *spRun) param(k, v string) { run.params = setParam(run.params, k, v) }

// SockperfReader reads sockperf client output one run at a time, as a
// Reader: Scan, Result (a *Run or a *SyntaxError), Err.
type SockperfReader struct {
	records
	run *spRun
}

// NewSockperfReader reads sockperf output from r; name is used in errors.
func NewSockperfReader(name string, r io.Reader) *SockperfReader {
	rd := &SockperfReader{run: &spRun{line: 1}}
	rd.sc = NewScanner(name, r, rd.line, rd.finishRun)
	return rd
}

// ParseSockperf collects a SockperfReader of r: its runs, or its syntax errors.
func ParseSockperf(name string, r io.Reader) ([]*results.Bundle, error) {
	return Collect(NewSockperfReader(name, r))
}

func sniffSockperf(head []byte) int {
	if !bytes.Contains(head, []byte("sockperf")) { // every line it prints starts so
		return 0
	}
	score := 0
	for _, l := range strings.Split(string(head), "\n") {
		t, ok := spStrip(l)
		if !ok {
			continue
		}
		switch {
		case spAvgRE.MatchString(t), spRateRE.MatchString(t), spPctRE.MatchString(t):
			return 90
		case spVersionRE.MatchString(t):
			score = 70
		case score < 40:
			score = 40
		}
	}
	return score
}

// spStrip removes colour and the "sockperf: " prefix; ok is false for a
// line that is not sockperf's.
func spStrip(line string) (string, bool) {
	t := strings.TrimSpace(spANSIRE.ReplaceAllString(line, ""))
	rest, ok := strings.CutPrefix(t, "sockperf:")
	if !ok {
		if spTargetRE.MatchString(t) {
			return t, true // "[ 0] IP = … PORT = …" has no prefix
		}
		return t, false
	}
	return strings.TrimSpace(rest), true
}

func (r *SockperfReader) errorf(line int, format string, args ...any) {
	r.run.broken = true
	r.sc.Errorf(line, format, args...)
}

func (r *SockperfReader) line(text string) {
	n := r.sc.Lines().Line()
	t, ok := spStrip(text)
	if !ok {
		if m := spParamsRE.FindStringSubmatch(t); m != nil {
			r.params(m[1])
		}
		return // chatter: prompts, the server's lines, launcher messages
	}
	run := r.run
	if m := spVersionRE.FindStringSubmatch(t); m != nil {
		if run.hasContent {
			r.finishRun()
			run = r.run
		}
		run.line, run.version = n, m[1]
		return
	}
	num := func(s string) (float64, bool) {
		v, ok := Number(s)
		if !ok || v < 0 {
			r.errorf(n, "sockperf: %q in %q is not a number", s, t)
		}
		return v, ok && v >= 0
	}
	var m []string
	switch {
	case strings.HasPrefix(t, "ERROR:") || strings.HasPrefix(t, "ERROR "):
		if run.failure == "" {
			run.failure, run.failLine = t, n
		}
		run.hasContent = true
	case strings.HasPrefix(t, "No valid observations found"):
		run.noObs = n
		run.hasContent = true
	case matches(spTargetRE, t, &m):
		if run.params["ip"] == "" {
			run.param("ip", m[1])
			run.param("port", m[2])
			run.param("protocol", m[3])
		} else {
			k, _ := strconv.Atoi(run.params["targets"])
			run.param("targets", strconv.Itoa(max(k, 1)+1))
		}
	case matches(spTotalRunRE, t, &m):
		if m[2] != "" {
			run.param("warmup_ms", m[2])
		}
	case matches(spServerRE, t, &m):
		r.closeStats(n)
		run.cur = &spStats{line: n, server: m[1]}
		run.hasContent = true
	case r.statLine(n, t, num):
	case matches(spSentRE, t, &m):
		if _, ok := num(m[2]); ok {
			run.sent = m[1:]
			run.hasContent = true
		}
	case matches(spRateRE, t, &m):
		run.rate = &[3]string{m[1], m[2], m[3]}
		run.hasContent = true
	case matches(spBandwidthRE, t, &m):
		v, ok := num(m[1])
		if _, ok2 := num(m[2]); ok && ok2 {
			run.bandwidth = results.F(v)
			run.hasContent = true
		}
	case matches(spMsgNoteRE, t, &m):
		v, _ := Integer(m[1])
		run.msgSize = v
		run.param("msg_size_bytes", strconv.FormatInt(v, 10))
	case spResultLikeRE.MatchString(t):
		r.errorf(n, "sockperf result line does not parse: %q", t)
	default:
		if m := spParamsRE.FindStringSubmatch(t); m != nil {
			r.params(m[1])
		}
	}
}

// statLine reads a line of a server's statistics (valid duration,
// average, drops, observations, min/max, percentiles); false for any
// other line. num reads a figure, saying what is wrong with it.
func (r *SockperfReader) statLine(n int, t string, num func(string) (float64, bool)) bool {
	var m []string
	switch {
	case matches(spValidRE, t, &m):
		if _, ok := num(m[1]); ok {
			r.stats(n).valid = m[1:]
		}
	case matches(spAvgRE, t, &m):
		st := r.stats(n)
		st.metric = map[string]string{"lat": "latency", "latency": "latency", "rtt": "rtt"}[m[1]]
		v, ok := num(m[2])
		st.avg = v
		if ok && m[3] != "" {
			r.spread(n, st, m[3])
		}
	case matches(spDropRE, t, &m):
		r.stats(n).drops = m[1:]
	case matches(spSummaryRE, t, &m):
		num(m[1]) // the average again
	case matches(spObsRE, t, &m):
		v, ok := Integer(m[1])
		if !ok {
			r.errorf(n, "sockperf: observation count %q does not parse", m[1])
			return true
		}
		r.stats(n).obs = v
	case matches(spMinMaxRE, t, &m):
		v, ok := num(m[2])
		if !ok {
			return true
		}
		st := r.stats(n)
		if m[1] == "MAX" {
			st.max = results.F(v)
		} else {
			st.min = results.F(v)
		}
	case matches(spPctRE, t, &m):
		p, ok1 := num(m[1])
		v, ok2 := num(m[2])
		if ok1 && ok2 {
			st := r.stats(n)
			st.pct = append(st.pct, [2]float64{p, v})
		}
	default:
		return false
	}
	return true
}

// spread reads the statistics of spread in parentheses after the average:
// std-dev, mean-ad, median-ad, siqr, cv, std-error and the confidence
// interval.
func (r *SockperfReader) spread(n int, st *spStats, s string) {
	for _, kv := range spStatRE.FindAllStringSubmatch(s, -1) {
		k, v := kv[1], kv[2]
		if strings.HasSuffix(k, "% ci") {
			lo, hi, ok := strings.Cut(strings.Trim(v, "[]"), ",")
			l, ok1 := Number(strings.TrimSpace(lo))
			h, ok2 := Number(strings.TrimSpace(hi))
			if !ok || !ok1 || !ok2 {
				r.errorf(n, "sockperf: confidence interval %q does not parse", v)
				return
			}
			st.extra = append(st.extra, spExtra{"ci_low", results.UnitMicroseconds, l}, spExtra{"ci_high", results.UnitMicroseconds, h})
			st.ciLevel = strings.TrimSuffix(k, " ci")
			continue
		}
		x, ok := Number(v)
		if !ok {
			r.errorf(n, "sockperf: %s=%q is not a number", k, v)
			return
		}
		switch k {
		case "std-dev":
			st.stddev, st.hasStd = x, true
		case "cv":
			st.extra = append(st.extra, spExtra{"cv", "", x})
		default:
			st.extra = append(st.extra, spExtra{strings.ReplaceAll(k, "-", "_"), results.UnitMicroseconds, x})
		}
	}
}

// params reads "--mps=400 --burst=1 --msg-size=64 --time=10".
func (r *SockperfReader) params(s string) {
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if !ok || k == "" || strings.HasPrefix(f, "---") {
			continue
		}
		k = strings.ReplaceAll(k, "-", "_")
		if k == "msg_size" {
			if b, ok := Integer(v); ok {
				r.run.msgSize = b
				k = "msg_size_bytes"
			}
		}
		r.run.param(k, v)
	}
}

// stats is the statistics block being read; sockperf 2.x prints no
// "Printing statistics for Server No" line, so one may start implicitly.
func (r *SockperfReader) stats(n int) *spStats {
	if r.run.cur == nil {
		r.run.cur = &spStats{line: n, server: "0"}
	}
	r.run.hasContent = true
	return r.run.cur
}

// closeStats checks that the block being read is whole.
func (r *SockperfReader) closeStats(n int) {
	st := r.run.cur
	if st == nil {
		return
	}
	r.run.cur = nil
	if st.metric == "" && st.min == nil && st.max == nil && len(st.pct) == 0 {
		if st.valid != nil || st.drops != nil || st.obs > 0 {
			r.errorf(n, "sockperf statistics of server %s (line %d) are cut short: no average latency", st.server, st.line)
		}
		return
	}
	if st.metric == "" || st.min == nil || st.max == nil {
		r.errorf(n, "sockperf statistics of server %s (line %d) are cut short: the average, <MAX> or <MIN> line is missing", st.server, st.line)
		return
	}
	r.run.stats = append(r.run.stats, st)
}

func (r *SockperfReader) finishRun() {
	n := r.sc.Lines().Line() + 1
	r.closeStats(n)
	run := r.run
	r.run = &spRun{line: n}
	if !run.hasContent || run.broken {
		return
	}
	if len(run.stats) == 0 && run.rate == nil && run.bandwidth == nil {
		switch {
		case run.failure != "":
			r.errorf(run.failLine, "no sockperf results: sockperf failed: %s", run.failure)
		case run.noObs > 0:
			r.errorf(run.noObs, "no sockperf results: no valid observations (the test was too short, or no reply came back)")
		case run.sent != nil:
			r.errorf(n, "sockperf throughput run is cut short: no \"Summary:\" line")
		}
		return
	}
	if (run.rate == nil) != (run.bandwidth == nil) {
		r.errorf(n, "sockperf throughput run is cut short: message rate or bandwidth missing")
		return
	}
	r.sc.Emit(run.line, run.bundle())
}

// spPctName names a percentile kept as a scalar (50 and 99 are the
// sample's P50 and P99): latency_p99_999.
func spPctName(metric string, p float64) string {
	s := strconv.FormatFloat(p, 'f', -1, 64)
	return metric + "_p" + strings.ReplaceAll(s, ".", "_")
}

func (run *spRun) bundle() *results.Bundle {
	b := results.New()
	b.Benchmark = results.Benchmark{Name: "sockperf latency", Tool: SockperfTool, ToolVersion: run.version}
	if len(run.stats) == 0 {
		b.Benchmark.Name = "sockperf throughput"
	}
	b.Benchmark.ToolBenchmark = b.Benchmark.Name
	b.Params = maps.Clone(run.params)
	var x *float64
	xUnit := ""
	if run.msgSize > 0 {
		x, xUnit = results.F(float64(run.msgSize)), results.UnitBytes
	}
	for _, st := range run.stats {
		suffix := ""
		var tags map[string]string
		if len(run.stats) > 1 {
			suffix = "_server" + st.server
			tags = map[string]string{"server": st.server}
		}
		s := results.Sample{Metric: st.metric, Unit: results.UnitMicroseconds, X: x, XUnit: xUnit, Value: st.avg,
			Min: st.min, Max: st.max, Iterations: int(st.obs), Tags: tags}
		scalar := func(name, unit string, v float64) {
			b.Scalars = append(b.Scalars, results.Scalar{Name: name + suffix, Unit: unit, Value: v})
		}
		for _, pv := range st.pct {
			switch pv[0] {
			case 50:
				s.P50 = results.F(pv[1])
			case 99:
				s.P99 = results.F(pv[1])
			default:
				scalar(spPctName(st.metric, pv[0]), results.UnitMicroseconds, pv[1])
			}
		}
		b.Samples = append(b.Samples, s)
		if st.hasStd {
			scalar(st.metric+"_stddev", results.UnitMicroseconds, st.stddev)
		}
		for _, e := range st.extra {
			scalar(st.metric+"_"+e.name, e.unit, e.v)
		}
		if st.ciLevel != "" {
			b.Params = setParam(b.Params, "ci_level", st.ciLevel)
		}
		if st.valid != nil {
			v, _ := Number(st.valid[0])
			scalar("valid_duration", "s", v)
			for i, name := range []string{"sent_messages", "received_messages"} {
				c, _ := Integer(st.valid[i+1])
				scalar(name, "messages", float64(c))
			}
		}
		for i, name := range []string{"dropped_messages", "duplicated_messages", "out_of_order_messages"} {
			if st.drops != nil {
				c, _ := Integer(st.drops[i])
				scalar(name, "messages", float64(c))
			}
		}
	}
	if run.rate != nil {
		rate, _ := Integer(run.rate[0])
		b.Samples = append(b.Samples, results.Sample{Metric: "message_rate", Unit: "msg/s", X: x, XUnit: xUnit, Value: float64(rate)})
		if pkt, ok := Integer(run.rate[1]); ok {
			b.Samples = append(b.Samples, results.Sample{Metric: "packet_rate", Unit: "pkt/s", X: x, XUnit: xUnit, Value: float64(pkt)})
			b.Params = setParam(b.Params, "ip_fragments_per_message", run.rate[2])
		}
		mib := *run.bandwidth
		b.Samples = append(b.Samples,
			results.Sample{Metric: "bandwidth", Unit: results.UnitMBps, X: x, XUnit: xUnit, Value: mib * (1 << 20) / 1e6},
			results.Sample{Metric: "bandwidth_mibps", Unit: "MiB/s", X: x, XUnit: xUnit, Value: mib})
		if run.sent != nil {
			c, _ := Integer(run.sent[0])
			s, _ := Number(run.sent[1])
			b.Scalars = append(b.Scalars, results.Scalar{Name: "sent_messages", Unit: "messages", Value: float64(c)},
				results.Scalar{Name: "time", Unit: "s", Value: s})
		}
	}
	if run.failure != "" {
		b.Status = results.StatusFailed
		b.Error = fmt.Sprintf("line %d: sockperf: %s", run.failLine, run.failure)
	}
	return b
}
