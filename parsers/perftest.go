package parsers

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"strings"

	"github.com/sbench/sbench/results"
)

// perftest (linux-rdma/perftest: ib_write_bw, ib_read_lat, …) prints, for
// each run, a title ("RDMA_Write BW Test"), a block of "key : value"
// settings, the local and remote queue-pair addresses, and a result table
// between rule lines. Every run with a table becomes one bundle.
//
// perftest's "MB/sec" is 2^20 bytes/s: print_report_bw divides by
// format_factor = 0x100000 (src/perftest_parameters.c), and --help says
// "Report Max/Average BW of test in Gbit/sec (instead of MiB/sec)". With
// --report_gbits it prints Gb/sec, 10^9 bits/s (format_factor 125000000).
// Both become MB/s (10^6 bytes/s) for the bandwidth metric; the printed
// figures are kept as samples in their own unit.
//
// t_typical is the median of the sorted samples (get_median in
// perftest_parameters.c), so it goes into P50; the latency value is t_avg
// when the version prints it (3.x on), else t_typical, and
// Params["latency_value"] says which.

func init() {
	Register(Format{
		Name:  "perftest",
		Tools: "perftest ib_{write,read,send,atomic}_{bw,lat} (OFED 1.5 perftest 1.x to linux-rdma/perftest 25.x)",
		Sniff: sniffPerftest,
		Parse: ParsePerftest,
	})
}

func sniffPerftest(head []byte) int {
	score := 0
	for _, l := range bytes.Split(head, []byte("\n")) {
		if t := bytes.TrimSpace(l); bytes.HasSuffix(t, []byte("Test")) && perftestTitleRE.Match(t) {
			score += 60
			break
		}
	}
	if bytes.Contains(head, []byte("#iterations")) &&
		(bytes.Contains(head, []byte("BW peak[")) || bytes.Contains(head, []byte("t_min[usec]")) || bytes.Contains(head, []byte("t_avg[usec]"))) {
		score += 35
	}
	if bytes.Contains(head, []byte("local address: LID")) {
		score += 5
	}
	return min(score, 100)
}

// ParsePerftest collects a PerftestReader of r: its runs, or its syntax errors.
func ParsePerftest(name string, r io.Reader) ([]*results.Bundle, error) {
	return Collect(NewPerftestReader(name, r))
}

var (
	// ctx_print_test_info: testsStr[verb], the atomic type, "Bidirectional",
	// "Post List", "BW" or "Latency", "forwarding", "Multicast", "Test".
	perftestTitleRE = LazyRegexp(`^(Send|RDMA_Write|RDMA_Read|Atomic)\s+(?:(CMP_AND_SWAP|FETCH_AND_ADD)\s+)?(Bidirectional\s+)?(Post List\s+)?(BW|Latency)\s+(?:forwarding\s+)?(Multicast\s+)?Test$`)
	perftestRuleRE  = LazyRegexp(`^-{10,}$`)
	perftestKVRE    = LazyRegexp(`([A-Za-z][A-Za-z0-9.*_/ -]*?)\s*:\s*(\S+)`)
	perftestAddrRE  = LazyRegexp(`^(local|remote) address:\s*(.*)$`)
	perftestGIDRE   = LazyRegexp(`^GID:\s*(\S+)`)
	// Messages perftest prints when a run fails (NOTIFY_COMP_ERROR_*, the
	// connection setup in perftest_communication.c, …).
	perftestFailRE = LazyRegexp(`(?i)completion with error|^failed status|^failed to|couldn'?t |unable to |test exited with error|incompatibility issue`)
	// The columns of the result tables, in any perftest version.
	perftestColRE     = LazyRegexp(`#bytes|#iterations|#sl|BW peak\[([^\]]+)\]|BW average\[([^\]]+)\]|MsgRate\[Mpps\]|BW Port([12])\[([^\]]+)\]|MsgRate Port([12])\[Mpps\]|t_min\[usec\]|t_max\[usec\]|t_typical\[usec\]|t_avg\[usec\]|t_stdev\[usec\]|99% percentile\[usec\]|99\.9% percentile\[usec\]|tps average`)
	perftestVersionRE = LazyRegexp(`^Version:\s*(\d+\.\d+\S*)$`)
)

