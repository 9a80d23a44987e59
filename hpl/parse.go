package hpl

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// Reader reads xhpl output one test (one T/V row) at a time, as every
// output parser does (parsers.Reader): Scan, Result (a *parsers.Run or a
// *parsers.SyntaxError), Err.
//
// A test is only handed out once the run it belongs to is over (the next
// HPLinpack banner, "End of Tests." or the end of the input), because the
// run's closing summary must first be checked against the rows read. A
// malformed line inside a result table is a *parsers.SyntaxError and drops
// its run; scanning goes on with the next run. Only an I/O error ends the
// scan early.
type Reader struct {
	sc  *parsers.Scanner
	run *hplRun

	// seen records whether the input looked like HPL output at all (a
	// banner or a T/V header), for a clearer error when it holds no test.
	seen bool
}

// NewReader returns a Reader of r; name is used in errors.
func NewReader(name string, r io.Reader) *Reader {
	rd := &Reader{run: &hplRun{}}
	rd.sc = parsers.NewScanner(name, r, rd.line, rd.flush)
	return rd
}

// Scan advances to the next test or syntax error; it returns false at the
// end of the input or on an I/O error.
func (r *Reader) Scan() bool { return r.sc.Scan() }

// Result is the record read by the last successful Scan: a test (a
// *parsers.Run, one bundle) or a *parsers.SyntaxError.
func (r *Reader) Result() parsers.Record { return r.sc.Result() }

// Err is the I/O error that stopped the scan, or nil.
func (r *Reader) Err() error { return r.sc.Err() }

// ParseHPL returns one bundle per T/V row of an xhpl output; any syntax
// error refuses the whole input.
func ParseHPL(name string, r io.Reader) ([]*results.Bundle, error) {
	rd := NewReader(name, r)
	out, err := parsers.Collect(rd)
	if err != nil {
		return nil, err
	}
	if len(out) == 0 && rd.seen {
		return nil, parsers.SyntaxErrors{{FileName: name, Msg: "HPL output without any T/V result row (the run stopped before its first test finished?)"}}
	}
	return out, nil
}

// What the reader is in the middle of. HPL's explanation block uses the
// same "KEY : text" layout as its parameter block, so only the state tells
// "N      : The order of the coefficient matrix A." from "N      :   20000".
const (
	inNothing = iota
	inExplanation
	inParams
	inSummary
)

// hplRun is one execution of xhpl: a banner, a parameter block, tests and a
// closing summary.
type hplRun struct {
	version   string
	params    map[string]string
	paramKeys []string
	lists     map[string]bool
	lastKey   string
	state     int

	eps          string
	pendingEps   bool
	threshold    string
	thresholdVal float64
	hasThreshold bool

	inTable     bool
	headerLine  int
	headerAlone bool // a T/V header not yet followed by its row
	perGPU      bool
	// headerless is a table entered at a row, the T/V header left out of
	// the excerpt (a mailing-list paste): HPL-NVIDIA's per-GPU column is
	// then known by its shape alone.
	headerless bool

	tests []*hplTest

	summary hplSummary
	ended   bool
	bad     bool
}

type hplSummary struct {
	line                           int
	total                          int64
	passed, failed, skipped, unchk int64
	hasPassed, hasFailed           bool
	hasSkipped, hasUnchecked       bool
}

// hplTest is one T/V row with everything HPL prints after it.
type hplTest struct {
	line                 int
	tv                   string
	n, nb, p, q          int64
	timeText, gflopsText string
	time, gflops         float64
	perGPU               *float64
	start, end           string
	timings              []results.Scalar
	checks               []hplCheck
	norms                []results.Scalar
	warning              string
}

type hplCheck struct {
	name, text string
	value      float64
	finite     bool
	passed     bool
}

