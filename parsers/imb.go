package parsers

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
)

// IMB (Intel MPI Benchmarks: IMB-MPI1, IMB-EXT, IMB-IO, IMB-NBC, IMB-RMA)
// prints a header block once, then one "# Benchmarking X" block per
// benchmark and process count, each with a table whose columns depend on the
// benchmark class (IMB_print_header in src_c/IMB_output.c). Every block
// becomes one bundle.
//
// IMB's "Mbytes/sec" changed meaning: up to IMB 4.1 it is 2^20 bytes/s
// (IMB_output.c had MEGA = 1.0/1048576.0, and the 4.0 user guide gives the
// throughput as X/(1.048576*time)); from IMB 2018 on it is 10^6 bytes/s
// (MEGA = 1.0/1e6, "million bytes per second" in the 2021 guide). The
// fixtures confirm both: the 4.0/4.1 runs print size/t/1.048576, the 2018+
// runs print size/t. For versions in between or unknown, the table itself
// decides (see imbMbyteFromRows).

func init() {
	Register(Format{
		Name:  "imb",
		Tools: "Intel MPI Benchmarks: IMB-MPI1, IMB-EXT, IMB-IO, IMB-NBC, IMB-RMA (2.3 to 2021.x)",
		Sniff: sniffIMB,
		Parse: ParseIMB,
	})
}

func sniffIMB(head []byte) int {
	score := 0
	if imbTitleRE.Match(head) {
		score += 50
	}
	if bytes.Contains(head, []byte("# Benchmarking ")) {
		score += 40
	}
	if bytes.Contains(head, []byte("#repetitions")) {
		score += 10
	}
	return min(score, 100)
}

// ParseIMB collects an IMBReader of r: its runs, or its syntax errors.
func ParseIMB(name string, r io.Reader) ([]*results.Bundle, error) {
	return Collect(NewIMBReader(name, r))
}

// Units of IMB's Mbytes/sec, in bytes/s.
const (
	imbMbyteDecimal = 1e6
	imbMbyteBinary  = 1 << 20
)

// imbTol is IMB's tolerance for the "defects" column of CHECK builds
// (TOL in src_c/IMB_declare.h).
const imbTol = 1e-2

var (
	// "#    Intel (R) MPI Benchmarks 4.1, MPI-1 part", "Intel(R) MPI Benchmarks
	// 2019 Update 9, MPI-1 part", "Intel (R) MPI Benchmark Suite V3.2, MPI-1
	// part", and IMB-IO's "MPI-IO partn" (a missing backslash in 2021.x).
	imbTitleRE      = LazyRegexp(`Intel\s*\(R\)\s*MPI\s+Benchmark(?:s|\s+Suite)\s+(.+?),\s*MPI-([A-Za-z0-9]+)\s+part`)
	imbBenchRE      = LazyRegexp(`^#\s*Benchmarking\s+(\S+)`)
	imbProcsRE      = LazyRegexp(`#processes\s*=\s*(\d+)`)
	imbGroupsRE     = LazyRegexp(`\(\s*(\d+)\s+groups?\s+of\s+(\d+)\s+process`)
	imbWaitingRE    = LazyRegexp(`\(\s*(\d+)\s+additional\s+process(?:es)?\s+waiting`)
	imbModeRE       = LazyRegexp(`MODE:\s*(AGGREGATE|NON-AGGREGATE)`)
	imbKeyValRE     = LazyRegexp(`^#\s*([A-Za-z][A-Za-z _/-]*?)\s*:\s*(.*?)\s*$`)
	imbToolRE       = LazyRegexp(`\bIMB-(MPI1|EXT|IO|NBC|RMA)\b`)
	imbCheckErrRE   = LazyRegexp(`^\d+:\s*Error\b`)
	imbSampleFailRE = LazyRegexp(`^(?:\d+\s+)?(\d+)\s+(out-of-mem|int-overflow|time-out)\.`)
)

type imbCol int

