package parsers

import (
	"bytes"
	"io"
	"maps"
	"strings"

	"github.com/sbench/sbench/results"
)

// perf_main is the InfiniBand test of Mellanox's IB Gold (VAPI) software
// stack, before OFED's perftest replaced it. Article 000 shows all that is
// known of its output: a banner on both sides,
//
//	*********  perf_main version 10.3  *********
//	*********  CPU is: 2993.00 Mcps    *********
//	*********  Architecture X86     *********
//
// then, on the side that ran the test, one block per test:
//
//	************* RC BW Unidirection Test started for port 1  *********************
//	BW: 935.6 MBytes/sec [size: 128000 bytes, iter: 1000, total 128000000]
//	************* RC BW Unidirection Test Finished for port 1 *********************
//
// The tool's source is not public, so the unit of "MBytes/sec" cannot be
// read from it. It is taken as 2^20 bytes/s, like the MB/sec of perftest
// (its Mellanox-written successor, format_factor 0x100000): on article
// 000's SDR 4X link (8 Gbit/s of data) 935.6 MiB/s is 98.1% of the link,
// what RC writes reach over IB headers at a 2 KiB MTU, where 935.6 decimal
// MB/s would leave 6% unexplained. The printed figure is kept as
// bandwidth_mibps so that a wrong guess can be corrected.
//
// Other tests (UC, UD, latency, bidirectional) print blocks with the same
// banners; only "BW:" result lines are known, so a block with none is
// refused with a message saying so rather than read as empty.

func init() {
	Register(Format{
		Name:  "perf_main",
		Tools: "perf_main (Mellanox IB Gold / VAPI InfiniBand test, e.g. perf_main --send -trc -mbw)",
		Sniff: sniffPerfMain,
		Parse: ParsePerfMain,
	})
}

// PerfMainTool is Benchmark.Tool of every perf_main run.
const PerfMainTool = "perf_main"

var (
	pmStartRE   = LazyRegexp(`^\*+\s*(.+?)\s+Test started for port\s+(\d+)\s*\**$`)
	pmEndRE     = LazyRegexp(`^\*+\s*(.+?)\s+Test Finished for port\s+(\d+)\s*\**$`)
	pmBWRE      = LazyRegexp(`^BW:\s*(\S+)\s+MBytes/sec\s*\[size:\s*(\S+)\s+bytes,\s*iter:\s*(\S+),\s*total\s+(\S+)\]$`)
	pmVersionRE = LazyRegexp(`^\*+\s*perf_main version\s+(\S+)\s*\**$`)
	pmCPURE     = LazyRegexp(`^\*+\s*CPU is:\s*(\S+)\s*Mcps\s*\**$`)
	pmArchRE    = LazyRegexp(`^\*+\s*Architecture\s+(\S+)\s*\**$`)
)

// pmBlock is one "Test started … Test Finished" block.
type pmBlock struct {
	line      int
	label     string // "RC BW Unidirection"
	port      string
	rows      []pmRow
	broken    bool
	finished  bool
	finishedN int
}

type pmRow struct {
	mibps       float64
	size, iters int64
}

// PerfMainReader reads perf_main output one test block at a time, as a
// Reader: Scan, Result (a *Run or a *SyntaxError), Err.
type PerfMainReader struct {
	records
	block   *pmBlock
	version string
	params  map[string]string // from the banner
}

// NewPerfMainReader reads perf_main output from r; name is used in errors.
func NewPerfMainReader(name string, r io.Reader) *PerfMainReader {
	rd := &PerfMainReader{}
	rd.sc = NewScanner(name, r, rd.line, rd.finishInput)
	return rd
}

// finishInput reports a test block the input cut short.
func (r *PerfMainReader) finishInput() {
	if b := r.block; b != nil {
		r.sc.Errorf(b.line, "perf_main %s test started here never finished: the output is cut", b.label)
		r.block = nil
	}
}

// ParsePerfMain collects a PerfMainReader of r: its runs, or its syntax errors.
func ParsePerfMain(name string, r io.Reader) ([]*results.Bundle, error) {
	return Collect(NewPerfMainReader(name, r))
}

func sniffPerfMain(head []byte) int {
	if !bytes.Contains(head, []byte("started")) && !bytes.Contains(head, []byte("BW:")) && !bytes.Contains(head, []byte("perf_main")) {
		return 0 // none of the words the regexps below need
	}
	score := 0
	for _, l := range strings.Split(string(head), "\n") {
		t := strings.TrimSpace(strings.ReplaceAll(l, "\u00a0", " "))
		switch {
		case pmStartRE.MatchString(t), pmBWRE.MatchString(t):
			return 95
		case pmVersionRE.MatchString(t):
			score = 80
		}
	}
	return score
}

