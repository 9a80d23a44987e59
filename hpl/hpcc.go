package hpl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// ParseHPCC reads an HPC Challenge output file (hpccoutf.txt). It returns
// the HPL tests of its "HPL section" (benchmark "hpcc-hpl", read by the same
// code as xhpl output) and one bundle "hpcc" holding every numeric value of
// the closing summary as a scalar, HPL's residual checks and HPCC's own
// verdict (Success=0 means some test failed its verification).
func ParseHPCC(name string, r io.Reader) ([]*results.Bundle, error) {
	p := &hpccParser{lines: parsers.NewLines(name, r)}
	if err := p.read(); err != nil {
		return nil, err
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	if p.version == "" && !p.hplSeen && !p.summarySeen && p.sections == 0 {
		return nil, nil // not HPCC output: the registry says so
	}
	return p.bundles(), nil
}

type hpccParser struct {
	lines *parsers.Lines
	errs  parsers.SyntaxErrors

	version  string
	hostname string
	// HPCC stamps each section with "Current time (epoch) is …".
	firstTime, lastTime int64

	section      string // the open "Begin of X section.", "" outside
	sectionLine  int
	sections     int
	hplText      bytes.Buffer
	hplLine      int
	hplSeen      bool
	hplStartTime int64 // the last "Current time" before the HPL section
	hplEndTime   int64
	hpl          []*results.Bundle

	summarySeen bool
	summary     []hpccValue
	summaryKeys map[string]bool
}

type hpccValue struct {
	key, text string
	value     float64
	numeric   bool
}

var (
	hpccVersionRE = parsers.LazyRegexp(`HPC Challenge Benchmark version (\S+)`)
	hpccHostRE    = parsers.LazyRegexp(`^Hostname: '(.*)'$`)
	hpccTimeRE    = parsers.LazyRegexp(`^Current time \(([0-9]+)\) is`)
	hpccBeginRE   = parsers.LazyRegexp(`^Begin of (\S+) section\.$`)
	hpccEndRE     = parsers.LazyRegexp(`^End of (\S+) section\.$`)
	hpccKeyRE     = parsers.LazyRegexp(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)
)

// maxEpoch keeps times within what JSON can encode (year 9999).
const maxEpoch = 253402300799

func (p *hpccParser) errorf(format string, args ...any) {
	switch {
	case len(p.errs) < parsers.MaxErrors:
		p.errs = append(p.errs, p.lines.Errorf(format, args...))
	case len(p.errs) == parsers.MaxErrors:
		p.errs = append(p.errs, p.lines.Errorf("too many errors, the rest are not reported"))
	}
}

func (p *hpccParser) read() error {
	for p.lines.Scan() {
		text := p.lines.Text()
		t := strings.TrimSpace(text)
		if p.section == "HPL" && !hpccEndRE.MatchString(t) {
			p.hplText.WriteString(text)
			p.hplText.WriteByte('\n')
		}
		if m := hpccTimeRE.FindStringSubmatch(t); m != nil {
			if v, ok := parsers.Integer(m[1]); ok && v > 0 && v <= maxEpoch {
				if p.firstTime == 0 {
					p.firstTime = v
				}
				p.lastTime = v
				if p.section == "HPL" {
					p.hplEndTime = v
				}
			}
			continue
		}
		if m := hpccBeginRE.FindStringSubmatch(t); m != nil {
			if p.section != "" {
				p.errorf("%q begins inside the %s section (which never ended)", t, p.section)
				return nil
			}
			p.section, p.sectionLine = m[1], p.lines.Line()
			p.sections++
			switch m[1] {
			case "HPL":
				if p.hplSeen {
					p.errorf("a second HPL section")
					return nil
				}
				p.hplSeen = true
				p.hplLine = p.lines.Line() + 1
				p.hplStartTime = p.lastTime
			case "Summary":
				if p.summarySeen {
					p.errorf("a second summary section")
					return nil
				}
				p.summarySeen = true
				p.summaryKeys = map[string]bool{}
			}
			continue
		}
		if m := hpccEndRE.FindStringSubmatch(t); m != nil {
			if m[1] != p.section {
				p.errorf("%q without its Begin", t)
				return nil
			}
			if p.section == "HPL" {
				if err := p.parseHPL(); err != nil {
					return err
				}
			}
			p.section = ""
			continue
		}
		switch p.section {
		case "Summary":
			p.summaryLine(t)
		case "":
			if p.version == "" {
				if m := hpccVersionRE.FindStringSubmatch(t); m != nil {
					p.version = m[1]
				}
			}
			if m := hpccHostRE.FindStringSubmatch(t); m != nil && p.hostname == "" {
				p.hostname = m[1]
			}
		}
	}
	if err := p.lines.Err(); err != nil {
		var se parsers.SyntaxErrors
		if errors.As(err, &se) {
			p.errs = append(p.errs, se...)
			return nil
		}
		return err
	}
	switch p.section {
	case "HPL": // killed during HPL: its tests are read as a cut run
		if err := p.parseHPL(); err != nil {
			return err
		}
	case "Summary":
		p.errs = append(p.errs, &parsers.SyntaxError{FileName: p.lines.Name(), Line: p.sectionLine,
			Msg: `summary section without "End of Summary section." (the file is cut)`})
	}
	return nil
}

// parseHPL reads the HPL section with the xhpl reader; its line numbers are
// made those of the whole file.
func (p *hpccParser) parseHPL() error {
	runs, err := parsers.Collect(NewReader(p.lines.Name(), bytes.NewReader(p.hplText.Bytes())))
	p.hpl = append(p.hpl, runs...)
	var se parsers.SyntaxErrors
	switch {
	case errors.As(err, &se):
		for _, e := range se {
			if e.Line > 0 {
				e.Line += p.hplLine - 1
			}
		}
		p.errs = append(p.errs, se...)
	case err != nil:
		return err
	}
	return nil
}

func (p *hpccParser) summaryLine(t string) {
	if t == "" {
		return
	}
	m := hpccKeyRE.FindStringSubmatch(t)
	if m == nil {
		p.errorf("summary line %q is not KEY=VALUE", t)
		return
	}
	if hpccName(m[1]) == "" {
		// Underscores alone: no scalar can be named after it.
		p.errorf("summary key %q has no letter or digit", m[1])
		return
	}
	if p.summaryKeys[m[1]] {
		p.errorf("summary key %s appears twice", m[1])
		return
	}
	p.summaryKeys[m[1]] = true
	v := hpccValue{key: m[1], text: strings.TrimSpace(m[2])}
	v.value, v.numeric = parsers.Number(v.text)
	p.summary = append(p.summary, v)
}

// hpccUnit is the unit of a summary value, from HPCC's naming: _Gflops,
// _GBs, _GUPs, _usec, _GBytes (GB/s, 10^9 bytes per second, as its
// Latency-Bandwidth section says: "1 MB/s = 10**6 byte/sec"), STREAM rates
// in GB/s, and times in seconds.
func hpccUnit(key string) string {
	switch {
	case strings.HasSuffix(key, "_Tflops"):
		return "Tflops"
	case strings.HasSuffix(key, "_Gflops"):
		return "Gflops"
	case strings.HasSuffix(key, "_GBs"), strings.HasSuffix(key, "_GBytes"),
		strings.HasPrefix(key, "StarSTREAM_"), strings.HasPrefix(key, "SingleSTREAM_"):
		if key == "STREAM_VectorSize" || key == "STREAM_Threads" {
			return ""
		}
		return "GB/s"
	case strings.HasSuffix(key, "_GUPs"):
		return "GUPs"
	case strings.HasSuffix(key, "_usec"):
		return results.UnitMicroseconds
	case strings.HasSuffix(key, "_time"), strings.HasSuffix(key, "_CheckTime"),
		strings.HasSuffix(key, "_TimeBound"), key == "MPI_Wtick", mpifftTimeRE.MatchString(key):
		return "s"
	}
	return ""
}

var mpifftTimeRE = parsers.LazyRegexp(`^MPIFFT_time[0-9]+$`)

// hpccName turns HPCC's summary keys into snake_case: StarDGEMM_Gflops →
// star_dgemm_gflops, MPIRandomAccess_LCG_GUPs → mpi_random_access_lcg_gups,
// MaxPingPongLatency_usec → max_ping_pong_latency_usec. An acronym keeps a
// plural s (GBs → gbs, GUPs → gups), and the unit GBytes stays one word.
func hpccName(key string) string {
	var words []string
	for _, part := range strings.Split(key, "_") {
		switch part {
		case "":
		case "GBytes":
			words = append(words, "gbytes")
		default:
			words = append(words, camelWords(part)...)
		}
	}
	return strings.Join(words, "_")
}

func camelWords(s string) []string {
	rs := []rune(s)
	isUpper := func(r rune) bool { return r >= 'A' && r <= 'Z' }
	isLower := func(r rune) bool { return r >= 'a' && r <= 'z' }
	var words []string
	start := 0
	for i := 1; i < len(rs); i++ {
		split := false
		switch {
		case isUpper(rs[i]) && !isUpper(rs[i-1]):
			split = true // aB, 1B
		case isUpper(rs[i]) && isUpper(rs[i-1]) && i+1 < len(rs) && isLower(rs[i+1]):
			// ABc: the acronym ends before B, unless what follows is the
			// plural s that ends the word (GBs, GUPs).
			split = !(rs[i+1] == 's' && i+2 == len(rs))
		}
		if split {
			words = append(words, strings.ToLower(string(rs[start:i])))
			start = i
		}
	}
	return append(words, strings.ToLower(string(rs[start:])))
}

func (p *hpccParser) bundles() []*results.Bundle {
	hplVersion := ""
	for _, b := range p.hpl {
		hplVersion = b.Benchmark.ToolVersion
		b.Benchmark = results.Benchmark{Name: "hpcc-hpl", Tool: "hpcc", ToolBenchmark: "hpcc-hpl", ToolVersion: p.toolVersion()}
		if hplVersion != "" {
			b.Params["hpl_version"] = hplVersion
		}
		p.place(b, p.hplStartTime, p.hplEndTime)
	}
	out := append([]*results.Bundle(nil), p.hpl...)

	b := results.New()
	b.Benchmark = results.Benchmark{Name: "hpcc", Tool: "hpcc", ToolBenchmark: "hpcc", ToolVersion: p.toolVersion()}
	b.Params = map[string]string{}
	if hplVersion != "" {
		b.Params["hpl_version"] = hplVersion
	}
	p.place(b, p.firstTime, p.lastTime)
	if !p.summarySeen {
		b.Status = results.StatusFailed
		b.Error = "HPCC did not finish: the output has no summary section"
		return append(out, b)
	}
	var problems, notMeasured []string
	for _, v := range p.summary {
		if !v.numeric {
			b.Params[v.key] = v.text
			continue
		}
		unit := hpccUnit(v.key)
		if unit != "" && v.value < 0 {
			// HPCC starts every result at -1 and leaves it there for a
			// test that did not run: not a measurement.
			notMeasured = append(notMeasured, v.key)
			continue
		}
		b.Scalars = append(b.Scalars, results.Scalar{Name: hpccName(v.key), Unit: unit, Value: v.value})
		switch v.key {
		case "CommWorldProcs":
			b.Params["ranks"] = v.text
		case "Success":
			ok := v.value == 1
			b.Checks = append(b.Checks, results.Check{Name: "Success", Value: v.value, Threshold: 1, Op: "==", Passed: ok})
			if !ok {
				problems = append(problems, "hpcc summary says Success="+v.text+" (a test failed its verification)")
			}
		case "MPIRandomAccess_ErrorsFraction", "MPIRandomAccess_LCG_ErrorsFraction":
			if v.value >= 0 {
				// HPCC's own rule: RandomAccess passes with errors in at
				// most 1% of the table.
				ok := v.value <= 0.01
				b.Checks = append(b.Checks, results.Check{Name: v.key, Value: v.value, Threshold: 0.01, Op: "<=", Passed: ok})
				if !ok {
					problems = append(problems, fmt.Sprintf("%s = %s > 0.01", v.key, v.text))
				}
			}
		}
	}
	if len(notMeasured) > 0 {
		b.Params["not_measured"] = strings.Join(notMeasured, " ")
	}
	for i, h := range p.hpl {
		for _, c := range h.Checks {
			name := "HPL " + c.Name
			if len(p.hpl) > 1 {
				name += " (test " + strconv.Itoa(i+1) + ")"
			}
			c.Name = name
			b.Checks = append(b.Checks, c)
		}
		if h.Status != results.StatusOK {
			problems = append(problems, "HPL: "+h.Error)
		}
	}
	if len(problems) > 0 {
		b.Status = results.StatusInvalid
		b.Error = strings.Join(problems, "; ")
	}
	return append(out, b)
}

// toolVersion is the version from the banner or, for a file whose head is
// missing, from the summary's VersionMajor/Minor/Micro.
func (p *hpccParser) toolVersion() string {
	if p.version != "" {
		return p.version
	}
	parts := map[string]string{}
	for _, v := range p.summary {
		parts[v.key] = v.text
	}
	if parts["VersionMajor"] != "" && parts["VersionMinor"] != "" {
		v := parts["VersionMajor"] + "." + parts["VersionMinor"]
		if parts["VersionMicro"] != "" {
			v += "." + parts["VersionMicro"]
		}
		return v
	}
	return ""
}

// place sets a bundle's host and its start and end from HPCC's epoch
// stamps, which unlike HPL's ctime lines carry no time zone ambiguity.
func (p *hpccParser) place(b *results.Bundle, start, end int64) {
	if p.hostname != "" {
		b.Hosts = []results.Host{{Hostname: p.hostname}}
	}
	if start > 0 {
		b.Start = time.Unix(start, 0).UTC()
	}
	if end > 0 && end >= start {
		b.End = time.Unix(end, 0).UTC()
	}
}

// sniffHPCC recognises hpccoutf.txt by its banner; it outbids sniffHPL,
// which also matches the HPL section inside.
func sniffHPCC(head []byte) int {
	s := string(head)
	switch {
	case strings.Contains(s, "HPC Challenge Benchmark"):
		return 95
	case strings.Contains(s, "Begin of Summary section."):
		return 95
	case strings.Contains(s, "Begin of HPL section.") || strings.Contains(s, "Begin of MPIRandomAccess section."):
		return 92
	}
	return 0
}
