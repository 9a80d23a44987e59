package parsers

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sbench/sbench/results"
)

// Every line-based reader of this package is a Reader.
var (
	_ Reader = (*OSUReader)(nil)
	_ Reader = (*IMBReader)(nil)
	_ Reader = (*PerftestReader)(nil)
	_ Reader = (*NetPIPEReader)(nil)
	_ Reader = (*PerfMainReader)(nil)
	_ Reader = (*SockperfReader)(nil)
)

// lineFormat is a format made for these tests: a line "run N" is a run,
// "bad" a syntax error found at once, "late" one found at the end of the
// input, as a table cut short is.
type lineFormat struct {
	records
	late []int
}

func newLineFormat(name string, r io.Reader) *lineFormat {
	rd := &lineFormat{}
	rd.sc = NewScanner(name, r, rd.line, rd.end)
	return rd
}

func (r *lineFormat) line(text string) {
	n := r.sc.Lines().Line()
	switch {
	case strings.HasPrefix(text, "run "):
		b := results.New()
		b.Benchmark.Name = strings.TrimPrefix(text, "run ")
		r.sc.Emit(n, b)
	case text == "bad":
		r.sc.Errorf(n, "bad line")
	case text == "late":
		r.late = append(r.late, n)
	}
}

func (r *lineFormat) end() {
	for _, n := range r.late {
		r.sc.Errorf(n, "found late")
	}
}

// Records come out in the order the format emits them, each with its
// position; Result is nil after the end.
func TestScannerRecords(t *testing.T) {
	rd := newLineFormat("in.txt", strings.NewReader("run a\nlate\nbad\nrun b\n"))
	var got []string
	for rd.Scan() {
		name, line := rd.Result().Pos()
		switch rec := rd.Result().(type) {
		case *Run:
			got = append(got, rec.Bundle.Benchmark.Name+"@"+name+":"+strconv.Itoa(line))
		case *SyntaxError:
			got = append(got, rec.Msg+"@"+name+":"+strconv.Itoa(line))
		}
	}
	want := "a@in.txt:1 bad line@in.txt:3 b@in.txt:4 found late@in.txt:2"
	if strings.Join(got, " ") != want || rd.Err() != nil || rd.Result() != nil {
		t.Errorf("records %q, err %v, last %v; want %q", got, rd.Err(), rd.Result(), want)
	}
}

// Collect refuses an input with any syntax error, and gives the errors in
// line order whatever order the format found them in.
func TestCollect(t *testing.T) {
	runs, err := Collect(newLineFormat("in.txt", strings.NewReader("run a\nrun b\n")))
	if err != nil || len(runs) != 2 || runs[1].Benchmark.Name != "b" {
		t.Errorf("runs %v, %v", runs, err)
	}
	runs, err = Collect(newLineFormat("in.txt", strings.NewReader("run a\nlate\nbad\nrun b\n")))
	want := "in.txt:2: found late\nin.txt:3: bad line"
	var se SyntaxErrors
	if !errors.As(err, &se) || err.Error() != want || runs != nil {
		t.Errorf("runs %v, error %q; want %q", runs, err, want)
	}
}

// Past MaxErrors, one more error says the rest are dropped.
func TestScannerCapsErrors(t *testing.T) {
	_, err := Collect(newLineFormat("in.txt", strings.NewReader(strings.Repeat("bad\n", 3*MaxErrors))))
	var se SyntaxErrors
	if !errors.As(err, &se) || len(se) != MaxErrors+1 || se[MaxErrors].Msg != "too many errors, the rest are not reported" {
		t.Fatalf("%d errors, last %v", len(se), se[len(se)-1])
	}
}

// An I/O error ends the scan and is returned as it is; a line too long to
// read is a syntax error like any other.
func TestScannerErrors(t *testing.T) {
	boom := errors.New("boom")
	_, err := Collect(newLineFormat("in.txt", io.MultiReader(strings.NewReader("run a\n"), iotest.ErrReader(boom))))
	if !errors.Is(err, boom) {
		t.Errorf("I/O error: %v", err)
	}
	_, err = Collect(newLineFormat("in.txt", strings.NewReader("late\n"+strings.Repeat("x", MaxLine+1))))
	var se SyntaxErrors
	if !errors.As(err, &se) || len(se) != 2 || se[0].Msg != "found late" || !strings.Contains(se[1].Msg, "line longer than") || se[1].Line != 2 {
		t.Errorf("long line: %v", err)
	}
}