func (r *PerfMainReader) line(text string) {
	n := r.sc.Lines().Line()
	// Pasted from a web page (as in article 000), spaces may be NBSPs.
	t := strings.TrimSpace(strings.ReplaceAll(text, "\u00a0", " "))
	switch m := pmStartRE.FindStringSubmatch(t); {
	case m != nil:
		if b := r.block; b != nil {
			r.sc.Errorf(b.line, "perf_main %s test started here never finished", b.label)
		}
		r.block = &pmBlock{line: n, label: strings.Join(strings.Fields(m[1]), " "), port: m[2]}
		return
	}
	if m := pmEndRE.FindStringSubmatch(t); m != nil {
		label := strings.Join(strings.Fields(m[1]), " ")
		b := r.block
		switch {
		case b == nil:
			r.sc.Errorf(n, "perf_main %s test finished without a start line", label)
		case b.label != label || b.port != m[2]:
			r.sc.Errorf(n, "perf_main %s test on port %s finishes the %s test on port %s started at line %d", label, m[2], b.label, b.port, b.line)
			r.block = nil
		case b.broken:
			r.block = nil
		case len(b.rows) == 0:
			r.sc.Errorf(n, "perf_main %s test holds no result line this parser knows (\"BW: … MBytes/sec [size: …]\")", label)
			r.block = nil
		default:
			r.sc.Emit(b.line, r.bundle(b))
			r.block = nil
		}
		return
	}
	if m := pmVersionRE.FindStringSubmatch(t); m != nil {
		r.version = m[1]
		return
	}
	if m := pmCPURE.FindStringSubmatch(t); m != nil {
		r.params = setParam(r.params, "cpu_mcps", m[1])
		return
	}
	if m := pmArchRE.FindStringSubmatch(t); m != nil {
		r.params = setParam(r.params, "arch", m[1])
		return
	}
	if !strings.HasPrefix(t, "BW:") {
		return // the other side's banner, prompts, chatter
	}
	b := r.block
	if b == nil {
		r.sc.Errorf(n, "perf_main result line outside a \"Test started … Test Finished\" block")
		return
	}
	m := pmBWRE.FindStringSubmatch(t)
	if m == nil {
		b.broken = true
		r.sc.Errorf(n, "perf_main result line does not parse: %q", t)
		return
	}
	bw, ok1 := Number(m[1])
	size, ok2 := Integer(m[2])
	iters, ok3 := Integer(m[3])
	_, ok4 := Integer(m[4])
	if !ok1 || !ok2 || !ok3 || !ok4 || bw < 0 {
		b.broken = true
		r.sc.Errorf(n, "perf_main result line has a field that is not a number: %q", t)
		return
	}
	b.rows = append(b.rows, pmRow{mibps: bw, size: size, iters: iters})
}

// bundle is the run of one test block.
func (r *PerfMainReader) bundle(b *pmBlock) *results.Bundle {
	out := results.New()
	words := strings.Fields(b.label) // RC BW Unidirection
	name := "perf_main"
	params := map[string]string{"port": b.port}
	maps.Copy(params, r.params)
	for i, w := range words {
		switch {
		case i == 0:
			params["transport"] = w
			name += " " + w
		case strings.EqualFold(w, "Unidirection"), strings.EqualFold(w, "Bidirection"):
			params["direction"] = strings.ToLower(strings.TrimSuffix(w, "ion")) + "ional"
		default:
			params["test"] = strings.TrimSpace(params["test"] + " " + w)
			name += " " + w
		}
	}
	if params["direction"] == "bidirectional" {
		name += " bidirectional"
	}
	out.Benchmark = results.Benchmark{Name: name, Tool: PerfMainTool, ToolBenchmark: name, ToolVersion: r.version}
	out.Params = params
	for _, row := range b.rows {
		out.Samples = append(out.Samples, results.Sample{Metric: "bandwidth", Unit: results.UnitMBps,
			X: results.F(float64(row.size)), XUnit: results.UnitBytes, Value: row.mibps * (1 << 20) / 1e6, Iterations: int(row.iters)})
	}
	for _, row := range b.rows {
		out.Samples = append(out.Samples, results.Sample{Metric: "bandwidth_mibps", Unit: "MiB/s",
			X: results.F(float64(row.size)), XUnit: results.UnitBytes, Value: row.mibps, Iterations: int(row.iters)})
	}
	return out
}