type perftestCol struct {
	kind string // "bytes", "iters", "sl", "peak", "avg", "mr", "port_bw", "port_mr", "t_min", …
	unit string // for bandwidth columns: "MB/sec" or "Gb/sec"
	port string
}

// perftestPlainCols are the header's columns that carry no unit or port of
// their own, by their heading.
var perftestPlainCols = map[string]string{
	"#bytes": "bytes", "#iterations": "iters", "#sl": "sl", "MsgRate[Mpps]": "mr",
	"t_min[usec]": "t_min", "t_max[usec]": "t_max", "t_typical[usec]": "t_typical",
	"t_avg[usec]": "t_avg", "t_stdev[usec]": "t_stdev",
	"99% percentile[usec]": "p99", "99.9% percentile[usec]": "p999", "tps average": "tps",
}

// perftestTableHeader returns the columns of a result table header, or false
// when the line is not one; ok with a non-nil error is a header with a column
// this parser does not know.
func perftestTableHeader(t string) ([]perftestCol, bool, error) {
	if !strings.HasPrefix(t, "#bytes") {
		return nil, false, nil
	}
	var cols []perftestCol
	rest := t
	for _, m := range perftestColRE.FindAllStringSubmatchIndex(t, -1) {
		tok := t[m[0]:m[1]]
		sub := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return t[m[2*i]:m[2*i+1]]
		}
		c := perftestCol{kind: perftestPlainCols[tok]}
		switch {
		case strings.HasPrefix(tok, "BW peak"):
			c = perftestCol{kind: "peak", unit: sub(1)}
		case strings.HasPrefix(tok, "BW average"):
			c = perftestCol{kind: "avg", unit: sub(2)}
		case strings.HasPrefix(tok, "BW Port"):
			c = perftestCol{kind: "port_bw", port: sub(3), unit: sub(4)}
		case strings.HasPrefix(tok, "MsgRate Port"):
			c = perftestCol{kind: "port_mr", port: sub(5)}
		}
		if c.unit != "" && c.unit != "MB/sec" && c.unit != "Gb/sec" {
			return nil, true, fmt.Errorf("bandwidth unit %q is not MB/sec or Gb/sec", c.unit)
		}
		cols = append(cols, c)
		rest = strings.Replace(rest, tok, "", 1)
	}
	if left := strings.TrimSpace(rest); left != "" {
		return nil, true, fmt.Errorf("unknown column %q", clip(left, 40))
	}
	if len(cols) < 3 || cols[0].kind != "bytes" {
		return nil, true, fmt.Errorf("table header has no measurement columns")
	}
	return cols, true, nil
}

// perftestRun is one run being read.
type perftestRun struct {
	line       int
	title      []string // submatches of perftestTitleRE
	server     bool
	params     map[string]string
	lastAddr   string // "local" or "remote", for the GID line that follows
	addrs      map[string][]string
	gids       map[string][]string
	side       string // "local"/"remote" while reading a --report-both table
	cols       []perftestCol
	headerLine int
	open       bool // inside a table, before its closing rule
	tables     int
	rows       int
	samples    []results.Sample
	failures   []string
	belowLimit bool
	negative   []string
	unitNote   string
}

// PerftestReader reads perftest output one run at a time, as a Reader:
// Scan, Result (a *Run or a *SyntaxError), Err.
//
// A run is handed out once it is over (the next title or server banner, or
// the end of the input). A run whose table was cut short by a failure
// perftest reports ("Completion with error …") is kept with status failed;
// a row that does not parse, a header without rows or a table that is not
// closed by its rule line with no failure to explain it is a *SyntaxError.
// Scanning goes on after one; only an I/O error ends the scan.
type PerftestReader struct {
	run     *perftestRun
	server  bool   // "Waiting for client to connect" seen before the next title
	version string // from a "Version: 5.60" line (perftest --version)
	records
}

// NewPerftestReader reads perftest output from r; name is used in errors.
func NewPerftestReader(name string, r io.Reader) *PerftestReader {
	rd := &PerftestReader{}
	// A table still open at the end is cut one line past the last.
	rd.sc = NewScanner(name, r, rd.line, func() { rd.finishRun(rd.sc.Lines().Line() + 1) })
	return rd
}