var (
	// rowStartRE is how a T/V row starts: W (wall time), the process
	// mapping letter (absent in HPL 1.0's "W13R2C4"), a digit.
	rowStartRE = parsers.LazyRegexp(`^W[RC]?[0-9]`)
	// tvRE decodes the T/V code as HPL_pdtest prints it:
	// W, R|C mapping, DEPTH, BCAST digit, RFACT, NDIV, PFACT, NBMIN.
	tvRE       = parsers.LazyRegexp(`^W([RC]?)([0-9]+)([0-5])([LCR])([0-9]+)([LCR])([0-9]+)$`)
	paramRE    = parsers.LazyRegexp(`^([A-Za-z][A-Za-z0-9]*)\s*:(.*)$`)
	timingRE   = parsers.LazyRegexp(`^\+?\s*Max aggregated wall time\s+(.*?)[\s.]*:\s*(\S+)$`)
	summaryRE  = parsers.LazyRegexp(`^([0-9]+)\s+tests?\s+(completed and passed residual checks|completed and failed residual checks|skipped because of illegal input values|completed without checking)`)
	finishedRE = parsers.LazyRegexp(`^Finished\s+([0-9]+)\s+tests? with the following results:$`)
	bannerRE   = parsers.LazyRegexp(`^HPLinpack\s+(\S+)\s+--`)
	// wholeRowRE is a complete T/V row: the code, N NB P Q, Time and
	// Gflops, and HPL-NVIDIA's "( per GPU)" rate. Without its header only
	// this whole shape says that a line is HPL's, where the row's start
	// is enough inside a table.
	wholeRowRE = parsers.LazyRegexp(`^W[RC]?[0-9][0-9A-Z]*(?:\s+[0-9]+){4}(?:\s+` + hplNum + `){2}(?:\s+\(\s*` + hplNum + `\s*\))?$`)
)

// hplNum is how HPL prints Time and Gflops (%18.2f, %18.3e; 2.3's %18.4e).
const hplNum = `[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?`

var bcastNames = map[string]string{"0": "1ring", "1": "1ringM", "2": "2ring", "3": "2ringM", "4": "Blong", "5": "BlongM"}
var factNames = map[string]string{"L": "Left", "C": "Crout", "R": "Right"}
var pmapNames = map[string]string{"R": "Row-major process mapping", "C": "Column-major process mapping"}

// normNames names the norms HPL prints after a failed check (HPL-NVIDIA
// prints them always).
var normNames = map[string]string{
	"||Ax-b||_oo": "norm_ax_b",
	"||A||_oo":    "norm_a_inf",
	"||A||_1":     "norm_a_1",
	"||x||_oo":    "norm_x_inf",
	"||x||_1":     "norm_x_1",
	"||b||_oo":    "norm_b_inf",
}

// errorf records a syntax error at the current line; its run yields no
// bundle.
func (r *Reader) errorf(format string, args ...any) {
	r.sc.Errorf(r.sc.Lines().Line(), format, args...)
	r.run.bad = true
}

