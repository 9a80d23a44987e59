package parsers

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/sbench/sbench/results"
)

// The OSU Micro-Benchmarks (OMB) print one run as a title line, a few
// "# key: value" lines, a column header and one row per message size:
//
//	# OSU MPI Allreduce Latency Test v7.4
//	# Datatype: MPI_CHAR.
//	# Size       Avg Latency(us)        Validation
//	1                       1.53              Pass
//
// The layout moved between releases, and this reader follows the printf
// calls of osu_util*.c rather than any one release: 3.x prints "Latency
// (us)" and "Bi-Bandwidth (MB/s)"; 5.x non-blocking collectives print
// Overall/Compute/Pure Comm./Overlap columns, and for ibarrier a header with
// no "#"; barrier tables have no size column; 7.x adds "# Datatype:" before
// or after the header (once per datatype with -T, each a table of its own),
// the Validation column (-c), tail percentiles (-l) and a transmit size
// (derived datatypes).
//
// Each table becomes one bundle. Curves have x = message size in bytes:
// latency (us, with min/max/iterations from -f and P50/P99 from -l),
// bandwidth or bidirectional_bandwidth (MB/s, as OMB prints them),
// message_rate (messages/s); non-blocking collectives add compute_time,
// init_time, test_time, wait_time, pure_comm_latency (us) and overlap (%),
// where latency is OMB's "Overall". Tables without a size column (barrier,
// ibarrier) and osu_init/osu_hello give scalars instead.

func init() {
	Register(Format{
		Name: "osu",
		Tools: "OSU Micro-Benchmarks 3.x-7.x: point-to-point (osu_latency, osu_bw, osu_bibw, osu_mbw_mr, " +
			"osu_multi_lat, osu_latency_mt/mp, persistent), one-sided (osu_put_*, osu_get_*, osu_acc_latency, …), " +
			"blocking, non-blocking and neighborhood collectives, osu_init and osu_hello, host/CUDA/ROCm",
		Sniff: sniffOSU,
		Parse: ParseOSU,
	})
}

// OSUTool is Benchmark.Tool for every OSU run; ToolVersion is the suite's
// release from the title (OMB versions the suite, not each program).
const OSUTool = "osu-micro-benchmarks"

var (
	osuTitleRE   = LazyRegexp(`^#\s*(OSU\s+\S.*?)\s*$`)
	osuVersionRE = LazyRegexp(`^(.*?)\s+v(\d[0-9A-Za-z.+_-]*)$`)
	// Accelerator builds splice "-CUDA" etc. into the title: "OSU MPI-CUDA
	// Latency Test", "OSU MPI_Put-CUDA Latency Test".
	osuAccelRE    = LazyRegexp(`-(CUDA MANAGED|CUDA|ROCM|OPENACC|SYCL|MANAGED)\b`)
	osuPairsRE    = LazyRegexp(`^\[\s*pairs:\s*(\d+)\s*\]\s*\[\s*window size:\s*(\S+)\s*\]$`)
	osuBuffersRE  = LazyRegexp(`^Send Buffer on (.+?) and Receive Buffer on (.+?)$`)
	osuRankMemRE  = LazyRegexp(`^Rank 0 Memory on (.+?) and Rank 1 Memory on (.+?)$`)
	osuDDTRE      = LazyRegexp(`^Set Derived DataTypes block_length to (\d+), stride to (\d+)$`)
	osuThreadsRE  = LazyRegexp(`(?i)^Number of (?:forked )?(processes|threads) in (sender|receiver)$|^Number of (sender|receiver) (processes|threads)$`)
	osuKeyValueRE = LazyRegexp(`^([A-Za-z][A-Za-z0-9 _/-]{0,40}):\s*(\S.*?)$`)
	osuInitRE     = LazyRegexp(`^nprocs:\s*(\d+),\s*min:\s*(\S+)\s*ms,\s*max:\s*(\S+)\s*ms,\s*avg:\s*(\S+)\s*ms$`)
	osuHelloRE    = LazyRegexp(`^This is a test with (\d+) processes$`)
)

// osuPrograms maps titles (without version and accelerator) to the program
// names users know. Keys are compared lowercased and without white space,
// which also absorbs 7.x's "Personalized Exchange" "Latency Test" string
// concatenated without a space. A title missing here keeps its own text as
// the benchmark name. Built on first use, not at init: most
// sbench-runner processes parse nothing.
var osuPrograms = sync.OnceValue(func() map[string]string {
	programs := map[string]string{}
	for _, row := range osuTitles {
		for _, t := range row[2:] {
			programs[osuTitleKey(t)] = row[1]
		}
	}
	return programs
})