const (
	imbColGroup imbCol = iota
	imbColBytes
	imbColReps
	imbColT
	imbColTMin
	imbColTMax
	imbColTAvg
	imbColMBps
	imbColMsgRate
	imbColTOvrl
	imbColTPure
	imbColTCPU
	imbColOverlap
	imbColDefects
)

var imbColumns = map[string]imbCol{
	"Group":        imbColGroup,
	"#bytes":       imbColBytes,
	"#repetitions": imbColReps,
	"t[usec]":      imbColT,
	"t_min[usec]":  imbColTMin,
	"t_max[usec]":  imbColTMax,
	"t_avg[usec]":  imbColTAvg,
	"Mbytes/sec":   imbColMBps,
	"Msg/sec":      imbColMsgRate,
	"t_ovrl[usec]": imbColTOvrl,
	"t_pure[usec]": imbColTPure,
	"t_CPU[usec]":  imbColTCPU,
	"overlap[%]":   imbColOverlap,
	"defects":      imbColDefects,
}

// imbTableHeader returns the columns of a table header line, or false when
// the line is not one. A header starts with #bytes, #repetitions or (for
// -multi 1) Group, and names only known columns.
func imbTableHeader(trimmed string) ([]imbCol, bool) {
	fields := strings.Fields(trimmed)
	if len(fields) < 2 || (fields[0] != "#bytes" && fields[0] != "#repetitions" && fields[0] != "Group") {
		return nil, false
	}
	cols := make([]imbCol, len(fields))
	seen := map[imbCol]bool{}
	for i, f := range fields {
		c, ok := imbColumns[f]
		if !ok || seen[c] {
			return nil, false
		}
		seen[c] = true
		cols[i] = c
	}
	return cols, true
}

// imbHeader is what the header block of one IMB run says.
type imbHeader struct {
	version string // as printed: "4.1", "2019 Update 5", "2021.3"
	part    string // "1", "2", "IO", "NBC", "RMA"
	tool    string // from the calling sequence, when it names the program
	params  map[string]string
	maxLen  int64 // "Maximum message length in bytes"; -1 when unknown
	userLen bool  // "Message lengths were user defined"
	inCall  bool  // the next "#" line is the calling sequence
}

func newIMBHeader() *imbHeader {
	return &imbHeader{params: map[string]string{}, maxLen: -1}
}

// toolName is the IMB program: as the calling sequence names it, else
// by the part the title names.
func (h *imbHeader) toolName() string {
	parts := map[string]string{"1": "IMB-MPI1", "2": "IMB-EXT", "IO": "IMB-IO", "NBC": "IMB-NBC", "RMA": "IMB-RMA"}
	return cmp.Or(h.tool, parts[strings.ToUpper(h.part)], "IMB")
}

// imbMbyteFromVersion returns IMB's Mbyte for a version string, 0 if the
// version does not settle it.
func imbMbyteFromVersion(v string) float64 {
	v = strings.TrimPrefix(strings.TrimSpace(v), "V")
	end := 0
	for end < len(v) && (v[end] >= '0' && v[end] <= '9' || v[end] == '.') {
		end++
	}
	lead := v[:end]
	if i := strings.IndexByte(lead, '.'); i >= 0 {
		lead = lead[:i]
	}
	n, err := strconv.Atoi(lead)
	switch {
	case err != nil:
		return 0
	case n >= 2018:
		return imbMbyteDecimal
	case n >= 1 && n <= 4:
		return imbMbyteBinary
	}
	return 0 // 2017 and anything unexpected: let the data decide
}

// imbBlock is one "# Benchmarking" block being read.
type imbBlock struct {
	line       int
	name       string
	processes  int64
	groups     int64
	waiting    int64
	mode       string
	cols       []imbCol
	headerLine int
	tableDone  bool
	rows       [][]float64
	failures   []string // IMB's own per-size failures: out-of-mem, time-out …
	checkErrs  []string // CHECK builds: "15: Error Reduce_scatter,size = 4,sample #0"
	badRows    int      // rows already reported as syntax errors
	lastLine   int
}

// has is the index of column c, -1 if the table has none.
func (b *imbBlock) has(c imbCol) int { return slices.Index(b.cols, c) }

