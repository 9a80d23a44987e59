package parsers

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/sbench/sbench/results"
)

// Format is one tool's output format.
type Format struct {
	// Name is what users pass to --format, e.g. "osu".
	Name string
	// Tools describes what produces this format, for help texts.
	Tools string
	// Sniff returns how sure it is, from 0 (not this format) to 100, that
	// head (the first SniffLen bytes of an input) is this format's output.
	Sniff func(head []byte) int
	// Parse returns every run in r. name is used in error messages. A
	// problem with the input is a SyntaxErrors; any other error is I/O.
	Parse func(name string, r io.Reader) ([]*results.Bundle, error)
}

// SniffLen is how much of an input sniffers see.
const SniffLen = 64 << 10

// MinSniffScore is the score below which no format is chosen.
const MinSniffScore = 30

var (
	registryMu sync.RWMutex
	registry   = map[string]Format{}
	// sorted is registry's formats by name, for sniff and Names: made
	// at registration, not for every input.
	sorted []Format
)

// Register adds a format. It panics on a duplicate name or a missing
// function: registration happens at init time, where that is a bug.
func Register(f Format) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if f.Name == "" || f.Sniff == nil || f.Parse == nil {
		panic("parsers: Register of an incomplete format " + f.Name)
	}
	if _, dup := registry[f.Name]; dup {
		panic("parsers: Register called twice for " + f.Name)
	}
	registry[f.Name] = f
	sorted = slices.SortedFunc(maps.Values(registry), func(a, b Format) int { return strings.Compare(a.Name, b.Name) })
}

// formats is every registered format, sorted by name.
func formats() []Format {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return sorted
}

// Lookup returns the format called name.
func Lookup(name string) (Format, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	f, ok := registry[name]
	return f, ok
}

// Names lists the registered formats, sorted.
func Names() []string {
	fs := formats()
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return names
}

// Detect returns the format that is surest of head. Ties go to the name
// that sorts first, so that detection is deterministic. A shell script or
// a file sbench wrote (NotToolOutput) is refused before any sniffer sees
// it, with the reason; so is a text no sniffer is sure enough of. Both
// errors start with NotToolOutputPrefix.
func Detect(head []byte) (Format, error) {
	if len(head) > SniffLen {
		head = head[:SniffLen]
	}
	if why, ok := NotToolOutput("", head); ok {
		return Format{}, fmt.Errorf("%s: %s", NotToolOutputPrefix, why)
	}
	return sniff(head)
}

// sniff asks every format's sniffer.
func sniff(head []byte) (Format, error) {
	best, bestScore := Format{}, 0
	for _, f := range formats() {
		if s := f.Sniff(head); s > bestScore {
			best, bestScore = f, s
		}
	}
	if bestScore < MinSniffScore {
		return Format{}, fmt.Errorf("%s (formats: %s)", NotToolOutputPrefix, strings.Join(Names(), ", "))
	}
	return best, nil
}

// SyntaxError is a problem with one line of an input.
type SyntaxError struct {
	FileName string
	Line     int
	Msg      string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.FileName, e.Line, e.Msg)
	}
	return e.FileName + ": " + e.Msg
}

// SyntaxErrors is every problem found in one input.
type SyntaxErrors []*SyntaxError

func (es SyntaxErrors) Error() string { return errorLines(es) }

// errorLines is the messages of es, one a line.
func errorLines[E error](es []E) string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// MaxRaw caps the raw output kept in each bundle; longer outputs keep their
// head and tail.
const MaxRaw = 256 << 10

// None is the parser of a command whose output holds no figures (hostname,
// an application): Parse keeps the output, whatever it is, as one run's
// Raw, with no samples. Such a run is judged by its command's exit status
// alone, and the runner gives it its wall time (results.MetricWallTime) as
// its figure. None is no registered format: a file ingested alone, without
// its command's exit status and duration, would be a run of nothing.
const None = "none"