// osuTitles are each program's family (the collective operation it times,
// "" for point-to-point: parsers.BenchmarkFamily), its name, then its
// titles: data the compiler lays out, which costs no process anything
// until osuPrograms is built.
var osuTitles = [][]string{
	{"", "osu_latency", "OSU MPI Latency Test"},
	{"", "osu_bw", "OSU MPI Bandwidth Test"},
	{"", "osu_bibw", "OSU MPI Bi-Directional Bandwidth Test"},
	{"", "osu_multi_lat", "OSU MPI Multi Latency Test"},
	{"", "osu_latency_mt", "OSU MPI Multi-threaded Latency Test"},
	{"", "osu_latency_mp", "OSU MPI Multi-process Latency Test"},
	{"", "osu_mbw_mr", "OSU MPI Multiple Bandwidth / Message Rate Test"},
	{"", "osu_latency_persistent", "OSU MPI Latency Persistent Test"},
	{"", "osu_bw_persistent", "OSU MPI Bandwidth Persistent Test"},
	{"", "osu_bibw_persistent", "OSU MPI Bi-Directional Bandwidth Persistent Test"},
	{"", "osu_put_latency", "OSU MPI_Put Latency Test"},
	{"", "osu_get_latency", "OSU MPI_Get latency Test"},
	{"", "osu_put_bw", "OSU MPI_Put Bandwidth Test"},
	{"", "osu_get_bw", "OSU MPI_Get Bandwidth Test"},
	{"", "osu_put_bibw", "OSU MPI_Put Bi-directional Bandwidth Test"},
	{"", "osu_acc_latency", "OSU MPI_Accumulate latency Test"},
	{"", "osu_get_acc_latency", "OSU MPI_Get_accumulate latency Test"},
	{"", "osu_fop_latency", "OSU MPI_Fetch_and_op latency Test"},
	{"", "osu_cas_latency", "OSU MPI_Compare_and_swap latency Test"},
	{"", "osu_hello", "OSU MPI Hello World Test"},
	{"", "osu_init", "OSU MPI Init Test"},
	{"allgather", "osu_allgather", "OSU MPI Allgather Latency Test"},
	{"allgather", "osu_allgatherv", "OSU MPI Allgatherv Latency Test"},
	{"allreduce", "osu_allreduce", "OSU MPI Allreduce Latency Test"},
	{"alltoall", "osu_alltoall", "OSU MPI All-to-All Personalized Exchange Latency Test"},
	{"alltoall", "osu_alltoallv", "OSU MPI All-to-Allv Personalized Exchange Latency Test"},
	{"alltoall", "osu_alltoallw", "OSU MPI All-to-Allw Personalized Exchange Latency Test"},
	{"barrier", "osu_barrier", "OSU MPI Barrier Latency Test"},
	{"bcast", "osu_bcast", "OSU MPI Broadcast Latency Test"},
	{"gather", "osu_gather", "OSU MPI Gather Latency Test"},
	{"gather", "osu_gatherv", "OSU MPI Gatherv Latency Test"},
	{"reduce", "osu_reduce", "OSU MPI Reduce Latency Test"},
	{"reduce_scatter", "osu_reduce_scatter", "OSU MPI Reduce_scatter Latency Test"},
	{"reduce_scatter", "osu_reduce_scatter_block", "OSU MPI Reduce_scatter_block Latency Test"},
	{"scatter", "osu_scatter", "OSU MPI Scatter Latency Test"},
	{"scatter", "osu_scatterv", "OSU MPI Scatterv Latency Test"},
	{"allgather", "osu_iallgather", "OSU MPI Non-blocking Allgather Latency Test"},
	{"allgather", "osu_iallgatherv", "OSU MPI Non-blocking Allgatherv Latency Test"},
	{"allreduce", "osu_iallreduce", "OSU MPI Non-blocking Allreduce Latency Test"},
	{"alltoall", "osu_ialltoall", "OSU MPI Non-blocking All-to-All Latency Test", // 5.x
		"OSU MPI Non-blocking All-to-All Personalized Exchange Latency Test"},
	{"alltoall", "osu_ialltoallv", "OSU MPI Non-blocking All-to-Allv Personalized Exchange Latency Test"},
	{"alltoall", "osu_ialltoallw", "OSU MPI Non-blocking All-to-Allw Personalized Exchange Latency Test"},
	{"barrier", "osu_ibarrier", "OSU MPI Non-blocking Barrier Latency Test"},
	{"bcast", "osu_ibcast", "OSU MPI Non-blocking Broadcast Latency Test"},
	{"gather", "osu_igather", "OSU MPI Non-blocking Gather Latency Test"},
	{"gather", "osu_igatherv", "OSU MPI Non-blocking Gatherv Latency Test"},
	{"reduce", "osu_ireduce", "OSU MPI Non-blocking Reduce Latency Test"},
	{"reduce_scatter", "osu_ireduce_scatter", "OSU MPI Non-blocking Reduce_scatter Latency Test"},
	{"reduce_scatter", "osu_ireduce_scatter_block", "OSU MPI Non-blocking Reduce_scatter_block Latency Test"},
	{"scatter", "osu_iscatter", "OSU MPI Non-blocking Scatter Latency Test"},
	{"scatter", "osu_iscatterv", "OSU MPI Non-blocking Scatterv Latency Test"},
	{"allgather", "osu_neighbor_allgather", "OSU MPI Neighborhood Allgather Latency Test"},
	{"allgather", "osu_neighbor_allgatherv", "OSU MPI Neighborhood Allgatherv Latency Test"},
	{"alltoall", "osu_neighbor_alltoall", "OSU MPI Neighborhood All-to-All Latency Test",
		"OSU MPI Neighbor Alltoall Latency Test"},
	{"alltoall", "osu_neighbor_alltoallv", "OSU MPI Neighborhood All-to-Allv Latency Test"},
	{"alltoall", "osu_neighbor_alltoallw", "OSU MPI Neighborhood All-to-Allw Latency Test"},
	{"allgather", "osu_ineighbor_allgather", "OSU MPI Non-blocking Neighborhood Allgather Latency Test"},
	{"allgather", "osu_ineighbor_allgatherv", "OSU MPI Non-blocking Neighborhood Allgatherv Latency Test",
		"OSU MPI Non-blocking Neighbor Allgatherv Latency Test"},
	{"alltoall", "osu_ineighbor_alltoall", "OSU MPI Non-blocking Neighborhood All-to-All Latency Test"},
	{"alltoall", "osu_ineighbor_alltoallv", "OSU MPI Non-blocking Neighborhood All-to-Allv Latency Test"},
	{"alltoall", "osu_ineighbor_alltoallw", "OSU MPI Non-blocking Neighborhood All-to-Allw Latency Test"},
	{"allgather", "osu_allgather_persistent", "OSU MPI Allgather Persistent Latency Test"},
	{"allgather", "osu_allgatherv_persistent", "OSU MPI Allgatherv Persistent Latency Test"},
	{"allreduce", "osu_allreduce_persistent", "OSU MPI Allreduce Persistent Latency Test"},
	{"alltoall", "osu_alltoall_persistent", "OSU MPI All-to-All Personalized Exchange Persistent Latency Test"},
	{"alltoall", "osu_alltoallv_persistent", "OSU MPI All-to-Allv Personalized Exchange Persistent Latency Test"},
	{"alltoall", "osu_alltoallw_persistent", "OSU MPI All-to-Allw Personalized Exchange Persistent Latency Test"},
	{"barrier", "osu_barrier_persistent", "OSU MPI Barrier Persistent Latency Test"},
	{"bcast", "osu_bcast_persistent", "OSU MPI Broadcast Persistent Latency Test"},
	{"gather", "osu_gather_persistent", "OSU MPI Gather Persistent Latency Test"},
	{"gather", "osu_gatherv_persistent", "OSU MPI Gatherv Persistent Latency Test"},
	{"reduce", "osu_reduce_persistent", "OSU MPI Reduce Persistent Latency Test"},
	{"reduce_scatter", "osu_reduce_scatter_persistent", "OSU MPI Reduce_scatter Persistent Latency Test"},
	{"reduce_scatter", "osu_reduce_scatter_block_persistent", "OSU MPI Reduce_scatter_block Persistent Latency Test"},
	{"scatter", "osu_scatter_persistent", "OSU MPI Scatter Persistent Latency Test"},
	{"scatter", "osu_scatterv_persistent", "OSU MPI Scatterv Persistent Latency Test"},
	{"", "osu_nccl_latency", "OSU NCCL Latency Test"},
	{"", "osu_nccl_bibw", "OSU NCCL Bi-Directional Bandwidth Test"},
	{"alltoall", "osu_nccl_alltoall", "OSU NCCL All-to-All Personalized Exchange Latency Test"},
}

