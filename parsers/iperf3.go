package parsers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/results"
)

// iperf3 --json (-J) writes one JSON document per run: "start" (version,
// test parameters), "intervals" (one "sum" per reporting interval, and
// "sum_bidir_reverse" with --bidir) and "end" (totals). The totals moved
// between releases, and this reader takes what each one has:
//
//   - TCP: end.sum_sent and end.sum_received in every 3.x;
//   - UDP before 3.7 or so: end.sum only (the sender's bytes with the
//     receiver's jitter and loss); later also sum_sent and sum_received,
//     where sum_sent carries no jitter or loss;
//   - --bidir (3.7+): the same again as *_bidir_reverse for the other
//     direction;
//   - a server's document (iperf3 -s -J) has start.accepted_connection and
//     a sum_sent of zero bytes in the direction it only received.
//
// A document with an "error" member is a failed run (iperf3 could not
// connect, the server went away): it is refused with iperf3's message.
// Several documents back to back (a job running iperf3 several times into
// one file) are several runs; text around them (launcher chatter) is
// skipped.

func init() {
	Register(Format{
		Name:  "iperf3",
		Tools: "iperf3 3.x --json output (TCP, UDP, -P, -R, --bidir; client or server side)",
		Sniff: sniffIperf3,
		Parse: ParseIperf3,
	})
}

// Iperf3Tool is Benchmark.Tool of every iperf3 run.
const Iperf3Tool = "iperf3"

// ipfMaxInput bounds what ParseIperf3 reads: a JSON document is decoded
// whole, so its size is the memory it takes.
const ipfMaxInput = 256 << 20

type ipfDoc struct {
	Start *struct {
		Version    string `json:"version"`
		SystemInfo string `json:"system_info"`
		Timestamp  *struct {
			Timesecs int64 `json:"timesecs"`
		} `json:"timestamp"`
		ConnectingTo *struct {
			Host string `json:"host"`
			Port int64  `json:"port"`
		} `json:"connecting_to"`
		AcceptedConnection *struct {
			Host string `json:"host"`
			Port int64  `json:"port"`
		} `json:"accepted_connection"`
		TCPMSSDefault *int64 `json:"tcp_mss_default"`
		SndbufActual  *int64 `json:"sndbuf_actual"`
		RcvbufActual  *int64 `json:"rcvbuf_actual"`
		TestStart     *struct {
			Protocol      string `json:"protocol"`
			NumStreams    int64  `json:"num_streams"`
			Blksize       int64  `json:"blksize"`
			Omit          int64  `json:"omit"`
			Duration      int64  `json:"duration"`
			Bytes         int64  `json:"bytes"`
			Blocks        int64  `json:"blocks"`
			Reverse       int64  `json:"reverse"`
			Bidir         *int64 `json:"bidir"`
			Tos           *int64 `json:"tos"`
			TargetBitrate *int64 `json:"target_bitrate"`
		} `json:"test_start"`
	} `json:"start"`
	Intervals []struct {
		Streams         []ipfSum `json:"streams"`
		Sum             *ipfSum  `json:"sum"`
		SumBidirReverse *ipfSum  `json:"sum_bidir_reverse"`
	} `json:"intervals"`
	End *struct {
		Streams []struct {
			Sender   *ipfSum `json:"sender"`
			Receiver *ipfSum `json:"receiver"`
			UDP      *ipfSum `json:"udp"`
		} `json:"streams"`
		Sum                     *ipfSum `json:"sum"`
		SumSent                 *ipfSum `json:"sum_sent"`
		SumReceived             *ipfSum `json:"sum_received"`
		SumBidirReverse         *ipfSum `json:"sum_bidir_reverse"`
		SumSentBidirReverse     *ipfSum `json:"sum_sent_bidir_reverse"`
		SumReceivedBidirReverse *ipfSum `json:"sum_received_bidir_reverse"`
		CPU                     *struct {
			HostTotal   *float64 `json:"host_total"`
			RemoteTotal *float64 `json:"remote_total"`
		} `json:"cpu_utilization_percent"`
		SenderTCPCongestion   string `json:"sender_tcp_congestion"`
		ReceiverTCPCongestion string `json:"receiver_tcp_congestion"`
	} `json:"end"`
	Error *string `json:"error"`
	Event string  `json:"event"` // --json-stream (3.17+) writes one event a line
}

