package parsers

import (
	"errors"
	"fmt"
	"sort"

	"github.com/sbench/sbench/results"
)

// runScanner is what the Scanner-shaped readers (OSU, IMB, perftest) share:
// lines go to the format's line handler, which queues runs and records
// syntax errors; Scan hands the runs out one at a time, Err reports the
// I/O error or every syntax error in line order. A reader embeds it and
// implements Scan as scan(its line handler, what flushes its last run).
type runScanner struct {
	lines *Lines
	queue []*results.Bundle
	cur   *results.Bundle
	errs  SyntaxErrors
	ioErr error
	done  bool
}

// scan advances to the next run; it is false at the end of the input or on
// an I/O error.
func (s *runScanner) scan(line func(string), finish func()) bool {
	for len(s.queue) == 0 && !s.done {
		if !s.lines.Scan() {
			s.done = true
			if err := s.lines.Err(); err != nil {
				var se SyntaxErrors
				if !errors.As(err, &se) {
					s.ioErr = err
					return false
				}
				s.errs = append(s.errs, se...)
			}
			finish()
			break
		}
		line(s.lines.Text())
	}
	if len(s.queue) == 0 {
		s.cur = nil
		return false
	}
	s.cur, s.queue = s.queue[0], s.queue[1:]
	return true
}

// Result is the run read by the last successful Scan.
func (s *runScanner) Result() *results.Bundle { return s.cur }

// Err returns the I/O error that ended the scan, or every syntax error
// found (as SyntaxErrors, in line order), or nil.
func (s *runScanner) Err() error {
	if s.ioErr != nil {
		return s.ioErr
	}
	if len(s.errs) > 0 {
		sort.SliceStable(s.errs, func(i, j int) bool { return s.errs[i].Line < s.errs[j].Line })
		return s.errs
	}
	return nil
}

// cappedErrorf records a syntax error at line, keeping at most max and
// saying once that the rest are dropped: garbage fed to the wrong parser
// must not grow the list without end.
func (s *runScanner) cappedErrorf(max, line int, format string, args ...any) {
	switch {
	case len(s.errs) < max:
		s.errs = append(s.errs, &SyntaxError{FileName: s.lines.Name(), Line: line, Msg: fmt.Sprintf(format, args...)})
	case len(s.errs) == max:
		s.errs = append(s.errs, &SyntaxError{FileName: s.lines.Name(), Line: line, Msg: "too many errors, the rest are not reported"})
	}
}

// recordScanner is what the record-shaped readers (NetPIPE, perf_main,
// sockperf) share: their line handler queues runs and syntax errors alike
// as records (*results.Bundle or *SyntaxError), and Scan hands them out in
// input order. Err is the first I/O error; a line longer than MaxLine is a
// SyntaxErrors.
type recordScanner struct {
	lines  *Lines
	queue  []any
	record any
	done   bool
}

// scan advances to the next run or syntax error; it is false at the end of
// the input.
func (s *recordScanner) scan(line func(string), finish func()) bool {
	for len(s.queue) == 0 && !s.done {
		if !s.lines.Scan() {
			finish()
			s.done = true
			break
		}
		line(s.lines.Text())
	}
	if len(s.queue) == 0 {
		s.record = nil
		return false
	}
	s.record, s.queue = s.queue[0], s.queue[1:]
	return true
}

// Run is the current run, nil if the current record is a syntax error.
func (s *recordScanner) Run() *results.Bundle {
	b, _ := s.record.(*results.Bundle)
	return b
}

// SyntaxError is the current syntax error, nil if the current record is a run.
func (s *recordScanner) SyntaxError() *SyntaxError {
	e, _ := s.record.(*SyntaxError)
	return e
}

// Err is the first I/O error; a line longer than MaxLine is a SyntaxErrors.
func (s *recordScanner) Err() error { return s.lines.Err() }