// IMBReader reads IMB output one benchmark block at a time, as a Reader:
// Scan, Result (a *Run or a *SyntaxError), Err.
//
// A run is handed out once its block is over (the next "# Benchmarking",
// the MPI_Finalize line or the end of the input). Launcher chatter around
// and between blocks is skipped; inside a table, a line that starts like a
// row but does not parse, a header without rows, a block without a table
// or a table that stops short of the maximum message length the header
// announces is a *SyntaxError. Scanning goes on after one; only an I/O
// error ends the scan.
type IMBReader struct {
	hdr *imbHeader
	blk *imbBlock
	// mbyte is IMB's Mbyte in bytes, once known, and how it was learned.
	mbyte      float64
	mbyteBasis string

	records
}

// NewIMBReader reads IMB output from r; name is used in errors.
func NewIMBReader(name string, r io.Reader) *IMBReader {
	rd := &IMBReader{hdr: newIMBHeader()}
	rd.sc = NewScanner(name, r, rd.line, rd.finishBlock)
	return rd
}

func (r *IMBReader) line(text string) {
	n := r.sc.Lines().Line()
	t := strings.TrimSpace(text)
	if m := imbTitleRE.FindStringSubmatch(t); m != nil {
		// A new run's header, e.g. two IMB runs in one job output.
		r.finishBlock()
		r.hdr = newIMBHeader()
		r.hdr.version = strings.TrimSpace(m[1])
		r.hdr.part = m[2]
		if v := imbMbyteFromVersion(r.hdr.version); v != 0 {
			r.mbyte, r.mbyteBasis = v, "version"
		} else {
			r.mbyte, r.mbyteBasis = 0, ""
		}
		return
	}
	if r.blk != nil && r.blk.cols == nil {
		if cols, ok := imbTableHeader(t); ok {
			r.blk.cols, r.blk.headerLine, r.blk.lastLine = cols, n, n
			return
		}
	}
	if strings.HasPrefix(t, "#") {
		if r.blk != nil && r.blk.cols != nil {
			r.blk.tableDone = true
		}
		r.hashLine(t, n)
		return
	}
	if r.blk == nil || r.blk.cols == nil || r.blk.tableDone || t == "" {
		return // launcher chatter, MPI warnings, -show_tail percentiles …
	}
	r.tableLine(t, n)
}

func (r *IMBReader) hashLine(t string, n int) {
	h := r.hdr
	if m := imbBenchRE.FindStringSubmatch(t); m != nil {
		r.finishBlock()
		r.blk = &imbBlock{line: n, name: m[1], lastLine: n}
		h.inCall = false
		return
	}
	if b := r.blk; b != nil && b.cols == nil {
		if m := imbProcsRE.FindStringSubmatch(t); m != nil {
			b.processes, _ = Integer(m[1])
		}
		if m := imbGroupsRE.FindStringSubmatch(t); m != nil {
			b.groups, _ = Integer(m[1])
			b.processes, _ = Integer(m[2])
		}
		if m := imbWaitingRE.FindStringSubmatch(t); m != nil {
			b.waiting, _ = Integer(m[1])
		}
		if m := imbModeRE.FindStringSubmatch(t); m != nil {
			b.mode = strings.ToLower(m[1])
		}
		return
	}
	if strings.Contains(t, "All processes entering MPI_Finalize") {
		r.finishBlock()
		return
	}
	if r.blk != nil {
		return // a rule line after a table
	}
	// The header block.
	body := strings.TrimSpace(strings.TrimPrefix(t, "#"))
	if m := imbToolRE.FindStringSubmatch(body); m != nil && h.tool == "" {
		h.tool = "IMB-" + m[1]
	}
	if h.inCall && body != "" {
		h.params["calling_sequence"] = clip(body, 200)
		h.inCall = false
		return
	}
	switch {
	case strings.HasPrefix(body, "Calling sequence was"):
		h.inCall = true
		return
	case strings.HasPrefix(body, "Message lengths were user defined"), strings.HasPrefix(body, "IO lengths were user defined"):
		h.userLen = true
		h.params["message_lengths"] = "user defined"
		return
	}
	m := imbKeyValRE.FindStringSubmatch(t)
	if m == nil {
		return
	}
	key, val := m[1], m[2]
	name, ok := imbHeaderParams[key]
	switch {
	case !ok || val == "" && key == "MPI Thread Environment":
		return
	case key == "Version":
		val = clip(val, 200)
	case name == "max_message_length":
		if v, ok := Integer(val); ok {
			h.maxLen = v
		}
	}
	h.params[name] = val
}