func osuTitleKey(title string) string {
	return strings.ToLower(strings.Join(strings.Fields(title), ""))
}

// osuBidirectional lists the programs whose bandwidth column counts both
// directions, whatever their header calls it.
var osuBidirectional = map[string]bool{
	"osu_bibw": true, "osu_bibw_persistent": true, "osu_put_bibw": true, "osu_nccl_bibw": true,
}

// An osuColKind is how a column of a result table is read: most are
// osuValue, a figure of the metric its label names.
type osuColKind int

const (
	osuValue osuColKind = iota
	osuSize
	osuMin
	osuMax
	osuIters
	osuBW
	osuValid
	osuTailLat
	osuTailBW
	osuTransmit
	osuMinComm
	osuMaxComm
)

// osuLabels are the column labels OMB prints, matched at the start of
// what is left of a header line; white space inside a label may vary
// (some logs squeeze runs of spaces). metric and unit are what a value
// column measures, in the conventions of results (osuMetric: a bandwidth
// column's metric depends on the benchmark); whole names a column of whole
// numbers in errors.
var osuLabels = []osuColDef{
	{re: osuLabel(`Size`), kind: osuSize, whole: "message size"},
	{re: osuLabel(`Avg Latency\s*\(us\)`), kind: osuValue, metric: "latency", unit: results.UnitMicroseconds},
	{re: osuLabel(`Min Latency\s*\(us\)`), kind: osuMin},
	{re: osuLabel(`Max Latency\s*\(us\)`), kind: osuMax},
	{re: osuLabel(`Latency\s*\(us\)`), kind: osuValue, metric: "latency", unit: results.UnitMicroseconds},
	{re: osuLabel(`Iterations`), kind: osuIters, whole: "iteration count"},
	{re: osuLabel(`Bi-Bandwidth\s*\(MB/s\)`), kind: osuValue, metric: "bidirectional_bandwidth", unit: results.UnitMBps},
	{re: osuLabel(`Bandwidth\s*\(MB/s\)`), kind: osuBW},
	{re: osuLabel(`MB/s`), kind: osuBW},
	{re: osuLabel(`Messages/s`), kind: osuValue, metric: "message_rate", unit: "messages/s"},
	{re: osuLabel(`Validation`), kind: osuValid},
	{re: osuLabel(`P(\d{1,2}) Tail Lat\s*\(us\)`), kind: osuTailLat, metric: "latency", unit: results.UnitMicroseconds},
	{re: osuLabel(`P(\d{1,2}) Tail BW\s*\(MB/s\)`), kind: osuTailBW},
	{re: osuLabel(`Transmit Size`), kind: osuTransmit, metric: "transmit_size", unit: results.UnitBytes, whole: "transmit size"},
	{re: osuLabel(`Overall\s*\(us\)`), kind: osuValue, metric: "latency", unit: results.UnitMicroseconds},
	{re: osuLabel(`Compute\s*\(us\)`), kind: osuValue, metric: "compute_time", unit: results.UnitMicroseconds},
	{re: osuLabel(`Coll\. Init\s*\(us\)`), kind: osuValue, metric: "init_time", unit: results.UnitMicroseconds},
	{re: osuLabel(`MPI_Test\s*\(us\)`), kind: osuValue, metric: "test_time", unit: results.UnitMicroseconds},
	{re: osuLabel(`MPI_Wait\s*\(us\)`), kind: osuValue, metric: "wait_time", unit: results.UnitMicroseconds},
	{re: osuLabel(`Pure Comm\.\s*\(us\)`), kind: osuValue, metric: "pure_comm_latency", unit: results.UnitMicroseconds},
	{re: osuLabel(`Min Comm\.\s*\(us\)`), kind: osuMinComm, metric: "pure_comm_latency", unit: results.UnitMicroseconds},
	{re: osuLabel(`Max Comm\.\s*\(us\)`), kind: osuMaxComm, metric: "pure_comm_latency", unit: results.UnitMicroseconds},
	{re: osuLabel(`Overlap\s*\(%\)`), kind: osuValue, metric: "overlap", unit: "%"},
}

