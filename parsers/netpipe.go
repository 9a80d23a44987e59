package parsers

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
)

// NetPIPE (NPtcp, NPmpi/NPopenmpi, NPib, …) reports one message size per
// line on the transmitter's stderr:
//
//	  0:       1 bytes   3121 times -->      0.19 Mbps in      40.08 usec
//
// and, with -o FILE, the same points as three columns (bytes, Mbps,
// seconds). The rate, time and file columns follow netpipe.c of 3.6/3.7:
// the time is the best of three trials of half a round trip, and "Mbps" is
// bits / (t × 1024 × 1024): 2^20 bits per second, not 10^6 (1 byte in 11.60
// usec prints 0.66 Mbps; 10^6 would give 0.69). bandwidth in MB/s is thus
// Mbps × 2^20 / 8 / 10^6. NetPIPE 2.x and the netpipe.c shipped with MPICH
// print the time in seconds ("Mbps in 0.000123 sec", or "MBps" with -MB),
// with a "Latency:" and "Sync Time:" header; both are read.
//
// NetPIPE measures sizes 3 bytes on either side of each step (its
// perturbations): every row is kept, at its exact byte count. A run that
// stops mid-row (killed, or NetPIPE's own "error writing or reading
// synchronization string") leaves a row without its rate: that is a syntax
// error, and the input is refused rather than read as a shorter curve.

func init() {
	Register(Format{
		Name: "netpipe",
		Tools: "NetPIPE 2.x-3.x progress lines (NPtcp, NPmpi/NPopenmpi, NPib, …, also under srun -l or " +
			"mpirun --tag-output) and its -o output file; MPICH's netpipe",
		Sniff: sniffNetPIPE,
		Parse: ParseNetPIPE,
	})
}

// NetPIPETool is Benchmark.Tool of every NetPIPE run. NetPIPE prints no
// version, so ToolVersion stays empty.
const NetPIPETool = "NetPIPE"

// npMbpsToMBps converts NetPIPE's Mbps (2^20 bit/s) to MB/s (10^6 byte/s).
const npMbpsToMBps = (1 << 20) / 8 / 1e6

var (
	// Open MPI's --tag-output prefixes every write, so a row written in
	// two parts carries a tag in its middle too.
	npTagRE = LazyRegexp(`\[\d+,\d+\]<std(?:out|err|diag)>: ?`)
	// An optional srun -l label, NetPIPE's row number, bytes and times; the
	// arrow may have been turned into an en dash by a web page.
	npRowRE = LazyRegexp(`^\s*(?:(\d+):\s*)?(?:(\d+):\s*)?(\d+)\s+bytes\s+(\d+)\s+times\s+(?:--|–|—)>\s*(.*?)\s*$`)
	// What follows the arrow once the size is measured.
	npResultRE = LazyRegexp(`^(\S+)\s+(Mbps|MBps)\s+in\s+(\S+)\s+(usec|sec)(?:,\s*(\S+)\s+sec total)?$`)
	// "failed 2 time(s)" (3.6), "failed: Expecting 3 but received 5" (3.7).
	npIntegRE = LazyRegexp(`^Integrity check (passed|failed\b.*)$`)
	// A line that starts like a row: a number followed by "bytes", or the
	// arrow after "times".
	npRowStartRE = LazyRegexp(`^\s*(?:\d+:\s*)*\d\S*\s+bytes\b|\btimes\s+(?:--|–|—)>`)
	npStartRE    = LazyRegexp(`^(?:\d+:\s+)?Now starting (?:the )?main loop\s*$`)
	npBuffersRE  = LazyRegexp(`^(?:\d+:\s+)?Send and receive buffers are (\d+) and (\d+) bytes`)
	npHostRE     = LazyRegexp(`^(?:\d+:\s+)?([01]): (\S+)$`)
	npLatencyRE  = LazyRegexp(`^(?:\d+:\s+)?(Latency|Sync Time):\s*(\S+)$`)
	npPertRE     = LazyRegexp(`^(?:\d+:\s+)?Using a perturbation value of (\d+)$`)
	npOutputRE   = LazyRegexp(`^(?:\d+:\s+)?Sending output to (\S+)$`)
	npUpperRE    = LazyRegexp(`^(?:\d+:\s+)?The upper limit is being set to (\d+) Bytes$`)
	npOffsetRE   = LazyRegexp(`^(?:\d+:\s+)?(Transmit|Receive) buffer offset: (\d+)$`)
	npProgramRE  = LazyRegexp(`\b(NP(?:tcp6?|sctp6?|ipx|mpi2?|openmpi|mpich2?|mvapich2?|ibv?|gm|mx|pvm|tcgmsg|shmem|gpshmem|armci|lapi|memcpy|disk|theo))\b`)
	// The -o file: a number first, no words.
	npOutRowRE = LazyRegexp(`^\s*[0-9][0-9.eE+-]*(?:\s|$)`)
	// Lines after which no more results come: the tool, the MPI library
	// or the launcher gave up. An srun -l label may precede them.
	npFailureRE = LazyRegexp(`^(?:\d+:\s+)?(?:` +
		`NetPIPE: .*|Can't open .* for output|Need two processes|` +
		`\*\*\* An error occurred in MPI_\w+.*|.*MPI_ABORT was invoked.*|` +
		`.*not built with SLURM's PMI support.*|` +
		`srun: error: .*|mpirun noticed that .*|\S*mpirun has exited due to .*|` +
		`\*\*\* Process received signal \*\*\*|.*Segmentation fault.*)$`)
)