func (r *PerftestReader) line(text string) {
	n := r.sc.Lines().Line()
	t := strings.TrimSpace(text)
	// The server banner "* Waiting for client to connect... *" comes before
	// the title of the run it belongs to.
	if strings.Contains(t, "Waiting for client") {
		r.finishRun(n)
		r.server = true
		return
	}
	if r.server && t != "" && strings.Trim(t, "*") != "" && !perftestRuleRE.MatchString(t) && !perftestTitleRE.MatchString(t) {
		// Text between the banner and a title: a transcript that shows the
		// server's banner, then the client's run.
		r.server = false
	}
	if m := perftestVersionRE.FindStringSubmatch(t); m != nil {
		r.version = m[1]
		return
	}
	if m := perftestTitleRE.FindStringSubmatch(t); m != nil {
		r.finishRun(n)
		r.run = &perftestRun{line: n, title: m, server: r.server, params: map[string]string{},
			addrs: map[string][]string{}, gids: map[string][]string{}}
		r.server = false
		return
	}
	run := r.run
	if run == nil || t == "" {
		return
	}
	if perftestRuleRE.MatchString(t) {
		if run.open {
			run.open = false
			if run.rows == 0 {
				r.sc.Errorf(run.headerLine, "%s: result table has no rows", r.name(run))
			}
		}
		return
	}
	if perftestFailRE.MatchString(t) {
		run.failures = append(run.failures, clip(t, 200))
		return
	}
	if strings.Contains(t, "BW result is below bw limit") {
		run.belowLimit = true
		return
	}
	switch t {
	case "Local results:":
		run.side = "local"
		return
	case "Remote results:":
		run.side = "remote"
		return
	}
	if strings.HasPrefix(t, "#bytes") {
		cols, ok, err := perftestTableHeader(t)
		if ok && err != nil {
			r.sc.Errorf(n, "%s: %v", r.name(run), err)
			return
		}
		if ok {
			if run.open && run.rows == 0 {
				r.sc.Errorf(run.headerLine, "%s: result table has no rows", r.name(run))
			}
			run.cols, run.headerLine, run.open, run.rows = cols, n, true, 0
			run.tables++
			return
		}
	}
	if run.open {
		if rowLike(t) {
			r.row(run, t, n)
		}
		return // "Conflicting CPU frequency values detected …" and other chatter
	}
	if run.tables > 0 || strings.HasPrefix(t, "Conflicting CPU frequency") {
		return
	}
	r.headerLine(run, t)
}

// headerLine reads the settings and addresses printed before the table.
func (r *PerftestReader) headerLine(run *perftestRun, t string) {
	if m := perftestAddrRE.FindStringSubmatch(t); m != nil {
		run.lastAddr = m[1]
		run.addrs[m[1]] = append(run.addrs[m[1]], clip(strings.Join(strings.Fields(m[2]), " "), 200))
		return
	}
	if m := perftestGIDRE.FindStringSubmatch(t); m != nil && run.lastAddr != "" {
		run.gids[run.lastAddr] = append(run.gids[run.lastAddr], m[1])
		return
	}
	for _, m := range perftestKVRE.FindAllStringSubmatch(t, -1) {
		key := SnakeName(m[1]) // "Data ex. method" → "data_ex_method"
		if key == "" || len(key) > 40 || len(run.params) >= 64 {
			continue
		}
		val := m[2]
		// "4096[B]" (perftest 2.x on), "2048B" (1.x).
		if v := strings.TrimSuffix(val, "[B]"); v != val {
			val = v
		} else if v := strings.TrimSuffix(val, "B"); v != val {
			if _, ok := Integer(v); ok {
				val = v
			}
		}
		run.params[key] = clip(val, 64)
	}
}