// imbHeaderParams are the parameters IMB's header lines ("# Date : …")
// give, by the key IMB prints.
var imbHeaderParams = map[string]string{
	"Date": "date", "Machine": "machine", "System": "system", "Release": "release",
	"Version": "kernel_version", "MPI Version": "mpi_version", "MPI Thread Environment": "mpi_thread_environment",
	"Minimum message length in bytes": "min_message_length", "Minimum io portion in bytes": "min_message_length",
	"Maximum message length in bytes": "max_message_length", "Maximum io portion in bytes": "max_message_length",
	"MPI_Datatype": "datatype", "MPI_Datatype for reductions": "reduction_datatype", "MPI_Op": "reduction_op",
}

func (r *IMBReader) tableLine(t string, n int) {
	b := r.blk
	if imbCheckErrRE.MatchString(t) {
		b.checkErrs = append(b.checkErrs, clip(t, 200))
		b.lastLine = n
		return
	}
	if m := imbSampleFailRE.FindStringSubmatch(t); m != nil {
		b.failures = append(b.failures, m[1]+" bytes: "+m[2])
		b.lastLine = n
		return
	}
	if !rowLike(t) {
		return // chatter inside a table (e.g. "Process 15: Got invalid buffer:")
	}
	row, ok := r.sc.tableRow(n, b.name, strings.Fields(t), b.headerLine, len(b.cols), func(i int) bool {
		return b.cols[i] == imbColGroup || b.cols[i] == imbColBytes || b.cols[i] == imbColReps
	})
	if !ok {
		b.badRows++
		return
	}
	b.rows = append(b.rows, row)
	b.lastLine = n
}

// finishBlock turns the open block into a run or a syntax error.
func (r *IMBReader) finishBlock() {
	b := r.blk
	if b == nil {
		return
	}
	r.blk = nil
	if b.cols == nil {
		r.sc.Errorf(b.line, "%s: benchmark block has no result table (truncated output?)", b.name)
		return
	}
	explained := len(b.failures) > 0 || len(b.checkErrs) > 0
	if b.badRows > 0 {
		return // reported row by row
	}
	if len(b.rows) == 0 && !explained {
		r.sc.Errorf(b.headerLine, "%s: table header has no rows", b.name)
		return
	}
	bytesCol := b.has(imbColBytes)
	if bytesCol >= 0 && len(b.rows) > 0 && !explained && !r.hdr.userLen && r.hdr.maxLen >= 0 {
		last := int64(b.rows[len(b.rows)-1][bytesCol])
		if last != r.hdr.maxLen {
			r.sc.Errorf(b.lastLine+1, "%s: table ends at %d bytes, the header promises %d (truncated output?)", b.name, last, r.hdr.maxLen)
			return
		}
	}
	r.sc.Emit(b.line, r.bundle(b))
}