// npHeaderParams are header lines NetPIPE prints when an option is given,
// and what they state.
var npHeaderParams = map[string][2]string{
	"Using no perturbations":                                    {"perturbation", "0"},
	"Streaming in one direction only.":                          {"mode", "stream"},
	"Passing data in both directions simultaneously.":           {"mode", "bidirectional"},
	"Performance measured without cache effects":                {"cache", "invalidated"},
	"Doing an integrity check instead of measuring performance": {"integrity_check", "true"},
	"Preposting all receives before a timed run.":               {"prepost_burst", "true"},
	"Preposting asynchronous receives":                          {"async_receive", "true"},
	"Resetting connection after every trial":                    {"reset_connection", "true"},
	"Receive using the ANY_SOURCE flag":                         {"any_source", "true"},
	"Using synchronous sends":                                   {"synchronous_sends", "true"},
}

// npRow is one measured size.
type npRow struct {
	num         int // NetPIPE's row number, -1 if not printed
	line        int // in the input
	bytes       int64
	times       int64
	rate        float64 // as printed
	rateUnit    string  // Mbps, or MBps (MPICH's netpipe -MB)
	usec        float64
	integrity   bool // an integrity-check row: no rate, no time
	integrityOK bool
}

// npRun is one NetPIPE run: the header lines before its main loop, then
// its rows.
type npRun struct {
	startLine   int // "Now starting the main loop", 0 if not seen
	program     string
	module      string
	hosts       [2]string
	params      map[string]string
	scalars     []results.Scalar
	rows        []npRow
	failure     string
	failureLine int
	broken      bool
	outFile     bool // read from an -o file
}

func (run *npRun) param(k, v string) { run.params = setParam(run.params, k, v) }

// line is where the run starts: its main loop, else its first row.
func (run *npRun) line() int {
	if run.startLine > 0 || len(run.rows) == 0 {
		return run.startLine
	}
	return run.rows[0].line
}

func (run *npRun) last() *npRow {
	if len(run.rows) == 0 {
		return nil
	}
	return &run.rows[len(run.rows)-1]
}

// NetPIPEReader reads NetPIPE output one run at a time, as a Reader: Scan,
// Result (a *Run or a *SyntaxError), Err.
//
// Runs are told apart by "Now starting the main loop", by a row number or
// size that goes back, and by header lines after rows. A run is handed out
// once the next one has rows or the input ends, so that a launcher's
// failure message printed after its last row still marks it failed.
//
// An input without progress lines is read as an -o file: every line three
// numbers (bytes, Mbps, seconds).
type NetPIPEReader struct {
	records
	cur      *npRun  // the run being read (header lines, then rows)
	prev     *npRun  // the last run with rows, not yet handed out
	program  string  // a program named after cur's rows: the next run's
	outRows  []npRow // -o file rows, read at the end if no progress rows
	outBad   []*SyntaxError
	outInteg bool // an -o line of an integrity check was seen
	sawRows  bool // a progress row was seen
	failLine int  // first failure message of the input
	failText string
}