func (r *Reader) line(text string) {
	t := strings.TrimSpace(text)
	run := r.run
	if m := bannerRE.FindStringSubmatch(t); m != nil {
		r.flush()
		r.seen = true
		r.run.version = m[1]
		return
	}
	if run.pendingEps && t != "" {
		run.pendingEps = false
		r.setEps(t)
		return
	}
	switch {
	case t == "":
		return
	case t == "An explanation of the input/output parameters follows:":
		run.state = inExplanation
		return
	case t == "The following parameter values will be used:":
		run.state = inParams
		return
	case strings.HasPrefix(t, "- The relative machine precision (eps) is taken to be"):
		run.state = inNothing
		rest := strings.TrimSpace(strings.TrimPrefix(t, "- The relative machine precision (eps) is taken to be"))
		if rest == "" { // some builds print the value on the next line
			run.pendingEps = true
			return
		}
		r.setEps(rest)
		return
	case strings.HasPrefix(t, "- Computational tests pass if scaled residuals are less than"):
		run.state = inNothing
		rest := strings.TrimSpace(strings.TrimPrefix(t, "- Computational tests pass if scaled residuals are less than"))
		v, ok := parsers.Number(rest)
		if !ok {
			r.errorf("threshold %q is not a number", rest)
			return
		}
		run.threshold, run.thresholdVal, run.hasThreshold = rest, v, true
		return
	case t == "End of Tests.":
		run.ended = true
		r.flush()
		return
	}
	if m := finishedRE.FindStringSubmatch(t); m != nil {
		n, ok := parsers.Integer(m[1])
		if !ok {
			r.errorf("test count %q is not a number", m[1])
			return
		}
		run.state = inSummary
		run.inTable = false
		run.summary = hplSummary{line: r.sc.Lines().Line(), total: n}
		return
	}
	if run.state == inSummary {
		r.summaryLine(t)
		return
	}
	if !run.inTable && wholeRowRE.MatchString(t) {
		// A result row quoted without its T/V header: the checks and
		// timings that follow belong to it as they would with the header.
		r.seen = true
		run.state = inNothing
		run.inTable = true
		run.headerless = true
		run.perGPU = false
		r.row(t)
		return
	}
	if run.state == inParams {
		r.paramLine(text, t)
		return
	}
	if f := strings.Fields(t); len(f) >= 7 && f[0] == "T/V" && f[1] == "N" {
		if run.headerAlone {
			r.sc.Errorf(run.headerLine, "T/V header without its result row")
			run.bad = true
		}
		r.seen = true
		run.state = inNothing
		run.inTable = true
		run.headerAlone = true
		run.headerLine = r.sc.Lines().Line()
		run.perGPU = strings.Contains(t, "per GPU")
		run.headerless = false
		return
	}
	if !run.inTable {
		return
	}
	switch {
	case rowStartRE.MatchString(t):
		r.row(t)
	case strings.HasPrefix(t, "HPL_pdgesv() start time"):
		if c := run.current(); c != nil {
			c.start = strings.TrimSpace(strings.TrimPrefix(t, "HPL_pdgesv() start time"))
		}
	case strings.HasPrefix(t, "HPL_pdgesv() end time"):
		if c := run.current(); c != nil {
			c.end = strings.TrimSpace(strings.TrimPrefix(t, "HPL_pdgesv() end time"))
		}
	case strings.HasPrefix(t, "||") && strings.Contains(t, "......"):
		r.checkLine(t)
	case strings.HasPrefix(t, "||") && strings.Contains(t, ". .") && strings.Contains(t, "="):
		r.normLine(t)
	case timingRE.MatchString(t):
		r.timingLine(t)
	case strings.Contains(t, ">>>"):
		// HPL_pwarn: ">>> [0,0] Error code returned by solve is 3, skip <<<"
		i, j := strings.Index(t, ">>>")+len(">>>"), strings.LastIndex(t, "<<<")
		if c := run.current(); c != nil && len(c.checks) == 0 && j > i {
			c.warning = strings.TrimSpace(t[i:j])
		}
	}
}

func (run *hplRun) current() *hplTest {
	if len(run.tests) == 0 {
		return nil
	}
	return run.tests[len(run.tests)-1]
}

func (r *Reader) setEps(s string) {
	if _, ok := parsers.Number(s); !ok {
		r.errorf("machine precision %q is not a number", s)
		return
	}
	r.run.eps = s
}

func (r *Reader) paramLine(raw, t string) {
	run := r.run
	if m := paramRE.FindStringSubmatch(t); m != nil {
		key := strings.ToUpper(m[1])
		if run.params == nil {
			run.params = map[string]string{}
		}
		if _, dup := run.params[key]; !dup {
			run.paramKeys = append(run.paramKeys, key)
		}
		run.params[key] = strings.Join(strings.Fields(m[2]), " ")
		run.lastKey = key
		return
	}
	// HPL wraps lists of more than 8 values onto lines indented by 8
	// spaces, with no key.
	if run.lastKey != "" && (strings.HasPrefix(raw, " ") || strings.HasPrefix(raw, "\t")) && !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "=") {
		run.params[run.lastKey] += " " + strings.Join(strings.Fields(t), " ")
		if len(run.params[run.lastKey]) > maxParamLen {
			r.errorf("parameter %s is longer than %d bytes", run.lastKey, maxParamLen)
			run.state = inNothing
		}
		return
	}
	run.state = inNothing
}

