package hpl

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// This file models how HPL and HPCC read their input, statement by
// statement after HPL 2.3's testing/ptest/HPL_pdinfo.c and HPCC 1.5's
// src/io.c, so that tests can check that what sbench writes is read back
// as meant — quirks included: fgets cuts lines at 253 characters, and a
// list is walked with lineptr += strlen(num) + 1, which misreads any
// spacing but single spaces between values starting in column 1.

// cFile is a FILE* read with fgets.
type cFile struct {
	data []byte
	pos  int
	eof  bool
}

// fgets reads at most n-1 characters, through the first newline.
func (f *cFile) fgets(n int) string {
	if f.pos >= len(f.data) {
		f.eof = true
		return ""
	}
	end := f.pos
	for end < len(f.data) && end-f.pos < n-1 {
		end++
		if f.data[end-1] == '\n' {
			break
		}
	}
	s := string(f.data[f.pos:end])
	f.pos = end
	return s
}

func isCSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// sscanfS is sscanf(s, "%s", num): it leaves num as it was when s holds
// no token.
func sscanfS(s string, num *string) {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !isCSpace(s[j]) {
		j++
	}
	if j > i {
		*num = s[i:j]
	}
}

// atoi is C's: leading blanks, a sign, digits; anything else ends it.
func atoi(s string) int {
	i := 0
	for i < len(s) && isCSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if neg {
		return -n
	}
	return n
}

// atof is C's, for the forms strconv knows; the longest valid prefix.
func atof(s string) float64 {
	s = strings.TrimLeft(s, " \t\n")
	for j := len(s); j > 0; j-- {
		if v, err := strconv.ParseFloat(s[:j], 64); err == nil {
			return v
		}
	}
	return 0
}

const hplLineMax = 256

// pdinfo reads an HPL.dat as HPL_pdinfo does; device is the "device out"
// value. It fails where HPL prints "Illegal input in file HPL.dat".
func pdinfo(data []byte) (in Input, device int, err error) {
	f := &cFile{data: data}
	var num string
	next := func() string { return f.fgets(hplLineMax - 2) }
	count := func(what string) (int, error) {
		line := next()
		sscanfS(line, &num)
		n := atoi(num)
		if n < 1 || n > MaxParam {
			return 0, fmt.Errorf("number of values of %s is less than 1 or greater than %d", what, MaxParam)
		}
		return n, nil
	}
	list := func(n int) []int {
		line := next()
		ptr := 0
		out := make([]int, n)
		for i := range out {
			rest := ""
			if ptr < len(line) {
				rest = line[ptr:]
			}
			sscanfS(rest, &num)
			ptr += len(num) + 1
			out[i] = atoi(num)
		}
		return out
	}
	// value is a line's first field, as HPL_pdinfo's sscanf and atoi.
	value := func() int {
		sscanfS(next(), &num)
		return atoi(num)
	}
	values := func(what string) ([]int, error) {
		n, err := count(what)
		if err != nil {
			return nil, err
		}
		return list(n), nil
	}
	atLeast := func(what string, least int) ([]int, error) {
		vs, err := values(what)
		for _, v := range vs {
			if v < least {
				return nil, fmt.Errorf("value of %s less than %d", what, least)
			}
		}
		return vs, err
	}
	next() // title
	next() // author
	next() // output file name
	device = value()
	if in.Ns, err = atLeast("N", 0); err != nil {
		return in, 0, err
	}
	if in.NBs, err = atLeast("NB", 1); err != nil {
		return in, 0, err
	}
	if value() == 1 {
		in.PMAP = PMapColumn
	}
	n, err := count("grids")
	if err != nil {
		return in, 0, err
	}
	ps, qs := list(n), list(n)
	for i := range ps {
		if ps[i] < 1 || qs[i] < 1 {
			return in, 0, errors.New("value of P or Q less than 1")
		}
		in.Grids = append(in.Grids, Grid{ps[i], qs[i]})
	}
	sscanfS(next(), &num)
	in.Threshold = atof(num)
	facts := func(what string) ([]Fact, error) {
		vs, err := values(what)
		var out []Fact
		for _, v := range vs {
			if v != 0 && v != 1 && v != 2 {
				v = int(FactRight)
			}
			out = append(out, Fact(v))
		}
		return out, err
	}
	if in.PFACTs, err = facts("PFACT"); err != nil {
		return in, 0, err
	}
	if in.NBMINs, err = atLeast("NBMIN", 1); err != nil {
		return in, 0, err
	}
	if in.NDIVs, err = atLeast("NDIV", 2); err != nil {
		return in, 0, err
	}
	if in.RFACTs, err = facts("RFACT"); err != nil {
		return in, 0, err
	}
	bcasts, err := values("BCAST")
	if err != nil {
		return in, 0, err
	}
	for _, v := range bcasts {
		if v < 0 || v > 5 {
			v = 1
		}
		in.BCASTs = append(in.BCASTs, Bcast(v))
	}
	if in.DEPTHs, err = atLeast("DEPTH", 0); err != nil {
		return in, 0, err
	}
	switch v := value(); v {
	case 0, 1, 2:
		in.SWAP = Swap(v)
	default:
		in.SWAP = SwapLong
	}
	in.SwapThreshold = max(value(), 0)
	in.L1NoTransposed = value() == 1
	in.UNoTransposed = value() == 1
	in.Equilibration = value() != 0
	if in.Align = value(); in.Align <= 0 {
		in.Align = 4
	}
	if f.eof {
		return in, 0, errors.New("the file ends before its 31st line")
	}
	return in, device, nil
}

// hpccinf reads an hpccinf.txt as HPCC does: HPL's part as HPL_pdinfo,
// then lines 33-36 (HPCC_InputFileInit) for PTRANS's additional sizes.
func hpccinf(data []byte) (Input, error) {
	in, _, err := pdinfo(data)
	if err != nil {
		return in, err
	}
	lines := strings.SplitAfter(string(data), "\n")
	if len(lines) < 36 {
		return in, fmt.Errorf("hpccinf.txt has %d lines, HPCC reads 36", len(lines))
	}
	readInts := func(line string, n int) ([]int, error) {
		f := strings.Fields(line)
		if len(f) < n {
			return nil, fmt.Errorf("%q holds fewer than %d values", line, n)
		}
		out := make([]int, n)
		for i := range out {
			v, err := strconv.Atoi(f[i])
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	ptrans := func(countLine, valuesLine string) ([]int, error) {
		var n int
		if _, err := fmt.Sscanf(countLine, "%d", &n); err != nil || n < 0 {
			return nil, fmt.Errorf("count line %q", countLine)
		}
		if n == 0 {
			return nil, nil
		}
		return readInts(valuesLine, min(n, MaxParam))
	}
	if in.PTRANSNs, err = ptrans(lines[32], lines[33]); err != nil {
		return in, err
	}
	if in.PTRANSNBs, err = ptrans(lines[34], lines[35]); err != nil {
		return in, err
	}
	return in, nil
}

// equalInput compares inputs, nil and empty lists alike.
func equalInput(a, b Input) bool {
	return reflect.DeepEqual(normal(a), normal(b))
}

func normal(in Input) Input {
	if len(in.PTRANSNs) == 0 {
		in.PTRANSNs = nil
	}
	if len(in.PTRANSNBs) == 0 {
		in.PTRANSNBs = nil
	}
	return in
}