// NewNetPIPEReader reads NetPIPE output from r; name is used in errors.
func NewNetPIPEReader(name string, r io.Reader) *NetPIPEReader {
	rd := &NetPIPEReader{cur: &npRun{}}
	rd.sc = NewScanner(name, r, rd.line, rd.finish)
	return rd
}

// ParseNetPIPE collects a NetPIPEReader of r: its runs, or its syntax errors.
func ParseNetPIPE(name string, r io.Reader) ([]*results.Bundle, error) {
	return Collect(NewNetPIPEReader(name, r))
}

func sniffNetPIPE(head []byte) int {
	lines := strings.Split(string(head), "\n")
	if len(lines) > 1 && !strings.HasSuffix(string(head), "\n") {
		lines = lines[:len(lines)-1] // the sniffer's cut may split the last line
	}
	// Every progress row says "N times"; without that word (and without the
	// start of a main loop) only the -o file's bare columns are left to check,
	// and the per-line regexps below need not run on every input sniffed.
	if !bytes.Contains(head, []byte(" times")) && !bytes.Contains(head, []byte("main loop")) {
		return sniffNetPIPEOutFile(lines)
	}
	started := false
	for _, l := range lines {
		l = strings.ReplaceAll(npTagRE.ReplaceAllString(strings.TrimRight(l, "\r"), ""), "\u00a0", " ")
		if m := npRowRE.FindStringSubmatch(l); m != nil {
			if npResultRE.MatchString(m[5]) || npIntegRE.MatchString(m[5]) {
				return 90
			}
		}
		if npStartRE.MatchString(strings.TrimSpace(l)) {
			started = true
		}
	}
	if started {
		return 60 // a run that stopped early: let NetPIPE's parser say why
	}
	return sniffNetPIPEOutFile(lines)
}

// sniffNetPIPEOutFile gives an -o file a modest score: three numbers a
// line is common, so every line must fit and the sizes must grow.
func sniffNetPIPEOutFile(lines []string) int {
	n := 0
	prev := int64(-1)
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return 0
		}
		b, ok := Integer(f[0])
		if !ok || b <= prev {
			return 0
		}
		for _, s := range f[1:] {
			if v, ok := Number(s); !ok || v < 0 {
				return 0
			}
		}
		prev = b
		n++
	}
	if n >= 3 {
		return 40
	}
	return 0
}

// endRun closes the current run and starts a new one.
func (r *NetPIPEReader) endRun() {
	if len(r.cur.rows) > 0 || r.cur.broken {
		r.handOut()
		r.prev = r.cur
	}
	r.cur = &npRun{program: r.program}
	r.program = ""
}

// handOut queues the previous run, now that nothing can be added to it.
func (r *NetPIPEReader) handOut() {
	if r.prev != nil && !r.prev.broken {
		r.sc.Emit(r.prev.line(), r.prev.bundle())
	}
	r.prev = nil
}

func (r *NetPIPEReader) line(text string) {
	n := r.sc.Lines().Line()
	if strings.Contains(text, ">:") {
		text = npTagRE.ReplaceAllString(text, "")
	}
	text = strings.ReplaceAll(text, "\u00a0", " ") // a web page's spaces
	t := strings.TrimSpace(text)
	if t == "" {
		return
	}
	if m := npRowRE.FindStringSubmatch(text); m != nil {
		r.row(n, m)
		return
	}
	if npRowStartRE.MatchString(text) {
		r.cur.broken = true
		r.sc.Errorf(n, "NetPIPE row does not parse: %q", t)
		return
	}
	if npFailureRE.MatchString(t) {
		r.failure(n, t)
		return
	}
	if npOutRowRE.MatchString(t) {
		r.outLine(n, t)
		return
	}
	// Header lines: after rows, they belong to the next run.
	if npStartRE.MatchString(t) {
		if len(r.cur.rows) > 0 || r.cur.startLine > 0 {
			r.endRun()
		}
		r.cur.startLine = n
		return
	}
	if h := r.header(t); h != nil {
		if len(r.cur.rows) > 0 {
			r.endRun()
		}
		h(r.cur)
		return
	}
	if m := npProgramRE.FindStringSubmatch(t); m != nil {
		switch {
		case len(r.cur.rows) > 0:
			r.program = m[1] // a prompt for the next run
		case r.cur.program == "":
			r.cur.program = m[1]
		}
	}
	// Anything else is chatter: launcher messages, MPI warnings, prompts.
}