func (r *PerftestReader) row(run *perftestRun, t string, n int) {
	run.rows++ // counted even when malformed: the table has a row, a bad one
	v, port, size, iters, sl, ok := r.values(run, strings.Fields(t), n)
	if !ok {
		return
	}
	var tags map[string]string
	if run.side != "" || sl != "" {
		tags = map[string]string{}
		if run.side != "" {
			tags["side"] = run.side
		}
		if sl != "" {
			tags["sl"] = sl
		}
	}
	add := func(metric, unit string, val float64) *results.Sample {
		run.samples = append(run.samples, results.Sample{Metric: metric, Unit: unit, X: results.F(size), XUnit: results.UnitBytes,
			Value: val, Iterations: iters, Tags: maps.Clone(tags)})
		return &run.samples[len(run.samples)-1]
	}
	at := fmt.Sprintf(" at %.0f bytes", size)
	has := func(k string) bool { _, ok := v[k]; return ok }
	opt := func(k string) *float64 { // nil for a column the table lacks
		if x, ok := v[k]; ok {
			return results.F(x)
		}
		return nil
	}
	unitOf := func(kind string) string {
		for _, c := range run.cols {
			if c.kind == kind {
				return c.unit
			}
		}
		return ""
	}
	if has("avg") {
		u, pu := unitOf("avg"), unitOf("peak")
		if has("mr") {
			if other := perftestUnitFromRate(v["avg"], u, v["mr"], size); other != "" {
				u, pu = other, other
				run.unitNote = fmt.Sprintf("the table header says %s but MsgRate × size matches %s; read as %s", unitOf("avg"), other, other)
			}
		}
		s := add("bandwidth", results.UnitMBps, perftestMBps(v["avg"], u))
		// Server sides and -D runs print a peak of 0.00: not measured.
		peakMeasured := has("peak") && !(v["peak"] == 0 && v["avg"] > 0)
		if peakMeasured {
			s.Max = results.F(perftestMBps(v["peak"], pu))
		}
		add("bandwidth_avg", perftestUnit(u), v["avg"])
		if peakMeasured {
			add("bandwidth_peak", perftestUnit(pu), v["peak"])
		}
		if v["avg"] < 0 {
			run.negative = append(run.negative, "bandwidth"+at)
		}
	}
	if has("mr") {
		add("message_rate", "messages/s", v["mr"]*1e6)
		add("message_rate_mpps", "Mpps", v["mr"])
	}
	for _, p := range []string{"1", "2"} {
		if bw, ok := port["port_bw"+p]; ok {
			var u string
			for _, c := range run.cols {
				if c.kind == "port_bw" && c.port == p {
					u = c.unit
				}
			}
			add("bandwidth_port"+p, results.UnitMBps, perftestMBps(bw, u))
			add("bandwidth_port"+p+"_avg", perftestUnit(u), bw)
		}
		if mr, ok := port["port_mr"+p]; ok {
			add("message_rate_port"+p, "messages/s", mr*1e6)
			add("message_rate_port"+p+"_mpps", "Mpps", mr)
		}
	}
	if has("t_typical") || has("t_avg") {
		val := v["t_avg"]
		if !has("t_avg") {
			val = v["t_typical"]
		}
		s := add("latency", results.UnitMicroseconds, val)
		s.Min, s.Max, s.P50, s.P99 = opt("t_min"), opt("t_max"), opt("t_typical"), opt("p99")
		if has("p999") {
			add("latency_p999", results.UnitMicroseconds, v["p999"])
		}
		if has("t_stdev") {
			add("latency_stdev", results.UnitMicroseconds, v["t_stdev"])
		}
		for _, k := range []string{"t_min", "t_typical", "t_avg"} {
			if has(k) && v[k] < 0 {
				run.negative = append(run.negative, "latency"+at)
				break
			}
		}
	}
	if has("tps") {
		add("transaction_rate", "Transactions/s", v["tps"])
	}
}

// values reads a row's fields by the table's columns: the figures (v), the
// ports' figures (port, by kind and port), the message size, iterations
// and service level; false after an error.
func (r *PerftestReader) values(run *perftestRun, fields []string, n int) (v, port map[string]float64, size float64, iters int, sl string, ok bool) {
	row, ok := r.sc.tableRow(n, r.name(run), fields, run.headerLine, len(run.cols), func(i int) bool {
		k := run.cols[i].kind
		return k == "bytes" || k == "iters" || k == "sl"
	})
	if !ok {
		return nil, nil, 0, 0, "", false
	}
	v, port = map[string]float64{}, map[string]float64{}
	for i, c := range run.cols {
		switch {
		case c.kind == "bytes":
			size = row[i]
		case c.kind == "iters":
			x, _ := Integer(fields[i]) // exact, where row[i] may round
			iters = int(x)
		case c.kind == "sl":
			sl = fields[i]
		case c.port != "":
			port[c.kind+c.port] = row[i]
		default:
			v[c.kind] = row[i]
		}
	}
	return v, port, size, iters, sl, true
}