// maxParamLen bounds a parameter's value: HPL caps its lists at a few dozen
// values (HPL_MAX_PARAM), far shorter than this.
const maxParamLen = 4096

func (r *Reader) row(t string) {
	run := r.run
	f := strings.Fields(t)
	extra := ""
	if len(f) > 7 {
		extra = strings.Join(f[7:], " ")
		f = f[:7]
	}
	if len(f) < 7 {
		r.errorf("T/V row %q has %d columns, want 7 (T/V N NB P Q Time Gflops)", t, len(f))
		return
	}
	c := &hplTest{line: r.sc.Lines().Line(), tv: f[0], timeText: f[5], gflopsText: f[6]}
	ints := []*int64{&c.n, &c.nb, &c.p, &c.q}
	for i, name := range []string{"N", "NB", "P", "Q"} {
		v, ok := parsers.Integer(f[i+1])
		if !ok || v > math.MaxInt32 {
			r.errorf("T/V row: %s %q is not a count", name, f[i+1])
			return
		}
		*ints[i] = v
	}
	var ok bool
	if c.time, ok = parsers.Number(f[5]); !ok || c.time < 0 {
		r.errorf("T/V row: Time %q is not a number of seconds", f[5])
		return
	}
	if c.gflops, ok = parsers.Number(f[6]); !ok || c.gflops < 0 {
		r.errorf("T/V row: Gflops %q is not a rate", f[6])
		return
	}
	if extra != "" {
		// HPL-NVIDIA adds the rate per GPU: "3.370e+05 ( 4.213e+04)".
		inner := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(extra, "("), ")"))
		v, ok := parsers.Number(inner)
		if !(run.perGPU || run.headerless) || !strings.HasPrefix(extra, "(") || !strings.HasSuffix(extra, ")") || !ok {
			r.errorf("T/V row: unexpected columns after Gflops: %q", extra)
			return
		}
		c.perGPU = &v
	}
	run.headerAlone = false
	run.tests = append(run.tests, c)
}

func (r *Reader) checkLine(t string) {
	c := r.run.current()
	if c == nil || r.run.headerAlone {
		r.errorf("residual check before any T/V result row")
		return
	}
	i := strings.LastIndex(t, "......")
	verdict := strings.TrimSpace(t[i+len("......"):])
	left := t[:i]
	eq := strings.LastIndex(left, "=")
	if eq < 0 {
		r.errorf("residual check %q has no '='", t)
		return
	}
	name := strings.Join(strings.Fields(left[:eq]), "")
	text := strings.TrimSpace(left[eq+1:])
	if verdict != "PASSED" && verdict != "FAILED" {
		r.errorf("residual check ends in %q, want PASSED or FAILED", verdict)
		return
	}
	ck := hplCheck{name: name, text: text, passed: verdict == "PASSED"}
	if v, ok := parsers.Number(text); ok {
		ck.value, ck.finite = v, true
	} else if isNonFinite(text) && !ck.passed {
		// A diverged solve prints nan or inf, and HPL fails it; JSON has
		// no NaN, so the check keeps the largest float: as bad as can be.
		ck.value = math.MaxFloat64
	} else {
		r.errorf("residual %q is not a number", text)
		return
	}
	c.checks = append(c.checks, ck)
}

func isNonFinite(s string) bool {
	switch strings.ToLower(strings.TrimLeft(s, "+-")) {
	case "nan", "inf", "infinity":
		return true
	}
	return false
}