// header returns what a header line states, as a function applying it to
// a run, or nil for a line that is not a NetPIPE header.
func (r *NetPIPEReader) header(t string) func(*npRun) {
	bare := t
	if i := strings.Index(t, ": "); i > 0 {
		if _, ok := Integer(t[:i]); ok && npHostRE.FindStringSubmatch(t) == nil {
			bare = t[i+2:] // srun -l label
		}
	}
	if p, ok := npHeaderParams[bare]; ok {
		return func(run *npRun) { run.param(p[0], p[1]) }
	}
	if strings.HasPrefix(bare, "Preposting asynchronous receives (required for Infiniband)") {
		return func(run *npRun) { run.module = "ib"; run.param("async_receive", "true") }
	}
	if m := npBuffersRE.FindStringSubmatch(t); m != nil {
		return func(run *npRun) {
			run.module = "tcp"
			run.param("send_buffer_bytes", m[1])
			run.param("receive_buffer_bytes", m[2])
		}
	}
	if m := npPertRE.FindStringSubmatch(t); m != nil {
		return func(run *npRun) { run.param("perturbation", m[1]) }
	}
	if m := npOutputRE.FindStringSubmatch(t); m != nil {
		return func(run *npRun) { run.param("output_file", m[1]) }
	}
	if m := npUpperRE.FindStringSubmatch(t); m != nil {
		return func(run *npRun) { run.param("upper_bytes", m[1]) }
	}
	if m := npOffsetRE.FindStringSubmatch(t); m != nil {
		return func(run *npRun) { run.param(strings.ToLower(m[1])+"_offset_bytes", m[2]) }
	}
	if m := npHostRE.FindStringSubmatch(t); m != nil {
		return func(run *npRun) {
			i, _ := strconv.Atoi(m[1])
			run.hosts[i] = m[2]
			if run.hosts[0] != "" && run.hosts[1] != "" {
				run.module = "mpi"
			}
		}
	}
	if m := npLatencyRE.FindStringSubmatch(t); m != nil {
		v, ok := npMicro(m[2])
		if !ok || v < 0 {
			return nil
		}
		name := "latency"
		if m[1] == "Sync Time" {
			name = "sync_time"
		}
		return func(run *npRun) {
			run.scalars = append(run.scalars, results.Scalar{Name: name, Unit: results.UnitMicroseconds, Value: v})
		}
	}
	return nil
}

func (r *NetPIPEReader) failure(n int, t string) {
	if r.failLine == 0 {
		r.failLine, r.failText = n, t
	}
	run := r.cur
	if len(run.rows) == 0 && r.prev != nil {
		run = r.prev
	}
	if run.failure == "" {
		run.failure, run.failureLine = t, n
	}
}