// perftestUnitFromRate returns the other bandwidth unit when the printed
// average contradicts the message rate and the other unit agrees with it,
// "" otherwise. A server reports the client's figures under its own header:
// a client run with --report_gbits and a server without it print the same
// numbers, the server's labelled MB/sec (seen in
// testdata/perftest-roce-k8s-read-lat-write-bw-gbits-server-client.txt).
func perftestUnitFromRate(avg float64, unit string, mpps, size float64) string {
	if avg <= 0 || mpps <= 0 || size <= 0 {
		return ""
	}
	rate := mpps * 1e6 * size // bytes/s
	fits := func(u string) bool { return math.Abs(math.Log(perftestMBps(avg, u)*1e6/rate)) < 0.03 }
	other := "Gb/sec"
	if unit == "Gb/sec" {
		other = "MB/sec"
	}
	if !fits(unit) && fits(other) {
		return other
	}
	return ""
}

// perftestMBps converts a printed bandwidth to MB/s (10^6 bytes/s).
func perftestMBps(v float64, unit string) float64 {
	if unit == "Gb/sec" {
		return v * 1e9 / 8 / 1e6
	}
	return v * (1 << 20) / 1e6
}

// perftestUnit names the unit perftest really prints.
func perftestUnit(unit string) string {
	if unit == "Gb/sec" {
		return "Gb/s"
	}
	return "MiB/s"
}

// name is the program that printed a run, from its title.
func (r *PerftestReader) name(run *perftestRun) string {
	verb := map[string]string{"Send": "send", "RDMA_Write": "write", "RDMA_Read": "read", "Atomic": "atomic"}[run.title[1]]
	kind := "bw"
	if run.title[5] == "Latency" {
		kind = "lat"
	}
	if run.params["connection_type"] == "RawEth" {
		return "raw_ethernet_" + kind
	}
	return "ib_" + verb + "_" + kind
}

func (r *PerftestReader) finishRun(next int) {
	run := r.run
	if run == nil {
		return
	}
	r.run = nil
	name := r.name(run)
	failed := len(run.failures) > 0
	if run.open && !failed {
		r.sc.Errorf(next, "%s: result table (line %d) is not closed by a rule line (truncated output?)", name, run.headerLine)
		return
	}
	if run.tables == 0 && !failed {
		return // the server side of a write/read test prints no table
	}
	out := results.New()
	out.Benchmark.Name = name
	out.Benchmark.Tool = name
	out.Benchmark.ToolBenchmark = name
	out.Benchmark.ToolVersion = r.version
	out.Params = run.params
	out.Params["test"] = strings.Join(strings.Fields(run.title[0]), " ")
	if run.title[2] != "" {
		out.Params["atomic_type"] = run.title[2]
	}
	if run.title[3] != "" {
		out.Params["bidirectional"] = "true"
	}
	if run.title[6] != "" {
		out.Params["multicast"] = "true"
	}
	if run.server {
		out.Params["role"] = "server"
	}
	for _, side := range []string{"local", "remote"} {
		if a := run.addrs[side]; len(a) > 0 {
			out.Params[side+"_address"] = strings.Join(a, "; ")
		}
		if g := run.gids[side]; len(g) > 0 {
			out.Params[side+"_gid"] = strings.Join(g, "; ")
		}
	}
	for _, c := range run.cols {
		switch {
		case c.kind == "t_avg":
			out.Params["latency_value"] = "t_avg"
		case c.kind == "t_typical" && out.Params["latency_value"] == "":
			out.Params["latency_value"] = "t_typical"
		}
	}
	if run.unitNote != "" {
		out.Params["bandwidth_unit_note"] = run.unitNote
	}
	out.Samples = run.samples
	var problems []string
	if run.belowLimit {
		out.Checks = append(out.Checks, results.Check{Name: "bw_limit", Op: ">=", Passed: false})
		problems = append(problems, "BW result is below bw limit")
	}
	if len(run.negative) > 0 {
		problems = append(problems, "negative "+strings.Join(run.negative, ", "))
	}
	switch {
	case failed:
		out.Status = results.StatusFailed
		out.Error = strings.Join(append(run.failures, problems...), "; ")
	case len(problems) > 0:
		out.Status = results.StatusInvalid
		out.Error = strings.Join(problems, "; ")
	}
	r.sc.Emit(run.line, out)
}
