package slurm

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Field is one Key=Value pair of a Slurm record.
type Field struct {
	Key, Value string
}

// Record is one job (or node) as `scontrol show … -o`, `scontrol show …`
// (multi-line) or the jobcomp/filetxt log write it: Key=Value fields
// separated by white space.
type Record struct {
	Line   int // line of the input where the record starts (1-based)
	Fields []Field
}

// Get returns the value of the first field named key, and whether there was
// one. Slurm writes "(null)" for unset strings; Get returns it as is.
func (r Record) Get(key string) (string, bool) {
	for _, f := range r.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Value is Get without the second result.
func (r Record) Value(key string) string {
	v, _ := r.Get(key)
	return v
}

// SyntaxError is a record the scanner could not read; the scan goes on after
// it.
type SyntaxError struct {
	FileName string
	Line     int
	Msg      string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.FileName, e.Line, e.Msg)
}

// MaxRecordLine caps one input line, so that a corrupt file (a jobcomp log
// without newlines) is an error rather than unbounded memory.
const MaxRecordLine = 1 << 20

// RecordScanner reads Slurm's Key=Value records, in the shape of
// bufio.Scanner:
//
//	sc := NewRecordScanner(r, "jobcomp.txt")
//	for sc.Scan() {
//		rec, bad := sc.Record()
//		if bad != nil { … ; continue } // one malformed record, the scan goes on
//		…
//	}
//	if err := sc.Err(); err != nil { … } // I/O only
//
// A line that starts in column 1 starts a record; an indented line continues
// it (scontrol's multi-line form); a blank line ends it. So one scanner reads
// the one-line form, the multi-line form and the jobcomp log alike.
//
// Values may hold spaces — JobState=CANCELLED by 0, JobName=my job,
// OS=Linux 6.1 #1 SMP — so a field runs until the next word that looks like
// a key: an upper-case letter, then letters, digits or _ : / up to "=". Slurm
// does not quote; a job name such as "run N=4" is read as JobName=run and a
// field N=4, exactly the ambiguity Slurm's own output has.
type RecordScanner struct {
	name string
	sc   *bufio.Scanner
	line int

	pending    string // a line read ahead: the start of the next record
	pendingNum int
	rec        Record
	bad        *SyntaxError
	err        error
}

// NewRecordScanner returns a scanner reading r; name is used in SyntaxErrors.
func NewRecordScanner(r io.Reader, name string) *RecordScanner {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxRecordLine)
	return &RecordScanner{name: name, sc: sc}
}

// Scan advances to the next record or malformed record. It returns false at
// the end of the input or on an I/O error.
func (s *RecordScanner) Scan() bool {
	s.rec, s.bad = Record{}, nil
	if s.err != nil {
		return false
	}
	var lines []string
	start := 0
	if s.pending != "" {
		lines, start = append(lines, s.pending), s.pendingNum
		s.pending = ""
	}
	for s.sc.Scan() {
		s.line++
		text := strings.TrimRight(s.sc.Text(), " \t\r")
		if text == "" {
			if len(lines) > 0 {
				break
			}
			continue
		}
		indented := text[0] == ' ' || text[0] == '\t'
		if len(lines) > 0 && !indented {
			s.pending, s.pendingNum = text, s.line
			break
		}
		if len(lines) == 0 {
			start = s.line
		}
		lines = append(lines, text)
	}
	if err := s.sc.Err(); err != nil {
		s.err = fmt.Errorf("read %s after line %d: %w", s.name, s.line, err)
		return false
	}
	if len(lines) == 0 {
		return false
	}
	fields, msg := parseFields(strings.Join(lines, " "))
	if msg != "" {
		s.bad = &SyntaxError{FileName: s.name, Line: start, Msg: msg}
		return true
	}
	s.rec = Record{Line: start, Fields: fields}
	return true
}

// Record returns the current record, or the reason it could not be read.
func (s *RecordScanner) Record() (Record, *SyntaxError) { return s.rec, s.bad }

// Err returns the I/O error that ended the scan, if any.
func (s *RecordScanner) Err() error { return s.err }

// ParseRecord reads one record from a single line or a multi-line block.
func ParseRecord(text string) (Record, error) {
	fields, msg := parseFields(strings.Join(strings.Fields(text), " "))
	if msg != "" {
		return Record{}, fmt.Errorf("slurm record: %s", msg)
	}
	return Record{Line: 1, Fields: fields}, nil
}

// parseFields splits "A=1 B=x y C=" into fields; msg is non-empty when the
// text does not start with a key.
func parseFields(text string) ([]Field, string) {
	words := strings.Fields(text)
	if len(words) == 0 {
		return nil, "empty record"
	}
	var fields []Field
	var value []string
	flush := func() {
		if n := len(fields); n > 0 {
			fields[n-1].Value = strings.Join(value, " ")
		}
	}
	for _, w := range words {
		if key, first, ok := splitKey(w); ok {
			flush()
			fields = append(fields, Field{Key: key})
			value = value[:0]
			if first != "" {
				value = append(value, first)
			}
			continue
		}
		if len(fields) == 0 {
			return nil, fmt.Sprintf("record starts with %q, not Key=Value", clip(w, 40))
		}
		value = append(value, w)
	}
	flush()
	return fields, ""
}

// splitKey reports whether word starts a field ("Key=value"), and splits it.
func splitKey(word string) (key, value string, ok bool) {
	eq := strings.IndexByte(word, '=')
	if eq <= 0 || word[0] < 'A' || word[0] > 'Z' {
		return "", "", false
	}
	for i := 1; i < eq; i++ {
		c := word[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '_', c == ':', c == '/':
		default:
			return "", "", false
		}
	}
	return word[:eq], word[eq+1:], true
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