func (r *Reader) normLine(t string) {
	c := r.run.current()
	if c == nil || r.run.headerAlone {
		r.errorf("norm before any T/V result row")
		return
	}
	label := strings.TrimSpace(t[:strings.Index(t, " .")])
	text := strings.TrimSpace(t[strings.LastIndex(t, "=")+1:])
	v, ok := parsers.Number(text)
	if !ok {
		if isNonFinite(text) {
			return // not storable; the failed check says it all
		}
		r.errorf("norm %s %q is not a number", label, text)
		return
	}
	name, known := normNames[label]
	if !known {
		name = "norm_" + snakeWord(label)
	}
	c.norms = append(c.norms, results.Scalar{Name: name, Value: v})
}

func (r *Reader) timingLine(t string) {
	c := r.run.current()
	if c == nil || r.run.headerAlone {
		return
	}
	m := timingRE.FindStringSubmatch(t)
	v, ok := parsers.Number(m[2])
	if !ok {
		r.errorf("timing %q is not a number of seconds", m[2])
		return
	}
	c.timings = append(c.timings, results.Scalar{Name: "time_" + snakeWord(m[1]) + "_s", Unit: "s", Value: v})
}

func (r *Reader) summaryLine(t string) {
	s := &r.run.summary
	m := summaryRE.FindStringSubmatch(t)
	if m == nil {
		if strings.HasPrefix(t, "---") || strings.HasPrefix(t, "===") {
			r.run.state = inNothing
			return
		}
		if len(t) > 0 && t[0] >= '0' && t[0] <= '9' {
			r.errorf("summary line %q not understood", t)
		}
		return
	}
	n, ok := parsers.Integer(m[1])
	if !ok {
		r.errorf("summary count %q is not a number", m[1])
		return
	}
	switch m[2] {
	case "completed and passed residual checks":
		s.passed, s.hasPassed = n, true
	case "completed and failed residual checks":
		s.failed, s.hasFailed = n, true
	case "skipped because of illegal input values":
		s.skipped, s.hasSkipped = n, true
	case "completed without checking":
		s.unchk, s.hasUnchecked = n, true
	}
}

// snakeWord is a label's name as parsers.SnakeName writes it, "x" for a
// label with no letter or digit.
func snakeWord(s string) string {
	if n := parsers.SnakeName(s); n != "" {
		return n
	}
	return "x"
}

// flush ends the current run: checks it against its summary and queues one
// bundle per test, unless a syntax error spoilt it.
func (r *Reader) flush() {
	run := r.run
	r.run = &hplRun{}
	if run.bad {
		return
	}
	if run.headerAlone {
		r.sc.Errorf(run.headerLine, "T/V header without its result row")
		return
	}
	var passed, failed, unchecked int64
	for _, c := range run.tests {
		switch {
		case len(c.checks) == 0:
			unchecked++
		case !slices.ContainsFunc(c.checks, func(ck hplCheck) bool { return !ck.passed }):
			passed++
		default:
			failed++
		}
	}
	if s := run.summary; s.line > 0 && run.ended {
		if msg := summaryMismatch(s, passed, failed, unchecked); msg != "" {
			r.sc.Errorf(s.line, "%s", msg)
			return
		}
	}
	withoutChecks := run.summary.hasUnchecked
	for i, c := range run.tests {
		r.sc.Emit(c.line, run.bundle(i, c, withoutChecks))
	}
}

// summaryMismatch compares HPL's closing counts with the rows read. A test
// HPL skipped (memory allocation failed, solver error) may or may not have
// printed its T/V row, so rows without checks only need to fit in the
// skipped count.
func summaryMismatch(s hplSummary, passed, failed, unchecked int64) string {
	if s.hasUnchecked { // threshold <= 0: HPL checked nothing
		if !s.hasSkipped {
			return "summary is incomplete: no \"tests skipped\" line"
		}
		if s.unchk+s.skipped != s.total {
			return fmt.Sprintf("summary does not add up: %d completed without checking + %d skipped != %d finished", s.unchk, s.skipped, s.total)
		}
		if passed+failed > 0 {
			return fmt.Sprintf("summary says tests ran without checking, but %d T/V rows have residual checks", passed+failed)
		}
		if unchecked < s.unchk || unchecked > s.unchk+s.skipped {
			return fmt.Sprintf("summary says %d tests completed without checking, but the output holds %d T/V rows", s.unchk, unchecked)
		}
		return ""
	}
	if !s.hasPassed || !s.hasFailed || !s.hasSkipped {
		return "summary is incomplete: want passed, failed and skipped counts"
	}
	if s.passed+s.failed+s.skipped != s.total {
		return fmt.Sprintf("summary does not add up: %d passed + %d failed + %d skipped != %d finished", s.passed, s.failed, s.skipped, s.total)
	}
	if passed != s.passed || failed != s.failed || unchecked > s.skipped {
		return fmt.Sprintf("summary says %d tests passed, %d failed and %d were skipped, but the output holds %d passed, %d failed and %d unchecked T/V rows",
			s.passed, s.failed, s.skipped, passed, failed, unchecked)
	}
	return ""
}