// ipfSum is one "sum" (or one stream's figures).
type ipfSum struct {
	Socket        *int64   `json:"socket"`
	Start         float64  `json:"start"`
	End           float64  `json:"end"`
	Seconds       float64  `json:"seconds"`
	Bytes         float64  `json:"bytes"`
	BitsPerSecond *float64 `json:"bits_per_second"`
	Retransmits   *int64   `json:"retransmits"`
	JitterMs      *float64 `json:"jitter_ms"`
	LostPackets   *int64   `json:"lost_packets"`
	Packets       *int64   `json:"packets"`
	LostPercent   *float64 `json:"lost_percent"`
	Omitted       bool     `json:"omitted"`
	Sender        *bool    `json:"sender"`
}

// sniffIperf3 looks for the members only iperf3 writes.
func sniffIperf3(head []byte) int {
	i := bytes.IndexByte(head, '{')
	if i < 0 {
		return 0
	}
	doc := head[i:]
	switch {
	case bytes.Contains(doc, []byte(`"sbench.result/`)):
		return 0 // a bundle, whose raw output may well be iperf3's
	case bytes.Contains(doc, []byte(`"iperf 3.`)) && bytes.Contains(doc, []byte(`"start"`)):
		return 95
	case bytes.Contains(doc, []byte(`"intervals"`)) && bytes.Contains(doc, []byte(`"bits_per_second"`)):
		return 80
	}
	return 0
}