// Parse reads every run in data. format is a registered name, "auto" or
// None. With "auto", data is first split into marked sections, each
// detected and parsed on its own and labelled with its marker text; line
// numbers in errors are those of the whole input. Every bundle gets Kind
// "tool", the format's name as Kernel, and its section's raw text.
func Parse(name, format string, data []byte) ([]*results.Bundle, error) {
	if format == None {
		b := results.New()
		b.Benchmark.Kind, b.Benchmark.Kernel, b.Raw = "tool", None, rawText(data)
		return []*results.Bundle{b}, nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, SyntaxErrors{{FileName: name, Msg: "empty input"}}
	}
	if looksBinary(data) {
		return nil, SyntaxErrors{{FileName: name, Msg: "binary data, not a tool's text output"}}
	}
	if format != "auto" {
		f, ok := Lookup(format)
		if !ok {
			return nil, fmt.Errorf("unknown format %q (known: auto, %s)", format, strings.Join(Names(), ", "))
		}
		return parseWith(f, name, Section{Line: 1, Data: data})
	}
	sections := []Section{{Line: 1, Data: data}}
	if !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) { // JSON documents are never split
		sections = Sections(data)
	}
	var all []*results.Bundle
	var errs SyntaxErrors
	for _, sec := range sections {
		f, err := Detect(sec.Data)
		if err != nil && len(sections) == 1 {
			if runs := echoedScript(name, sec); runs != nil {
				all = append(all, runs...)
				continue
			}
		}
		if err != nil {
			if sec.Label == "" && len(sections) > 1 {
				continue // text between marked sections: the job script's own chatter
			}
			where := ""
			if sec.Label != "" {
				where = fmt.Sprintf(" (section %q)", sec.Label)
			}
			errs = append(errs, &SyntaxError{FileName: name, Line: sec.Line, Msg: err.Error() + where})
			continue
		}
		runs, err := parseWith(f, name, sec)
		var se SyntaxErrors
		switch {
		case errors.As(err, &se):
			errs = append(errs, se...)
			continue
		case err != nil:
			return nil, err
		}
		all = append(all, runs...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if len(all) == 0 {
		return nil, SyntaxErrors{{FileName: name, Msg: "no results found in any section"}}
	}
	return all, nil
}

// echoedScript reads the runs of a job log that starts like a shell
// script because the job printed its own script first (cat "$0", bash -v)
// and then ran the tool. Detect refuses the log as a script; the runs are
// kept only when a format reads them without any error, so that a script
// whose comments a sniffer likes ("# OSU …") is still refused, with
// Detect's reason. sbench's own files hold no runs and are not tried.
func echoedScript(name string, sec Section) []*results.Bundle {
	if _, own := SbenchWritten(name, sec.Data); own {
		return nil
	}
	if _, script := NotToolOutput(name, sec.Data); !script {
		return nil
	}
	f, err := sniff(sec.Data[:min(len(sec.Data), SniffLen)])
	if err != nil {
		return nil
	}
	runs, err := parseWith(f, name, sec)
	if err != nil {
		return nil
	}
	return runs
}

func parseWith(f Format, name string, sec Section) ([]*results.Bundle, error) {
	runs, err := f.Parse(name, bytes.NewReader(sec.Data))
	var se SyntaxErrors
	if errors.As(err, &se) {
		for _, e := range se {
			if e.Line > 0 {
				e.Line += sec.Line - 1
			}
		}
		return nil, se
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(runs) == 0 {
		return nil, SyntaxErrors{{FileName: name, Line: sec.Line, Msg: fmt.Sprintf("no %s results found", f.Name)}}
	}
	if f.Name == "bundle" {
		return runs, nil // the runner's own record, kept exactly as written
	}
	raw := rawText(sec.Data)
	for _, b := range runs {
		b.Benchmark.Kind = cmp.Or(b.Benchmark.Kind, "tool")
		b.Benchmark.Kernel = cmp.Or(b.Benchmark.Kernel, f.Name)
		if sec.Label != "" {
			b.Source = sec.Label
			if b.Labels == nil {
				b.Labels = map[string]string{}
			}
			b.Labels["section"] = sec.Label
		}
		b.Raw = cmp.Or(b.Raw, raw)
	}
	return runs, nil
}

// rawText is data as a bundle keeps it: text, and within MaxRaw (its head
// and tail).
func rawText(data []byte) string {
	if len(data) > MaxRaw {
		data = append(append(append([]byte(nil), data[:MaxRaw/2]...), "\n[… output cut by sbench …]\n"...), data[len(data)-MaxRaw/2:]...)
	}
	return strings.ToValidUTF8(string(data), "\uFFFD")
}

// looksBinary reports data that is not text: NUL bytes or mostly invalid
// UTF-8 in the first kilobytes.
func looksBinary(data []byte) bool {
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for len(head) > 0 {
		r, n := utf8.DecodeRune(head)
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		head = head[n:]
	}
	return bad > 16
}