func osuLabel(expr string) *Regexp {
	return LazyRegexp(`^(?i:` + strings.ReplaceAll(expr, " ", `\s+`) + `)(?:\s|$)`)
}

type osuColDef struct {
	re           *Regexp
	kind         osuColKind
	metric, unit string
	whole        string
}

type osuCol struct {
	*osuColDef
	pct int // the percentile of a tail column
}

// osuParseHeader reads a column header. ok is false for a line that is not
// one; err is set for a line that is meant as one ("# Size …") but holds a
// label this reader does not know, so that a new OMB column is reported
// rather than misread as noise.
func osuParseHeader(t string) (cols []osuCol, ok bool, err error) {
	if t == "" || (t[0] >= '0' && t[0] <= '9') || t[0] == '-' {
		return nil, false, nil // a data row or a rule: headers start with '#' or a word
	}
	hashed := strings.HasPrefix(t, "#")
	s := strings.TrimSpace(strings.TrimLeft(t, "#"))
	sized := strings.HasPrefix(strings.ToLower(s), "size")
	for s != "" {
		matched := false
		for i, l := range osuLabels {
			m := l.re.FindStringSubmatch(s)
			if m == nil {
				continue
			}
			c := osuCol{osuColDef: &osuLabels[i]}
			if l.kind == osuTailLat || l.kind == osuTailBW {
				c.pct, _ = strconv.Atoi(m[1])
			}
			cols = append(cols, c)
			s = strings.TrimSpace(s[len(m[0]):])
			matched = true
			break
		}
		if !matched {
			if hashed && sized {
				return nil, false, fmt.Errorf("unknown column %q in result table header", osuFirstWords(s))
			}
			return nil, false, nil
		}
	}
	values := 0
	for i, c := range cols {
		if c.kind == osuSize && i != 0 {
			return nil, false, errors.New("size column not first in result table header")
		}
		if c.kind != osuSize {
			values++
		}
	}
	// A line without "#" must look unmistakably like a header (5.x
	// ibarrier prints one): two labels or more.
	if values == 0 || (!hashed && len(cols) < 2) {
		if hashed && sized {
			return nil, false, errors.New("result table header without a value column")
		}
		return nil, false, nil
	}
	return cols, true, nil
}