func (r *NetPIPEReader) row(n int, m []string) {
	row := npRow{num: -1, line: n}
	switch {
	case m[2] != "":
		row.num, _ = strconv.Atoi(m[2]) // m[1] is srun's label
	case m[1] != "":
		row.num, _ = strconv.Atoi(m[1])
	}
	var ok bool
	if row.bytes, ok = Integer(m[3]); !ok {
		r.cur.broken = true
		r.sc.Errorf(n, "NetPIPE row: size %q is not a byte count", m[3])
		return
	}
	if row.times, ok = Integer(m[4]); !ok {
		r.cur.broken = true
		r.sc.Errorf(n, "NetPIPE row: repeat count %q does not parse", m[4])
		return
	}
	tail := m[5]
	switch res, integ := npResultRE.FindStringSubmatch(tail), npIntegRE.FindStringSubmatch(tail); {
	case res != nil:
		rate, ok1 := Number(res[1])
		tm, ok2 := Number(res[3])
		if !ok1 || !ok2 || rate < 0 || tm < 0 {
			r.cur.broken = true
			r.sc.Errorf(n, "NetPIPE row %d bytes: rate %q or time %q is not a number", row.bytes, res[1], res[3])
			return
		}
		if res[5] != "" {
			if v, ok := Number(res[5]); !ok || v < 0 {
				r.cur.broken = true
				r.sc.Errorf(n, "NetPIPE row %d bytes: total time %q is not a number", row.bytes, res[5])
				return
			}
		}
		row.rate, row.rateUnit, row.usec = rate, res[2], tm
		if res[4] == "sec" {
			row.usec, _ = npMicro(res[3])
		}
	case integ != nil:
		row.integrity, row.integrityOK = true, integ[1] == "passed"
	case tail == "":
		r.cur.broken = true
		r.sc.Errorf(n, "NetPIPE row %d bytes, %d times has no result: the run stopped before this size was measured", row.bytes, row.times)
		return
	case strings.HasPrefix(tail, "NetPIPE:"):
		r.cur.broken = true
		r.sc.Errorf(n, "NetPIPE row %d bytes, %d times has no result: %s", row.bytes, row.times, tail)
		r.failure(n, tail)
		return
	default:
		r.cur.broken = true
		r.sc.Errorf(n, "NetPIPE row %d bytes: %q is not \"<rate> Mbps in <time> usec\"", row.bytes, tail)
		return
	}
	// A row number or size that goes back starts another run.
	if last := r.cur.last(); last != nil {
		if (row.num >= 0 && last.num >= 0 && row.num <= last.num) || row.bytes <= last.bytes {
			r.endRun()
		}
	}
	if prev := r.cur.last(); prev != nil && prev.integrity != row.integrity {
		r.cur.broken = true
		r.sc.Errorf(n, "NetPIPE row %d bytes mixes an integrity check with measured rows", row.bytes)
		return
	}
	if len(r.cur.rows) == 0 {
		r.handOut() // the previous run can get nothing more
	}
	r.sawRows = true
	r.cur.rows = append(r.cur.rows, row)
}

// outLine reads one line of an -o file; whether the input is one is only
// known at its end, so problems are kept aside until then.
func (r *NetPIPEReader) outLine(n int, t string) {
	f := strings.Fields(t)
	bad := func(format string, args ...any) {
		if len(r.outBad) < MaxErrors {
			r.outBad = append(r.outBad, &SyntaxError{FileName: r.sc.Lines().Name(), Line: n, Msg: fmt.Sprintf(format, args...)})
		}
	}
	if len(f) == 2 {
		if !r.outInteg {
			r.outInteg = true
			bad("NetPIPE -o line has 2 columns (bytes, repeats): an integrity-check (-i) file holds no measurements")
		}
		return
	}
	if len(f) != 3 {
		bad("NetPIPE -o line has %d columns, want 3 (bytes, Mbps, seconds): %q", len(f), t)
		return
	}
	b, ok := Integer(f[0])
	if !ok {
		bad("NetPIPE -o line: size %q is not a byte count", f[0])
		return
	}
	rate, ok1 := Number(f[1])
	usec, ok2 := npMicro(f[2])
	if !ok1 || !ok2 || rate < 0 || usec < 0 {
		bad("NetPIPE -o line: %q or %q is not a number", f[1], f[2])
		return
	}
	r.outRows = append(r.outRows, npRow{num: -1, line: n, bytes: b, rate: rate, rateUnit: "Mbps", usec: usec})
}

func (r *NetPIPEReader) finish() {
	if r.cur.startLine > 0 && len(r.cur.rows) == 0 && !r.cur.broken && r.cur.failure == "" {
		if r.failLine == 0 {
			r.sc.Errorf(r.cur.startLine, "NetPIPE started its main loop but printed no result row")
		}
	}
	r.endRun()
	r.handOut()
	if r.sawRows {
		return
	}
	if r.sc.Errors() > 0 {
		return
	}
	if r.failLine > 0 {
		r.sc.Errorf(r.failLine, "no NetPIPE results: %s", npExplain(r.failText))
		return
	}
	if len(r.outBad) > 0 {
		for _, e := range r.outBad {
			r.sc.Errorf(e.Line, "%s", e.Msg)
		}
		return
	}
	// An -o file: one run per stretch of growing sizes.
	var run *npRun
	for _, row := range r.outRows {
		if run != nil && row.bytes <= run.last().bytes {
			r.sc.Emit(run.line(), run.bundle())
			run = nil
		}
		if run == nil {
			run = &npRun{outFile: true}
		}
		run.rows = append(run.rows, row)
	}
	if run != nil {
		r.sc.Emit(run.line(), run.bundle())
	}
}