// bundle makes test i of the run into a result bundle.
func (run *hplRun) bundle(i int, c *hplTest, withoutChecks bool) *results.Bundle {
	b := results.New()
	b.Benchmark = results.Benchmark{Name: "hpl", Tool: "xhpl", ToolBenchmark: "hpl", ToolVersion: run.version}
	b.Params = map[string]string{}
	for _, k := range run.paramKeys {
		b.Params[k] = run.params[k]
	}
	if run.eps != "" {
		b.Params["eps"] = run.eps
	}
	if run.hasThreshold {
		b.Params["threshold"] = run.threshold
	}
	b.Params["test"] = strconv.Itoa(i + 1)
	// The block lists every value of a multi-test run; each bundle states
	// its own test's values, taken from its T/V row, and keeps the list.
	row := decodeTV(c.tv)
	row["N"], row["NB"] = strconv.FormatInt(c.n, 10), strconv.FormatInt(c.nb, 10)
	row["P"], row["Q"] = strconv.FormatInt(c.p, 10), strconv.FormatInt(c.q, 10)
	for k, v := range row {
		if list, ok := b.Params[k]; ok && run.isList(k) {
			b.Params[k+".list"] = list
		}
		b.Params[k] = v
	}
	if c.start != "" {
		b.Params["pdgesv_start"] = c.start
	}
	if c.end != "" {
		b.Params["pdgesv_end"] = c.end
	}
	b.Scalars = []results.Scalar{
		{Name: "n", Value: float64(c.n)},
		{Name: "nb", Value: float64(c.nb)},
		{Name: "p", Value: float64(c.p)},
		{Name: "q", Value: float64(c.q)},
		{Name: "time_s", Unit: "s", Value: c.time},
		{Name: "gflops", Unit: "Gflops", Value: c.gflops},
	}
	if c.perGPU != nil {
		b.Scalars = append(b.Scalars, results.Scalar{Name: "gflops_per_gpu", Unit: "Gflops", Value: *c.perGPU})
	}
	// HPL 1.0 prints three scaled residuals, 2.x one.
	numbered := len(c.checks) > 1 || strings.HasPrefix(run.version, "1.") || (len(c.checks) == 1 && !strings.Contains(c.checks[0].name, "||b||"))
	var problems []string
	for k, ck := range c.checks {
		name := "residual"
		if numbered {
			name = fmt.Sprintf("residual_%d", k+1)
		}
		if ck.finite {
			b.Scalars = append(b.Scalars, results.Scalar{Name: name, Value: ck.value})
		}
		chk := results.Check{Name: ck.name, Value: ck.value, Passed: ck.passed}
		if run.hasThreshold {
			chk.Threshold, chk.Op = run.thresholdVal, "<"
		}
		b.Checks = append(b.Checks, chk)
		if !ck.passed {
			msg := "residual check failed: " + ck.name + " = " + ck.text
			if run.hasThreshold {
				msg += " ≥ " + run.threshold
			}
			problems = append(problems, msg)
		}
	}
	b.Scalars = append(b.Scalars, c.norms...)
	b.Scalars = append(b.Scalars, c.timings...)
	switch {
	case len(c.checks) > 0:
	case withoutChecks:
		problems = append(problems, "HPL ran this test without residual checks (threshold ≤ 0)")
	case c.warning != "":
		problems = append(problems, "no residual check printed for this test: "+c.warning)
	default:
		problems = append(problems, "no residual check printed for this test")
	}
	if !run.ended {
		problems = append(problems, `output ends before "End of Tests." (the run was killed or the file is cut)`)
	}
	if len(problems) > 0 {
		b.Status = results.StatusInvalid
		b.Error = strings.Join(problems, "; ")
	}
	return b
}