func osuFirstWords(s string) string {
	if f := strings.Fields(s); len(f) > 2 {
		return strings.Join(f[:2], " ")
	}
	return s
}

// osuNumberLike reports a token that starts like a number: a data row's
// first field. "1.2.3" is number-like (and then refused by Number), while
// "0:" or "2024-07-04T10:05" are launcher chatter.
func osuNumberLike(s string) bool {
	if s == "" || !(s[0] >= '0' && s[0] <= '9' || s[0] == '-' || s[0] == '.') {
		return false
	}
	digits := false
	for _, c := range s {
		if !strings.ContainsRune("0123456789.eE+-", c) {
			return false
		}
		digits = digits || c >= '0' && c <= '9'
	}
	// "-----" rules drawn by mpirun are not numbers.
	return digits
}

// osuRowLike reports a line that starts like a result row: a number,
// followed by nothing or by another number or a validation verdict.
// "2 total processes killed" is Open MPI's chatter, not a row.
func osuRowLike(fields []string) bool {
	if len(fields) == 0 || !osuNumberLike(fields[0]) {
		return false
	}
	if len(fields) == 1 {
		return true
	}
	f := strings.ToLower(fields[1])
	switch f {
	case "pass", "fail", "nan", "-nan", "inf", "-inf", "+inf":
		return true // a verdict, or a broken figure worth reporting
	}
	return osuNumberLike(f) || f[0] >= '0' && f[0] <= '9'
}

type osuRow struct {
	size int64
	vals []float64 // one per column; a verdict is 1 (Pass) or 0 (Fail)
}

type osuTable struct {
	line     int // of the header, or of the first row for a reused header
	cols     []osuCol
	datatype string
	rows     []osuRow
}

func (t *osuTable) sized() bool { return len(t.cols) > 0 && t.cols[0].kind == osuSize }

// osuRun is one OMB program's output: a title and its tables (one per
// datatype).
type osuRun struct {
	line    int
	title   string // without version and accelerator, e.g. "OSU MPI Latency Test"
	name    string
	version string
	device  string
	bw      string // the metric of its bandwidth columns (osuMetric)
	params  map[string]string
	raw     strings.Builder

	tables   []*osuTable
	table    *osuTable
	datatype string // announced for the next table

	validationError string
	initLine        []string // osu_init's figures
	helloProcs      string
	broken          bool // a syntax error: the run yields no bundle
}

// OSUReader reads OSU Micro-Benchmarks output one run (one table) at a
// time, as a Reader: Scan, Result (a *Run or a *SyntaxError), Err.
//
// A run is handed out once it is over (the next OSU title or the end of the
// input). Launcher chatter around and between runs is skipped; inside a
// run, a line that starts like a result row but does not parse, a header
// without rows or a title without a table is a *SyntaxError. Scanning goes
// on after one; only an I/O error ends the scan.
type OSUReader struct {
	records
	run *osuRun
}

// NewOSUReader returns a reader of r; name is used in errors.
func NewOSUReader(name string, r io.Reader) *OSUReader {
	rd := &OSUReader{}
	rd.sc = NewScanner(name, r, rd.line, rd.flush)
	return rd
}

// ParseOSU collects an OSUReader of r: its runs, or its syntax errors.
func ParseOSU(name string, r io.Reader) ([]*results.Bundle, error) {
	return Collect(NewOSUReader(name, r))
}

func sniffOSU(head []byte) int {
	if !bytes.Contains(head, []byte("OSU")) {
		return 0 // no title: every other tool's output asks here too
	}
	for _, l := range strings.Split(string(head), "\n") {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") && osuTitleRE.MatchString(t) {
			return 90
		}
	}
	return 0
}

func (r *OSUReader) errorAt(line int, format string, args ...any) {
	if r.run != nil {
		r.run.broken = true
	}
	r.sc.Errorf(line, format, args...)
}