// bundle is the result bundle of a run.
func (run *npRun) bundle() *results.Bundle {
	b := results.New()
	name := cmp.Or(run.program, map[string]string{"tcp": "NPtcp", "mpi": "NPmpi", "ib": "NPib"}[run.module], "netpipe")
	b.Benchmark = results.Benchmark{Name: name, Tool: NetPIPETool, ToolBenchmark: name}
	b.Params = maps.Clone(run.params)
	if run.module != "" {
		b.Params = setParam(b.Params, "module", run.module)
	}
	for i, h := range run.hosts {
		if h != "" {
			b.Params = setParam(b.Params, fmt.Sprintf("rank%d_host", i), h)
		}
	}
	if run.outFile {
		b.Params = setParam(b.Params, "source", "netpipe -o file")
	}
	b.Scalars = append(b.Scalars, run.scalars...)

	if len(run.rows) > 0 && run.rows[0].integrity {
		passed := 0
		for _, row := range run.rows {
			if row.integrityOK {
				passed++
			}
		}
		ok := passed == len(run.rows)
		b.Checks = append(b.Checks, results.Check{Name: "integrity", Value: float64(passed), Threshold: float64(len(run.rows)), Op: ">=", Passed: ok})
		if !ok {
			b.Status = results.StatusInvalid
			b.Error = fmt.Sprintf("NetPIPE integrity check failed for %d of %d sizes", len(run.rows)-passed, len(run.rows))
		}
	} else {
		run.samples(b)
	}
	if run.failure != "" {
		b.Status = results.StatusFailed
		b.Error = fmt.Sprintf("line %d: %s", run.failureLine, npExplain(run.failure))
	}
	return b
}

// samples adds a run's curves to b, one metric after the other.
func (run *npRun) samples(b *results.Bundle) {
	// Streaming runs time one-way messages sent back to back: NetPIPE says
	// itself that this is no latency.
	stream := run.params["mode"] == "stream"
	for _, row := range run.rows {
		mbps := row.rate
		if row.rateUnit == "MBps" {
			mbps = row.rate * 8
		}
		b.Samples = append(b.Samples, results.Sample{Metric: "bandwidth", Unit: results.UnitMBps,
			X: results.F(float64(row.bytes)), XUnit: results.UnitBytes, Value: mbps * npMbpsToMBps, Iterations: int(row.times)})
	}
	for _, row := range run.rows {
		s := results.Sample{Metric: "bandwidth_mbps", Unit: "Mbps", X: results.F(float64(row.bytes)), XUnit: results.UnitBytes,
			Value: row.rate, Iterations: int(row.times)}
		if row.rateUnit == "MBps" {
			s.Metric, s.Unit = "bandwidth_mibps", "MiB/s"
		}
		b.Samples = append(b.Samples, s)
	}
	if stream {
		return
	}
	for _, row := range run.rows {
		b.Samples = append(b.Samples, results.Sample{Metric: "latency", Unit: results.UnitMicroseconds,
			X: results.F(float64(row.bytes)), XUnit: results.UnitBytes, Value: row.usec, Iterations: int(row.times)})
	}
}

// npMicro reads seconds as printed and returns microseconds, shifting the
// decimal exponent rather than multiplying, so that "0.000123" is 123 and
// not 123.00000000000001.
func npMicro(s string) (float64, bool) {
	if _, ok := Number(s); !ok {
		return 0, false
	}
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	e := int64(0)
	if hasExp {
		var err error
		if e, err = strconv.ParseInt(exp, 10, 32); err != nil {
			return 0, false
		}
	}
	v, err := strconv.ParseFloat(mant+"e"+strconv.FormatInt(e+6, 10), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// npExplain says what a failure message means, quoting it.
func npExplain(t string) string {
	switch {
	case strings.Contains(t, "PMI support"):
		return fmt.Sprintf("the MPI library could not start under srun (%q): use srun --mpi=pmix, or mpirun", t)
	case strings.HasPrefix(strings.TrimLeft(t, "0123456789: "), "*** An error occurred in MPI_"):
		return fmt.Sprintf("an MPI call failed (%q)", t)
	case strings.HasPrefix(t, "NetPIPE: "), strings.HasPrefix(t, "Can't open"), strings.HasPrefix(t, "Need two"):
		return fmt.Sprintf("NetPIPE stopped (%q)", t)
	}
	return fmt.Sprintf("the run failed (%q)", t)
}
