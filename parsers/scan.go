package parsers

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/sbench/sbench/results"
)

// Reader is the shape of every line-based output parser, this package's
// and hpl's, after benchfmt's Reader: Scan advances to the next record,
// Result is that record — a run (*Run) or a problem with a line
// (*SyntaxError) — and Err is the I/O error that ended the scan, if any.
// A malformed line never ends the scan: it is one more record, and the
// runs around it are still read.
type Reader interface {
	Scan() bool
	Result() Record
	Err() error
}

// Record is what a Reader hands out: a *Run or a *SyntaxError.
type Record interface {
	// Pos is where the record comes from: the input's name and a line
	// number, 0 when the record is about the whole input.
	Pos() (fileName string, line int)
}

// Run is one run of a tool read from its output.
type Run struct {
	Bundle   *results.Bundle
	FileName string
	Line     int // where the run starts in the input
}

// Pos is the input and line the run starts at.
func (r *Run) Pos() (string, int) { return r.FileName, r.Line }

// Pos is the input and line the error is about.
func (e *SyntaxError) Pos() (string, int) { return e.FileName, e.Line }

// Collect reads every record of rd. A curve that misses a row must not
// pass for a complete one, so any syntax error refuses the whole input:
// Collect returns the runs when there is none, else every syntax error,
// in line order (SyntaxErrors). An I/O error is returned as it is.
func Collect(rd Reader) ([]*results.Bundle, error) {
	var runs []*results.Bundle
	var errs SyntaxErrors
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *Run:
			runs = append(runs, rec.Bundle)
		case *SyntaxError:
			errs = append(errs, rec)
		}
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		// A format finds some problems only when a run ends (a header
		// without rows, a table cut short), after later lines were read;
		// the user reads them top to bottom.
		slices.SortStableFunc(errs, func(a, b *SyntaxError) int { return cmp.Compare(a.Line, b.Line) })
		return nil, errs
	}
	return runs, nil
}

// Scanner is the engine of every Reader: it hands each line of the input
// to the format's line handler, which emits runs and syntax errors as it
// recognizes them, and gives those out one record per Scan. A format's
// reader keeps one, made by NewScanner with its own handlers.
type Scanner struct {
	lines  *Lines
	line   func(text string)
	end    func()
	queue  []Record
	cur    Record
	done   bool
	ioErr  error
	nErrs  int
	capped bool
}

// MaxErrors is how many syntax errors a Scanner hands out before one more
// that says the rest are dropped: garbage fed to the wrong parser must not
// grow the list without end, and past that many the input is plainly not
// the format's.
const MaxErrors = 100

// NewScanner reads r (name is used in errors) line by line: Scan calls
// line with each line's text (without its line ending) until a record is
// emitted, and end once at the end of the input, to emit what the last
// lines left open.
func NewScanner(name string, r io.Reader, line func(text string), end func()) *Scanner {
	return &Scanner{lines: NewLines(name, r), line: line, end: end}
}

// Scan advances to the next record; it is false at the end of the input
// or on an I/O error.
func (s *Scanner) Scan() bool {
	for len(s.queue) == 0 && !s.done {
		if !s.lines.Scan() {
			s.done = true
			if err := s.lines.Err(); err != nil {
				var se SyntaxErrors
				if !errors.As(err, &se) {
					s.ioErr = err
					s.cur = nil
					return false
				}
				for _, e := range se { // a line too long to read
					s.queue = append(s.queue, e)
				}
			}
			s.end()
			break
		}
		s.line(s.lines.Text())
	}
	if len(s.queue) == 0 {
		s.cur = nil
		return false
	}
	s.cur, s.queue = s.queue[0], s.queue[1:]
	return true
}

// Result is the record read by the last successful Scan, nil after the
// end of the input.
func (s *Scanner) Result() Record { return s.cur }

// Err is the I/O error that ended the scan, or nil: syntax errors are
// records.
func (s *Scanner) Err() error { return s.ioErr }

// Lines is the input being read, for the line handler: the current line's
// number and the input's name.
func (s *Scanner) Lines() *Lines { return s.lines }

// Emit hands out b, a run that starts at line, after the records emitted
// before it.
func (s *Scanner) Emit(line int, b *results.Bundle) {
	s.queue = append(s.queue, &Run{Bundle: b, FileName: s.lines.Name(), Line: line})
}

// Errorf hands out a syntax error at line, unless MaxErrors were already.
func (s *Scanner) Errorf(line int, format string, args ...any) {
	switch {
	case s.nErrs < MaxErrors:
		s.nErrs++
		s.queue = append(s.queue, &SyntaxError{FileName: s.lines.Name(), Line: line, Msg: fmt.Sprintf(format, args...)})
	case !s.capped:
		s.capped = true
		s.queue = append(s.queue, &SyntaxError{FileName: s.lines.Name(), Line: line, Msg: "too many errors, the rest are not reported"})
	}
}

// Errors is how many syntax errors were emitted so far, dropped ones not
// counted.
func (s *Scanner) Errors() int { return s.nErrs }

// records gives a reader of this package its Scanner's Scan, Result and
// Err, and keeps Emit and Errorf, which are for the reader's own line
// handler, out of the reader's API.
type records struct{ sc *Scanner }

// Scan advances to the next record, a run or a syntax error; it is false
// at the end of the input or on an I/O error.
func (r records) Scan() bool { return r.sc.Scan() }

// Result is the record read by the last successful Scan: a *Run or a
// *SyntaxError.
func (r records) Result() Record { return r.sc.Result() }

// Err is the I/O error that ended the scan, or nil.
func (r records) Err() error { return r.sc.Err() }

// tableRow reads the fields of a table's row as figures: whole numbers
// (Integer) in the columns where integer(i), finite decimals (Number)
// elsewhere. A row with another field count than the header's (cols
// columns, at line header) or a field that does not parse is a syntax
// error at line, its message starting with what; ok is false then.
func (s *Scanner) tableRow(line int, what string, fields []string, header, cols int, integer func(i int) bool) (row []float64, ok bool) {
	if len(fields) != cols {
		s.Errorf(line, "%s: row has %d columns, the table header (line %d) has %d", what, len(fields), header, cols)
		return nil, false
	}
	row = make([]float64, len(fields))
	for i, f := range fields {
		want := "a number"
		if integer(i) {
			var v int64
			v, ok = Integer(f)
			row[i], want = float64(v), "a non-negative integer"
		} else {
			row[i], ok = Number(f)
		}
		if !ok {
			s.Errorf(line, "%s: column %d is %q, want %s", what, i+1, f, want)
			return nil, false
		}
	}
	return row, true
}