func (r *OSUReader) line(text string) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "#") {
		// Not a title: skip the regexp, which every data row would pay.
	} else if m := osuTitleRE.FindStringSubmatch(t); m != nil {
		r.flush()
		r.run = newOSURun(r.sc.Lines().Line(), m[1])
		r.run.addRaw(text)
		return
	}
	run := r.run
	if run == nil {
		if _, ok, _ := osuParseHeader(t); ok && strings.HasPrefix(t, "#") {
			r.errorAt(r.sc.Lines().Line(), "result table header without an OSU title line before it")
		}
		return
	}
	run.addRaw(text)
	n := r.sc.Lines().Line()
	switch {
	case t == "":
		return
	case strings.HasPrefix(t, "DATA VALIDATION ERROR"):
		run.validationError = t
		return
	}
	cols, ok, err := osuParseHeader(t)
	if err != nil {
		r.errorAt(n, "%v", err)
		return
	}
	if ok {
		r.finishTable()
		run.table = &osuTable{line: n, cols: cols, datatype: run.datatype}
		return
	}
	if strings.HasPrefix(t, "#") {
		r.meta(n, strings.TrimSpace(strings.TrimPrefix(t, "#")))
		return
	}
	// The name first: every data row of every other test would pay the
	// regexps.
	if run.name == "osu_init" {
		if m := osuInitRE.FindStringSubmatch(t); m != nil {
			run.initLine = m[1:]
			return
		}
	}
	if run.name == "osu_hello" {
		if m := osuHelloRE.FindStringSubmatch(t); m != nil {
			run.helloProcs = m[1]
			return
		}
	}
	fields := strings.Fields(t)
	if !osuRowLike(fields) {
		return // chatter: MPI warnings, PAPI counters, a hung job's message
	}
	if run.table == nil {
		if len(run.tables) == 0 {
			return // numbers before any header: not ours to read
		}
		// A new datatype's rows under the previous datatype's header.
		prev := run.tables[len(run.tables)-1]
		run.table = &osuTable{line: n, cols: prev.cols, datatype: run.datatype}
	}
	r.row(n, fields)
}

func newOSURun(line int, title string) *osuRun {
	run := &osuRun{line: line, params: map[string]string{}}
	if m := osuVersionRE.FindStringSubmatch(title); m != nil {
		title, run.version = m[1], m[2]
	}
	if m := osuAccelRE.FindStringSubmatch(title); m != nil {
		run.device = strings.ReplaceAll(strings.ToLower(m[1]), " ", "-")
		title = strings.TrimSpace(osuAccelRE.ReplaceAllString(title, ""))
	}
	run.title = strings.Join(strings.Fields(title), " ")
	run.name = cmp.Or(osuPrograms()[osuTitleKey(run.title)], run.title)
	run.bw = "bandwidth"
	if osuBidirectional[run.name] || strings.Contains(strings.ToLower(run.title), "bi-directional") {
		run.bw = "bidirectional_bandwidth"
	}
	return run
}

func (run *osuRun) addRaw(text string) {
	if run.raw.Len()+len(text)+1 <= MaxRaw {
		run.raw.WriteString(text)
		run.raw.WriteByte('\n')
	}
}

// meta reads a "# …" line of a run that is neither title nor header.
func (r *OSUReader) meta(n int, s string) {
	run := r.run
	s = strings.TrimSpace(s)
	if m := osuPairsRE.FindStringSubmatch(s); m != nil {
		if m[2] == "varied" {
			r.errorAt(n, "osu_mbw_mr with varied window sizes (-V) prints a matrix that is not supported; run one window size per job")
			return
		}
		run.params["pairs"], run.params["window_size"] = m[1], m[2]
		return
	}
	if m := osuBuffersRE.FindStringSubmatch(s); m != nil {
		run.params["send_buffer"], run.params["recv_buffer"] = m[1], m[2]
		return
	}
	if m := osuRankMemRE.FindStringSubmatch(s); m != nil {
		run.params["rank0_memory"], run.params["rank1_memory"] = m[1], m[2]
		return
	}
	if m := osuDDTRE.FindStringSubmatch(s); m != nil {
		run.params["ddt_block_length"], run.params["ddt_stride"] = m[1], m[2]
		return
	}
	m := osuKeyValueRE.FindStringSubmatch(s)
	if m == nil {
		return // "# Overall = Coll. Init + Compute + …" and the like
	}
	key, val := strings.TrimSpace(m[1]), strings.TrimSuffix(strings.TrimSpace(m[2]), ".")
	if strings.EqualFold(key, "Datatype") {
		if run.table != nil && len(run.table.rows) == 0 {
			run.table.datatype = val // 7.x point-to-point: header, then datatype
			run.datatype = val
			return
		}
		r.finishTable() // -T with several datatypes: one table each
		run.datatype = val
		return
	}
	if t := osuThreadsRE.FindStringSubmatch(key); t != nil {
		what, side := t[1], t[2]
		if what == "" {
			side, what = t[3], t[4]
		}
		key = strings.ToLower(side + "_" + what)
	} else {
		key = SnakeName(key)
	}
	if key != "" {
		run.params[key] = val
	}
}