func (r *IMBReader) bundle(b *imbBlock) *results.Bundle {
	h := r.hdr
	out := results.New()
	tool := h.toolName()
	out.Benchmark.Name = tool + " " + b.name
	out.Benchmark.Tool = tool
	out.Benchmark.ToolBenchmark = out.Benchmark.Name
	out.Benchmark.ToolVersion = h.version
	out.Params = b.params(h)
	col := b.has
	iGroup, iBytes, iReps := col(imbColGroup), col(imbColBytes), col(imbColReps)
	iT, iMin, iMax, iAvg := col(imbColT), col(imbColTMin), col(imbColTMax), col(imbColTAvg)
	iBW, iMsg := col(imbColMBps), col(imbColMsgRate)
	iOvrl, iPure, iCPU, iOverlap, iDef := col(imbColTOvrl), col(imbColTPure), col(imbColTCPU), col(imbColOverlap), col(imbColDefects)

	mbyte, basis := r.mbyte, r.mbyteBasis
	if iBW >= 0 && mbyte == 0 {
		if v := imbMbyteFromRows(b); v != 0 {
			// Later tables of the same run use what this one showed.
			r.mbyte, r.mbyteBasis = v, "data"
			mbyte, basis = v, "data"
		} else {
			// Not remembered: a later table may still decide.
			mbyte, basis = imbMbyteDecimal, "assumed"
		}
	}
	if iBW >= 0 {
		out.Params["imb_mbyte"] = strconv.FormatFloat(mbyte, 'f', -1, 64)
		out.Params["imb_mbyte_basis"] = basis
	}

	var negative []string
	maxDefect := math.Inf(-1)
	for _, row := range b.rows {
		var x *float64
		xs := ""
		if iBytes >= 0 {
			x = results.F(row[iBytes])
			xs = fmt.Sprintf(" at %.0f bytes", row[iBytes])
		}
		reps := 0
		if iReps >= 0 {
			reps = int(row[iReps])
		}
		var tags map[string]string
		if iGroup >= 0 {
			tags = map[string]string{"group": strconv.FormatFloat(row[iGroup], 'f', 0, 64)}
		}
		add := func(metric, unit string, v float64) *results.Sample {
			s := results.Sample{Metric: metric, Unit: unit, Value: v, Iterations: reps, Tags: maps.Clone(tags)}
			if x != nil {
				s.X, s.XUnit = results.F(*x), results.UnitBytes
			}
			out.Samples = append(out.Samples, s)
			return &out.Samples[len(out.Samples)-1]
		}
		switch {
		case iAvg >= 0:
			s := add("latency", results.UnitMicroseconds, row[iAvg])
			if iMin >= 0 {
				s.Min = results.F(row[iMin])
			}
			if iMax >= 0 {
				s.Max = results.F(row[iMax])
			}
		case iT >= 0:
			add("latency", results.UnitMicroseconds, row[iT])
		case iPure >= 0:
			// Nonblocking (NBC) and passive-target (RMA) benchmarks: the pure
			// communication time is what compares with the blocking latency.
			add("latency", results.UnitMicroseconds, row[iPure])
		}
		if iOvrl >= 0 {
			add("latency_overlapped", results.UnitMicroseconds, row[iOvrl])
		}
		if iCPU >= 0 {
			add("cpu_time", results.UnitMicroseconds, row[iCPU])
		}
		if iOverlap >= 0 {
			add("overlap", "%", row[iOverlap])
		}
		for _, i := range []int{iT, iMin, iMax, iAvg, iPure, iOvrl} {
			if i >= 0 && row[i] < 0 {
				negative = append(negative, "time"+xs)
				break
			}
		}
		// IMB prints 0.00 Mbytes/sec for 0-byte messages: not a measurement.
		if iBW >= 0 && (x == nil || *x > 0) {
			add("bandwidth", results.UnitMBps, row[iBW]*mbyte/1e6)
			add("bandwidth_imb", "Mbytes/sec", row[iBW])
			if row[iBW] < 0 {
				negative = append(negative, "bandwidth"+xs)
			}
		}
		if iMsg >= 0 {
			add("message_rate", "messages/s", row[iMsg])
		}
		if iDef >= 0 {
			maxDefect = math.Max(maxDefect, row[iDef])
		}
	}

	b.judge(out, iDef >= 0, maxDefect, negative)
	return out
}

// params are the run's parameters: the header's, and what the block says.
func (b *imbBlock) params(h *imbHeader) map[string]string {
	p := maps.Clone(h.params)
	if p == nil {
		p = map[string]string{}
	}
	if b.processes > 0 {
		p["processes"] = strconv.FormatInt(b.processes, 10)
	}
	if b.groups > 0 {
		p["groups"] = strconv.FormatInt(b.groups, 10)
	}
	if b.waiting > 0 {
		p["additional_processes"] = strconv.FormatInt(b.waiting, 10)
	}
	if b.mode != "" {
		p["mode"] = b.mode
	}
	if len(b.failures) > 0 {
		p["failed_sizes"] = strings.Join(b.failures, "; ")
	}
	return p
}