// ParseIperf3 reads every iperf3 JSON document in r. A document that does
// not decode, holds no results or reports an error refuses the input.
func ParseIperf3(name string, r io.Reader) ([]*results.Bundle, error) {
	data, err := io.ReadAll(io.LimitReader(r, ipfMaxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > ipfMaxInput {
		return nil, SyntaxErrors{{FileName: name, Msg: fmt.Sprintf("iperf3 output larger than %d bytes", ipfMaxInput)}}
	}
	var out []*results.Bundle
	var errs SyntaxErrors
	bad := func(off int, format string, args ...any) {
		errs = append(errs, &SyntaxError{FileName: name, Line: ipfLineAt(data, off), Msg: fmt.Sprintf(format, args...)})
	}
	for off := 0; off < len(data); {
		start := ipfNextJSONLine(data, off)
		if start < 0 {
			break
		}
		dec := json.NewDecoder(bytes.NewReader(data[start:]))
		dec.UseNumber()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			bad(start+ipfJSONErrorOffset(err), "iperf3 JSON document does not decode: %v", ipfJSONError(err))
			break
		}
		off = start + int(dec.InputOffset())
		var doc ipfDoc
		if err := json.Unmarshal(raw, &doc); err != nil {
			bad(start+ipfJSONErrorOffset(err), "iperf3 JSON document: %v", ipfJSONError(err))
			continue
		}
		b, err := doc.bundle()
		if err != nil {
			bad(start, "%v", err)
			continue
		}
		out = append(out, b)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// ipfNextJSONLine is the offset of the next line, from off, whose first
// non-blank byte opens a JSON object; -1 if there is none.
func ipfNextJSONLine(data []byte, off int) int {
	for line := range bytes.Lines(data[off:]) {
		if t := bytes.TrimLeft(line, " \t\r"); len(t) > 0 && t[0] == '{' {
			return off + len(line) - len(t)
		}
		off += len(line)
	}
	return -1
}

// ipfLineAt is the number of the line holding byte off of data.
func ipfLineAt(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

func ipfJSONErrorOffset(err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return int(se.Offset)
	case errors.As(err, &te):
		return int(te.Offset)
	}
	return 0
}

func ipfJSONError(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("the document is cut short (did iperf3 finish?)")
	}
	return err
}

// ipfDirection is one direction of data of a run, and its totals.
type ipfDirection struct {
	name     string // "client->server" or "server->client"
	sent     *ipfSum
	received *ipfSum
	sum      *ipfSum // the single total of older UDP documents
}

func (doc *ipfDoc) bundle() (*results.Bundle, error) {
	if doc.Error != nil {
		return nil, fmt.Errorf("iperf3 failed: %s", *doc.Error)
	}
	if doc.Event != "" {
		return nil, errors.New("iperf3 --json-stream output is not read yet: run iperf3 with --json")
	}
	if doc.Start == nil || doc.End == nil {
		return nil, errors.New("iperf3 JSON document has no \"start\" or \"end\": not iperf3 --json output")
	}
	b := results.New()
	b.Benchmark = results.Benchmark{Name: "iperf3", Tool: Iperf3Tool, ToolBenchmark: "iperf3"}
	st := doc.Start
	if v, ok := strings.CutPrefix(st.Version, "iperf "); ok {
		b.Benchmark.ToolVersion = v
	}
	params := map[string]string{}
	set := func(k string, v any) { params[k] = fmt.Sprint(v) }
	reverse, bidir := false, false
	if ts := st.TestStart; ts != nil {
		set("protocol", ts.Protocol)
		set("parallel", ts.NumStreams)
		set("blksize_bytes", ts.Blksize)
		set("omit_s", ts.Omit)
		set("duration_s", ts.Duration)
		if ts.Bytes > 0 {
			set("bytes", ts.Bytes)
		}
		if ts.Blocks > 0 {
			set("blocks", ts.Blocks)
		}
		reverse = ts.Reverse != 0
		set("reverse", reverse)
		if ts.Bidir != nil && *ts.Bidir != 0 {
			bidir = true
		}
		if ts.Tos != nil && *ts.Tos != 0 {
			set("tos", *ts.Tos)
		}
		if ts.TargetBitrate != nil && *ts.TargetBitrate != 0 {
			set("target_bitrate_bps", *ts.TargetBitrate)
		}
	}
	role := "client"
	if c := st.ConnectingTo; c != nil {
		set("server", c.Host)
		set("port", c.Port)
	}
	if a := st.AcceptedConnection; a != nil {
		role = "server"
		set("client", a.Host)
	}
	set("role", role)
	for k, v := range map[string]*int64{"tcp_mss_default_bytes": st.TCPMSSDefault, "sndbuf_bytes": st.SndbufActual, "rcvbuf_bytes": st.RcvbufActual} {
		if v != nil {
			set(k, *v)
		}
	}
	end := doc.End
	if end.SenderTCPCongestion != "" {
		set("sender_tcp_congestion", end.SenderTCPCongestion)
	}
	if end.ReceiverTCPCongestion != "" {
		set("receiver_tcp_congestion", end.ReceiverTCPCongestion)
	}
	if end.SumSentBidirReverse != nil || end.SumReceivedBidirReverse != nil {
		bidir = true
	}
	set("bidir", bidir)
	b.Params = params
	if st.Timestamp != nil && st.Timestamp.Timesecs > 0 {
		b.Start = time.Unix(st.Timestamp.Timesecs, 0).UTC()
	}

	// Data flows from client to server, or back with -R; --bidir does both.
	forward, back := "client->server", "server->client"
	if reverse {
		forward, back = back, forward
	}
	dirs := []ipfDirection{{name: forward, sent: end.SumSent, received: end.SumReceived, sum: end.Sum}}
	if bidir {
		dirs = append(dirs, ipfDirection{name: back, sent: end.SumSentBidirReverse, received: end.SumReceivedBidirReverse, sum: end.SumBidirReverse})
	}
	var last float64
	for _, d := range dirs {
		n, err := d.samples(b, role)
		if err != nil {
			return nil, err
		}
		last = math.Max(last, n)
	}
	if len(b.Samples) == 0 {
		return nil, errors.New("iperf3 JSON document has no totals in \"end\": the run did not finish")
	}
	if !b.Start.IsZero() && last > 0 {
		b.End = b.Start.Add(time.Duration(math.Round(last*1000)) * time.Millisecond)
	}
	if err := ipfIntervals(b, doc, forward, back); err != nil {
		return nil, err
	}
	ipfStreams(b, doc, forward)
	if cpu := end.CPU; cpu != nil {
		if cpu.HostTotal != nil && ipfFinite(*cpu.HostTotal) {
			b.Scalars = append(b.Scalars, results.Scalar{Name: "cpu_host_percent", Unit: "%", Value: *cpu.HostTotal})
		}
		if cpu.RemoteTotal != nil && ipfFinite(*cpu.RemoteTotal) {
			b.Scalars = append(b.Scalars, results.Scalar{Name: "cpu_remote_percent", Unit: "%", Value: *cpu.RemoteTotal})
		}
	}
	return b, nil
}

// samples adds one direction's totals to b and returns the time they
// cover. The receiver's rate is "bandwidth": what arrived.
func (d ipfDirection) samples(b *results.Bundle, role string) (float64, error) {
	recv, sent := d.received, d.sent
	if recv == nil {
		recv = d.sum
	}
	if sent == nil {
		sent = d.sum
	}
	if recv == nil && sent == nil {
		return 0, nil
	}
	// A server measures only what it received; its sum_sent is zeros.
	if role == "server" && sent != nil && sent.Bytes == 0 && recv != nil && recv.Bytes > 0 {
		sent = nil
	}
	tags := func(side string) map[string]string { return map[string]string{"direction": d.name, "side": side} }
	add := func(metric, unit string, v float64, side string) {
		b.Samples = append(b.Samples, results.Sample{Metric: metric, Unit: unit, Value: v, Tags: tags(side)})
	}
	var covered float64
	for _, x := range []struct {
		s      *ipfSum
		side   string
		prefix string
	}{{recv, "receiver", ""}, {sent, "sender", "sent_"}} {
		if x.s == nil {
			continue
		}
		if x.s.BitsPerSecond == nil || !ipfFinite(*x.s.BitsPerSecond) || *x.s.BitsPerSecond < 0 {
			return 0, fmt.Errorf("iperf3 %s total (%s) has no bits_per_second", x.side, d.name)
		}
		bps := *x.s.BitsPerSecond
		add(x.prefix+"bandwidth", results.UnitMBps, bps/8/1e6, x.side)
		add(x.prefix+"bandwidth_bps", "bit/s", bps, x.side)
		covered = math.Max(covered, x.s.End)
	}
	// Retransmissions are counted by the sender; jitter and loss by the
	// receiver (sum_sent of UDP holds zeros for them).
	if sent != nil && sent.Retransmits != nil {
		add("retransmits", "count", float64(*sent.Retransmits), "sender")
	}
	if recv != nil {
		if recv.JitterMs != nil && ipfFinite(*recv.JitterMs) {
			add("jitter", "ms", *recv.JitterMs, "receiver")
		}
		if recv.LostPackets != nil {
			add("lost_packets", "packets", float64(*recv.LostPackets), "receiver")
		}
		if recv.Packets != nil {
			add("packets", "packets", float64(*recv.Packets), "receiver")
		}
		if recv.LostPercent != nil && ipfFinite(*recv.LostPercent) {
			add("lost_percent", "%", *recv.LostPercent, "receiver")
		}
	}
	return covered, nil
}

// ipfIntervals adds the per-interval rates, x = the interval's start in
// seconds. Omitted (-O) intervals are kept, tagged, since iperf3 prints them.
func ipfIntervals(b *results.Bundle, doc *ipfDoc, forward, back string) error {
	for i, iv := range doc.Intervals {
		for _, x := range []struct {
			s   *ipfSum
			dir string
		}{{iv.Sum, forward}, {iv.SumBidirReverse, back}} {
			s := x.s
			if s == nil {
				continue
			}
			if s.BitsPerSecond == nil || !ipfFinite(*s.BitsPerSecond) || *s.BitsPerSecond < 0 || !ipfFinite(s.Start) {
				return fmt.Errorf("iperf3 interval %d (%s) has no bits_per_second", i+1, x.dir)
			}
			tags := map[string]string{"direction": x.dir}
			if s.Sender != nil {
				tags["side"] = map[bool]string{true: "sender", false: "receiver"}[*s.Sender]
			}
			if s.Omitted {
				tags["omitted"] = "true"
			}
			b.Samples = append(b.Samples, results.Sample{Metric: "interval_bandwidth", Unit: results.UnitMBps,
				X: results.F(s.Start), XUnit: "s", Value: *s.BitsPerSecond / 8 / 1e6, Tags: tags})
		}
	}
	return nil
}

// ipfStreams adds each stream's end rate, so that an unfair share among
// -P streams shows. A single stream adds nothing the totals do not say;
// --bidir lists the streams of both directions, which the totals split.
func ipfStreams(b *results.Bundle, doc *ipfDoc, forward string) {
	if len(doc.End.Streams) < 2 || b.Params["bidir"] == "true" {
		return
	}
	type one struct {
		socket int64
		bps    float64
		side   string
	}
	var all []one
	for _, s := range doc.End.Streams {
		x, side := s.Receiver, "receiver"
		switch {
		case s.UDP != nil:
			// The sender's bytes and rate, with the receiver's loss.
			x, side = s.UDP, "sender"
			if s.UDP.Sender != nil && !*s.UDP.Sender {
				side = "receiver"
			}
		case x == nil || x.Bytes == 0:
			x, side = s.Sender, "sender"
		}
		if x == nil || x.Socket == nil || x.BitsPerSecond == nil || !ipfFinite(*x.BitsPerSecond) || *x.BitsPerSecond < 0 {
			continue
		}
		all = append(all, one{*x.Socket, *x.BitsPerSecond, side})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].socket < all[j].socket })
	for _, s := range all {
		b.Samples = append(b.Samples, results.Sample{Metric: "stream_bandwidth", Unit: results.UnitMBps, Value: s.bps / 8 / 1e6,
			Tags: map[string]string{"stream": strconv.FormatInt(s.socket, 10), "side": s.side, "direction": forward}})
	}
}

func ipfFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