// SnakeName turns a label a tool prints ("up tr sv", "||y||_2", "Avg
// Latency(us)") into a parameter or scalar name: its letters and digits,
// lower-cased, each run of anything else one underscore between them.
func SnakeName(s string) string {
	var b strings.Builder
	under := false
	for _, c := range strings.ToLower(s) {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(c)
			under = false
			continue
		}
		under = true
	}
	return b.String()
}

func (r *OSUReader) row(n int, fields []string) {
	tab := r.run.table
	if len(fields) != len(tab.cols) {
		r.errorAt(n, "result row has %d fields, the header at line %d has %d columns", len(fields), tab.line, len(tab.cols))
		return
	}
	row := osuRow{vals: make([]float64, len(fields))}
	for i, c := range tab.cols {
		f := fields[i]
		switch c.kind {
		case osuSize, osuIters, osuTransmit:
			v, ok := Integer(f)
			if !ok {
				r.errorAt(n, "%s %q is not a whole number", c.whole, f)
				return
			}
			row.vals[i] = float64(v)
			if c.kind == osuSize {
				row.size = v
			}
		case osuValid:
			switch {
			case strings.EqualFold(f, "pass"):
				row.vals[i] = 1
			case strings.EqualFold(f, "fail"):
				row.vals[i] = 0
			default:
				r.errorAt(n, "validation %q is neither Pass nor Fail", f)
				return
			}
		default:
			v, ok := Number(f)
			if !ok {
				what := "a number"
				if strings.Contains(strings.ToLower(f), "nan") || strings.Contains(strings.ToLower(f), "inf") {
					what = "a finite number"
				}
				r.errorAt(n, "value %q is not %s", f, what)
				return
			}
			row.vals[i] = v
		}
	}
	if !tab.sized() && len(tab.rows) > 0 {
		r.errorAt(n, "second result row in a table without a size column (header at line %d)", tab.line)
		return
	}
	if tab.sized() && len(tab.rows) > 0 {
		if prev := tab.rows[len(tab.rows)-1].size; row.size <= prev {
			r.errorAt(n, "message size %d after %d: sizes must grow within a table", row.size, prev)
			return
		}
	}
	tab.rows = append(tab.rows, row)
}

func (r *OSUReader) finishTable() {
	run := r.run
	if run == nil || run.table == nil {
		return
	}
	tab := run.table
	run.table = nil
	if len(tab.rows) == 0 && !run.broken { // a broken row already said why
		r.errorAt(tab.line, "result table header without result rows (output cut short?)")
		return
	}
	run.tables = append(run.tables, tab)
}

// flush ends the current run and queues its bundles.
func (r *OSUReader) flush() {
	run := r.run
	if run == nil {
		return
	}
	r.finishTable()
	r.run = nil
	if run.broken {
		return
	}
	switch {
	case len(run.tables) > 0:
		for i, tab := range run.tables {
			// OMB stops at the first failed validation, so its closing
			// "DATA VALIDATION ERROR" line is about the last table.
			r.sc.Emit(run.line, run.bundle(tab, i == len(run.tables)-1))
		}
	case run.name == "osu_init" && run.initLine != nil:
		r.sc.Emit(run.line, run.initBundle(r))
	case run.name == "osu_hello" && run.helloProcs != "":
		b := run.newBundle()
		b.Params["processes"] = run.helloProcs
		v, _ := strconv.ParseFloat(run.helloProcs, 64)
		b.Scalars = append(b.Scalars, results.Scalar{Name: "processes", Unit: results.UnitRanks, Value: v})
		r.sc.Emit(run.line, b)
	default:
		r.sc.Errorf(run.line, "%q has no result table (output cut short?)", run.title)
	}
}

func (run *osuRun) newBundle() *results.Bundle {
	b := results.New()
	b.Benchmark = results.Benchmark{Name: run.name, Tool: OSUTool, ToolBenchmark: run.name, ToolVersion: run.version}
	b.Params = map[string]string{"title": run.title}
	maps.Copy(b.Params, run.params)
	if run.device != "" {
		b.Params["device"] = run.device
	}
	b.Raw = run.raw.String()
	return b
}

func (run *osuRun) initBundle(r *OSUReader) *results.Bundle {
	b := run.newBundle()
	b.Params["processes"] = run.initLine[0]
	for i, name := range []string{"init_time_min", "init_time_max", "init_time"} {
		v, ok := Number(run.initLine[i+1])
		if !ok {
			r.errorAt(run.line, "osu_init time %q is not a number", run.initLine[i+1])
			continue
		}
		b.Scalars = append(b.Scalars, results.Scalar{Name: name, Unit: "ms", Value: v})
	}
	sort.Slice(b.Scalars, func(i, j int) bool { return b.Scalars[i].Name < b.Scalars[j].Name })
	return b
}

// osuMetric is the metric and unit of a value column.
func (run *osuRun) osuMetric(c osuCol) (metric, unit string) {
	if c.kind == osuBW || c.kind == osuTailBW {
		return run.bw, results.UnitMBps
	}
	return c.metric, c.unit
}