// judge adds the block's checks to out, and makes it invalid for defects
// beyond IMB's tolerance (with a defects column), a failed data check or
// negative figures.
func (b *imbBlock) judge(out *results.Bundle, defects bool, maxDefect float64, negative []string) {
	var problems []string
	if defects && len(b.rows) > 0 {
		c := results.Check{Name: "defects", Value: maxDefect, Threshold: imbTol, Op: "<=", Passed: maxDefect <= imbTol}
		out.Checks = append(out.Checks, c)
		if !c.Passed {
			problems = append(problems, fmt.Sprintf("defects %g exceed IMB's tolerance %g", maxDefect, imbTol))
		}
	}
	if len(b.checkErrs) > 0 {
		out.Checks = append(out.Checks, results.Check{Name: "data_check", Value: float64(len(b.checkErrs)), Threshold: 0, Op: "<=", Passed: false})
		problems = append(problems, "IMB data check failed: "+strings.Join(b.checkErrs, "; "))
	}
	if len(negative) > 0 {
		problems = append(problems, "negative "+strings.Join(negative, ", "))
	}
	if len(problems) > 0 {
		out.Status = results.StatusInvalid
		out.Error = strings.Join(problems, "; ")
	}
}

// imbMbyteFromRows infers IMB's Mbyte from a table that prints both a time
// and Mbytes/sec (or Msg/sec and Mbytes/sec): IMB computes
// Mbytes/sec = s·size/t_max/Mbyte with s = 1, 2 or 4 by benchmark, so
// size/(t·Mbytes/sec) is one of 1, 1/2, 1/4 times Mbyte/10^6. It uses the
// largest message, whose figures carry the most digits, and answers 0 unless
// their rounding is under 0.5%, one unit fits within 1% and the other misses
// by more than 3%.
func imbMbyteFromRows(b *imbBlock) float64 {
	iBytes, iBW := b.has(imbColBytes), b.has(imbColMBps)
	iT := b.has(imbColT)
	if i := b.has(imbColTMax); i >= 0 {
		iT = i
	}
	iMsg := b.has(imbColMsgRate)
	if iBytes < 0 || iBW < 0 || (iT < 0 && iMsg < 0) {
		return 0
	}
	var best []float64
	for _, row := range b.rows {
		if row[iBW] > 0 && row[iBytes] > 0 && (best == nil || row[iBytes] > best[iBytes]) {
			best = row
		}
	}
	if best == nil {
		return 0
	}
	// IMB prints times and Mbytes/sec with two decimals and Msg/sec as an
	// integer; the rounding must be well below the 4.9% between the units.
	var ratio, rounding float64 // ratio: Mbyte/10^6 divided by the benchmark's scale
	if iMsg >= 0 {
		if best[iMsg] <= 0 {
			return 0
		}
		ratio = best[iMsg] * best[iBytes] / (best[iBW] * 1e6)
		rounding = 0.5/best[iMsg] + 0.005/best[iBW]
	} else {
		if best[iT] <= 0 {
			return 0
		}
		ratio = best[iBytes] / (best[iT] * best[iBW])
		rounding = 0.005/best[iT] + 0.005/best[iBW]
	}
	if rounding > 0.005 {
		return 0
	}
	dist := func(unit float64) float64 {
		d := math.Inf(1)
		for _, s := range []float64{1, 2, 4} {
			d = math.Min(d, math.Abs(math.Log(ratio*s/(unit/1e6))))
		}
		return d
	}
	dd, db := dist(imbMbyteDecimal), dist(imbMbyteBinary)
	switch {
	case dd < 0.01 && db > 0.03:
		return imbMbyteDecimal
	case db < 0.01 && dd > 0.03:
		return imbMbyteBinary
	}
	return 0
}