// isList reports whether the parameter block gave several values for key.
func (run *hplRun) isList(key string) bool {
	if run.lists == nil {
		run.lists = map[string]bool{}
		for k, v := range run.params {
			run.lists[k] = k != "PMAP" && len(strings.Fields(v)) > 1
		}
	}
	return run.lists[key]
}

// decodeTV spells out a T/V code the way HPL_pdtest builds it, in the
// words of HPL's parameter block. WR10R2C4: wall-clock time, row-major
// process mapping, lookahead DEPTH 1, BCAST 0 (1ring), RFACT Right, NDIV 2,
// PFACT Crout, NBMIN 4.
func decodeTV(tv string) map[string]string {
	p := map[string]string{"tv": tv, "timer": "wall-clock"}
	m := tvRE.FindStringSubmatch(tv)
	if m == nil {
		return p // a vendor's shortened code, e.g. HPL-NVIDIA's "WC0"
	}
	if m[1] != "" { // HPL 1.0 codes (W13R2C4) have no mapping letter
		p["PMAP"] = pmapNames[m[1]]
	}
	p["DEPTH"] = m[2]
	p["BCAST"] = bcastNames[m[3]]
	p["RFACT"] = factNames[m[4]]
	p["NDIV"] = m[5]
	p["PFACT"] = factNames[m[6]]
	p["NBMIN"] = m[7]
	return p
}

// sniffHPL recognises xhpl output by its banner and result table; an
// excerpt without the banner still has the table and residual checks, and
// one without the T/V header (a row pasted into a message) has a whole
// result row.
func sniffHPL(head []byte) int {
	s := string(head)
	hasTable := strings.Contains(s, "T/V") && tvHeaderRE.MatchString(s)
	switch {
	case strings.Contains(s, "HPLinpack") && hasTable:
		return 90
	case hasTable && (strings.Contains(s, "||Ax-b||_oo") || rowRE.MatchString(s)):
		return 70
	case strings.Contains(s, "HPLinpack") && strings.Contains(s, "T/V"):
		return 60
	}
	if !strings.Contains(s, "W") || !headerlessRowRE.MatchString(s) {
		return 0
	}
	// A residual check after the row is HPL's alone; a row by itself is
	// still a shape no other tool prints (a T/V code and six numbers).
	if checkLineRE.MatchString(s) {
		return 70
	}
	return 50
}

var (
	tvHeaderRE = parsers.LazyRegexp(`(?m)^\s*T/V\s+N\s+NB\s+P\s+Q\s+Time\s+Gflops`)
	rowRE      = parsers.LazyRegexp(`(?m)^\s*W[RC]?[0-9][0-9A-Z]*\s+[0-9]+\s+[0-9]+\s+[0-9]+\s+[0-9]+\s`)
	// headerlessRowRE is wholeRowRE anywhere in a text, as Reader.line
	// sees lines: blanks around it trimmed.
	headerlessRowRE = parsers.LazyRegexp(`(?m)^[ \t]*W[RC]?[0-9][0-9A-Z]*(?:[ \t]+[0-9]+){4}(?:[ \t]+` + hplNum + `){2}(?:[ \t]+\([ \t]*` + hplNum + `[ \t]*\))?[ \t\r]*$`)
	checkLineRE     = parsers.LazyRegexp(`(?m)^[ \t]*\|\|Ax-b\|\|_oo.*=.*\.\.\.\.\.\.[ \t]*(?:PASSED|FAILED)`)
)