// bundle turns one table into a run. Min/max/iterations and P50/P99 join
// the sample of the column they qualify; other percentiles become samples
// of their own ("latency_p90"). A table without a size column (barrier)
// gives scalars.
func (run *osuRun) bundle(tab *osuTable, last bool) *results.Bundle {
	b := run.newBundle()
	if tab.datatype != "" {
		b.Params["datatype"] = tab.datatype
	}
	var failed []string
	// Samples are grouped by metric, in column order, so that each curve
	// reads as one run of points.
	var order []string
	curves := map[string][]results.Sample{}
	// A row's samples, one per metric its columns measure (a few): found
	// by a look along them, and the slice kept from row to row, since
	// curves takes copies.
	var samples []results.Sample
	var x *float64
	get := func(metric, unit string) *results.Sample {
		for i := range samples {
			if samples[i].Metric == metric {
				return &samples[i]
			}
		}
		s := results.Sample{Metric: metric, Unit: unit, X: x}
		if x != nil {
			s.XUnit = results.UnitBytes
		}
		samples = append(samples, s)
		return &samples[len(samples)-1]
	}
	for _, row := range tab.rows {
		x = nil
		if tab.sized() {
			x = results.F(float64(row.size))
		}
		samples = samples[:0]
		for i, c := range tab.cols {
			v := row.vals[i]
			switch c.kind {
			case osuSize:
			case osuValid:
				if v == 0 {
					if x != nil {
						failed = append(failed, fmt.Sprintf("%d bytes", row.size))
					} else {
						failed = append(failed, "the only size")
					}
				}
			case osuMin, osuMax, osuIters:
				s := get("latency", results.UnitMicroseconds)
				switch c.kind {
				case osuMin:
					s.Min = results.F(v)
				case osuMax:
					s.Max = results.F(v)
				default:
					s.Iterations = int(v)
				}
			case osuMinComm:
				get(run.osuMetric(c)).Min = results.F(v)
			case osuMaxComm:
				get(run.osuMetric(c)).Max = results.F(v)
			case osuTailLat, osuTailBW:
				metric, unit := run.osuMetric(c)
				switch c.pct {
				case 50:
					get(metric, unit).P50 = results.F(v)
				case 99:
					get(metric, unit).P99 = results.F(v)
				default:
					get(fmt.Sprintf("%s_p%d", metric, c.pct), unit).Value = v
				}
			default:
				get(run.osuMetric(c)).Value = v
			}
		}
		if x != nil {
			for _, s := range samples {
				if _, seen := curves[s.Metric]; !seen {
					order = append(order, s.Metric)
					curves[s.Metric] = make([]results.Sample, 0, len(tab.rows))
				}
				curves[s.Metric] = append(curves[s.Metric], s)
			}
			continue
		}
		for _, s := range samples {
			b.Scalars = append(b.Scalars, results.Scalar{Name: s.Metric, Unit: s.Unit, Value: s.Value})
			for _, q := range []struct {
				suffix string
				p      *float64
			}{{"_min", s.Min}, {"_max", s.Max}, {"_p50", s.P50}, {"_p99", s.P99}} {
				if q.p != nil {
					b.Scalars = append(b.Scalars, results.Scalar{Name: s.Metric + q.suffix, Unit: s.Unit, Value: *q.p})
				}
			}
			if s.Iterations > 0 {
				b.Scalars = append(b.Scalars, results.Scalar{Name: "iterations", Value: float64(s.Iterations)})
			}
		}
	}
	for _, m := range order {
		b.Samples = append(b.Samples, curves[m]...)
	}
	verdict := ""
	if last {
		verdict = run.validationError
	}
	osuValidate(b, tab, failed, verdict)
	return b
}

// osuValidate records OMB's data validation (-c): one check for the run and
// one per failed message size. Any failure makes the run invalid.
func osuValidate(b *results.Bundle, tab *osuTable, failed []string, verdict string) {
	hasColumn := slices.ContainsFunc(tab.cols, func(c osuCol) bool { return c.kind == osuValid })
	if !hasColumn && verdict == "" {
		return
	}
	if len(failed) == 0 && verdict != "" {
		failed = append(failed, "an unreported size")
	}
	b.Checks = append(b.Checks, results.Check{Name: "validation", Value: float64(len(failed)), Threshold: 0, Op: "<=", Passed: len(failed) == 0})
	for _, f := range failed {
		b.Checks = append(b.Checks, results.Check{Name: "validation at " + f, Value: 0, Threshold: 1, Op: ">=", Passed: false})
	}
	if len(failed) > 0 {
		b.Status = results.StatusInvalid
		b.Error = "OSU data validation failed at " + strings.Join(failed, ", ")
		if failed[0] == "an unreported size" {
			b.Error = verdict
		}
	}
}
