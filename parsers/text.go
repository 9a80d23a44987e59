package parsers

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// MaxLine is the longest line a parser reads; a longer one is a syntax
// error rather than an unbounded allocation.
const MaxLine = 1 << 20

// Lines reads an input line by line, counting lines from 1, for the
// Scanner-shaped parsers of this package and of hpl.
type Lines struct {
	sc   *bufio.Scanner
	name string
	n    int
	text string
}

// NewLines reads r; name is used in errors.
func NewLines(name string, r io.Reader) *Lines {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), MaxLine) // grows as needed; most outputs are a few KiB
	return &Lines{sc: sc, name: name}
}

// Scan advances to the next line, without its line ending (\n or \r\n).
func (l *Lines) Scan() bool {
	if !l.sc.Scan() {
		return false
	}
	l.n++
	l.text = strings.TrimSuffix(l.sc.Text(), "\r")
	return true
}

// Text is the current line.
func (l *Lines) Text() string { return l.text }

// Line is the current line's number.
func (l *Lines) Line() int { return l.n }

// Name is the input's name.
func (l *Lines) Name() string { return l.name }

// Err is the first I/O error; a line longer than MaxLine is a syntax error.
func (l *Lines) Err() error {
	err := l.sc.Err()
	if err == bufio.ErrTooLong {
		return SyntaxErrors{{FileName: l.name, Line: l.n + 1, Msg: fmt.Sprintf("line longer than %d bytes", MaxLine)}}
	}
	return err
}

// Errorf makes a syntax error at the current line.
func (l *Lines) Errorf(format string, args ...any) *SyntaxError {
	return &SyntaxError{FileName: l.name, Line: l.n, Msg: fmt.Sprintf(format, args...)}
}

// Number parses a finite decimal number as tools print them ("11.01",
// "7.240e+00", "-3"); "1.2.3", "NaN", "Inf" and hex are refused.
func Number(s string) (float64, bool) {
	if s == "" || strings.ContainsAny(s, "xXpP_") {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// Integer parses a non-negative decimal integer.
func Integer(s string) (int64, bool) {
	if s == "" || len(s) > 18 || strings.ContainsFunc(s, notDigit) {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

func notDigit(c rune) bool { return c < '0' || c > '9' }

// rowLike reports a line that starts like a table row: a digit, or a sign
// or point followed by one ("-16", ".5").
func rowLike(t string) bool {
	i := 0
	if i < len(t) && (t[i] == '-' || t[i] == '+') {
		i++
	}
	if i < len(t) && t[i] == '.' {
		i++
	}
	return i < len(t) && t[i] >= '0' && t[i] <= '9'
}

// clip cuts s to n bytes and marks the cut, for a tool's message quoted in
// a bundle or an error; a rune cut in two is dropped.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// setParam sets m[k] = v, making m if it is nil, and returns m.
func setParam(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}
