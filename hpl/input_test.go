package hpl

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
)

// labInput is the lab's hpccinf.txt (testdata/hpccinf.txt): HPCC's own
// sample with N=3000, NB=128 and a 1×2 grid.
func labInput() Input {
	in := DefaultInput()
	in.Ns, in.NBs, in.Grids = []int{3000}, []int{128}, []Grid{{1, 2}}
	return in
}

// HPL's defaults with the machine's values are HPCC's shipped sample,
// byte for byte.
func TestHPCCInfIsHPCCsSample(t *testing.T) {
	got, err := labInput().HPCCInf()
	if err != nil {
		t.Fatal(err)
	}
	want := readFixture(t, "hpccinf.txt")
	if !bytes.Equal(got, want) {
		t.Errorf("hpccinf.txt differs from testdata/hpccinf.txt:\n%s", golden.Diff(string(want), string(got)))
	}
	// HPL.dat is the same 31 lines, results on standard output.
	dat, err := labInput().HPLDat()
	if err != nil {
		t.Fatal(err)
	}
	wantDat := strings.Replace(strings.Join(strings.SplitAfter(string(want), "\n")[:31], ""), "\n8            device out", "\n6            device out", 1)
	if string(dat) != wantDat {
		t.Errorf("HPL.dat:\n%s", golden.Diff(wantDat, string(dat)))
	}
}

var goldenCases = []struct {
	name  string
	hpcc  bool
	input func() Input
}{
	{"article-000.HPL.dat", false, func() Input {
		in := DefaultInput()
		in.Ns, in.NBs, in.Grids = []int{20000}, []int{104}, []Grid{{1, 4}}
		return in
	}},
	{"every-list.HPL.dat", false, func() Input {
		return Input{
			Ns: []int{1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000}, NBs: []int{64, 128, 192, 256},
			PMAP: PMapColumn, Grids: []Grid{{1, 8}, {2, 4}, {4, 2}}, Threshold: 0.5,
			PFACTs: []Fact{FactLeft, FactCrout, FactRight}, NBMINs: []int{1, 2, 4, 8}, NDIVs: []int{2, 3},
			RFACTs: []Fact{FactRight, FactLeft}, BCASTs: []Bcast{Bcast1Ring, Bcast2RingM, BcastLongM},
			DEPTHs: []int{0, 1, 2}, SWAP: SwapLong, SwapThreshold: 0, L1NoTransposed: true, UNoTransposed: true,
			Equilibration: false, Align: 16,
		}
	}},
	{"ptrans.hpccinf.txt", true, func() Input {
		in := labInput()
		in.Ns = []int{2000, 3000}
		in.PTRANSNs, in.PTRANSNBs = []int{1500, 1600}, []int{32, 64, 128}
		return in
	}},
}

// TestInputGolden writes inputs that use every field and list and reads
// each back the way HPL (or HPCC) does; go test -update rewrites them.
func TestInputGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.input()
			var got []byte
			var err error
			if tc.hpcc {
				got, err = in.HPCCInf()
			} else {
				got, err = in.HPLDat()
			}
			if err != nil {
				t.Fatal(err)
			}
			var back Input
			if tc.hpcc {
				back, err = hpccinf(got)
			} else {
				var dev int
				back, dev, err = pdinfo(got)
				if dev != 6 {
					t.Errorf("device out %d, want 6 (stdout, which the runner parses)", dev)
				}
			}
			if err != nil {
				t.Fatalf("HPL would refuse it: %v\n%s", err, got)
			}
			if !equalInput(back, in) {
				t.Errorf("read back as\n%+v\nwant\n%+v", back, in)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.name), got)
		})
	}
}

// The longest values in the longest lists still fit the line HPL reads.
func TestLongestInputReadsBack(t *testing.T) {
	big := make([]int, MaxParam)
	grids := make([]Grid, MaxParam)
	facts := make([]Fact, MaxParam)
	bcasts := make([]Bcast, MaxParam)
	for i := range big {
		big[i] = math.MaxInt32 - i
		grids[i] = Grid{46340 - i, 46340}
		facts[i] = Fact(i % 3)
		bcasts[i] = Bcast(i % 6)
	}
	in := Input{Ns: big, NBs: big, Grids: grids, Threshold: -1.25e-300, PFACTs: facts, NBMINs: big, NDIVs: big,
		RFACTs: facts, BCASTs: bcasts, DEPTHs: big, SWAP: SwapMix, SwapThreshold: math.MaxInt32, Align: math.MaxInt32,
		PTRANSNs: big, PTRANSNBs: big}
	dat, err := in.HPLDat()
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := pdinfo(dat)
	if err != nil || !equalInput(back, Input{Ns: in.Ns, NBs: in.NBs, Grids: in.Grids, Threshold: in.Threshold, PFACTs: facts,
		NBMINs: big, NDIVs: big, RFACTs: facts, BCASTs: bcasts, DEPTHs: big, SWAP: SwapMix, SwapThreshold: math.MaxInt32, Align: math.MaxInt32}) {
		t.Errorf("HPL.dat read back as %+v, %v", back, err)
	}
	inf, err := in.HPCCInf()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := hpccinf(inf); err != nil || !equalInput(back, in) {
		t.Errorf("hpccinf.txt read back as %+v, %v", back, err)
	}
	for i, l := range strings.Split(string(inf), "\n") {
		if len(l) > maxLine {
			t.Errorf("line %d has %d bytes: %q", i+1, len(l), l)
		}
	}
}

func TestValidateRefusesWhatHPLWouldNot(t *testing.T) {
	for _, tc := range []struct {
		change func(*Input)
		want   string
	}{
		{func(in *Input) { in.Ns = nil }, "N: no value"},
		{func(in *Input) { in.Ns = make([]int, 21) }, "N: 21 values, HPL takes at most 20"},
		{func(in *Input) { in.Ns = []int{-1} }, "N: -1 is out of range"},
		{func(in *Input) { in.Ns = []int{math.MaxInt32 + 1} }, "out of range"},
		{func(in *Input) { in.NBs = []int{0} }, "NB: 0 is out of range (at least 1)"},
		{func(in *Input) { in.Grids = nil }, "grids: no value"},
		{func(in *Input) { in.Grids = []Grid{{0, 4}} }, "grid 0x4: P and Q must be at least 1"},
		{func(in *Input) { in.PMAP = 2 }, "PMAP: 2 is not 0"},
		{func(in *Input) { in.Threshold = math.NaN() }, "threshold: NaN is not a number"},
		{func(in *Input) { in.PFACTs = []Fact{3} }, "PFACT: 3 is not 0 (left)"},
		{func(in *Input) { in.RFACTs = nil }, "RFACT: no value"},
		{func(in *Input) { in.NBMINs = []int{0} }, "NBMIN: 0 is out of range (at least 1)"},
		{func(in *Input) { in.NDIVs = []int{1} }, "NDIV: 1 is out of range (at least 2)"},
		{func(in *Input) { in.BCASTs = []Bcast{6} }, "BCAST: 6 is not 0-5"},
		{func(in *Input) { in.DEPTHs = []int{-1} }, "DEPTH: -1 is out of range"},
		{func(in *Input) { in.SWAP = 3 }, "SWAP: 3 is not 0"},
		{func(in *Input) { in.SwapThreshold = -1 }, "swapping threshold: -1"},
		{func(in *Input) { in.Align = 0 }, "memory alignment: 0 must be at least 1"},
		{func(in *Input) { in.PTRANSNs = []int{0} }, "PTRANS N: 0 is out of range"},
	} {
		in := labInput()
		tc.change(&in)
		err := in.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", in, err, tc.want)
		}
		if _, err := in.HPLDat(); err == nil || !strings.HasPrefix(err.Error(), "HPL.dat: ") {
			t.Errorf("HPLDat of a bad input: %v", err)
		}
		if _, err := in.HPCCInf(); err == nil || !strings.HasPrefix(err.Error(), "hpccinf.txt: ") {
			t.Errorf("HPCCInf of a bad input: %v", err)
		}
	}
	if err := labInput().Validate(); err != nil {
		t.Errorf("the lab's input: %v", err)
	}
}

func TestInputCounts(t *testing.T) {
	in := goldenCases[1].input()
	if got := in.Tests(); got != 9*4*3*3*4*2*2*3*3 {
		t.Errorf("Tests() = %d", got)
	}
	if got := in.MaxRanks(); got != 8 {
		t.Errorf("MaxRanks() = %d, want 8", got)
	}
}

func TestParseNames(t *testing.T) {
	for _, tc := range []struct {
		parse func(string) (int, error)
		in    string
		want  int
	}{
		{func(s string) (int, error) { v, err := ParseFact(s); return int(v), err }, "Right", 2},
		{func(s string) (int, error) { v, err := ParseFact(s); return int(v), err }, "crout", 1},
		{func(s string) (int, error) { v, err := ParseFact(s); return int(v), err }, "0", 0},
		{func(s string) (int, error) { v, err := ParseBcast(s); return int(v), err }, "1ringM", 1},
		{func(s string) (int, error) { v, err := ParseBcast(s); return int(v), err }, "BlongM", 5},
		{func(s string) (int, error) { v, err := ParseBcast(s); return int(v), err }, "lng", 4},
		{func(s string) (int, error) { v, err := ParseSwap(s); return int(v), err }, "mix", 2},
		{func(s string) (int, error) { v, err := ParseSwap(s); return int(v), err }, "bin-exch", 0},
		{func(s string) (int, error) { v, err := ParsePMap(s); return int(v), err }, "column", 1},
	} {
		got, err := tc.parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("parse %q = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"diagonal", "3", "-1", ""} {
		if _, err := ParseFact(bad); err == nil {
			t.Errorf("ParseFact(%q) accepted", bad)
		}
	}
	if _, err := ParseBcast("6"); err == nil || !strings.Contains(err.Error(), "not 0-5") {
		t.Errorf("ParseBcast(6): %v", err)
	}
	if _, err := ParseSwap("fast"); err == nil || !strings.Contains(err.Error(), "binary-exchange (0), long (1), mix (2)") {
		t.Errorf("ParseSwap(fast): %v", err)
	}
	if s := BcastLongM.String() + " " + FactCrout.String() + " " + SwapMix.String() + " " + PMapColumn.String(); s != "longM crout mix column" {
		t.Errorf("names: %q", s)
	}
}

// FuzzInputRoundTrip builds an input from the fuzzer's bytes: whatever
// valid input sbench writes, HPL and HPCC read back exactly.
func FuzzInputRoundTrip(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte("some bytes to make lists of"))
	f.Add(bytes.Repeat([]byte{0xff}, 400))
	f.Fuzz(func(t *testing.T, data []byte) {
		pos := 0
		next := func() int {
			if pos >= len(data) {
				return 0
			}
			pos++
			return int(data[pos-1])
		}
		num := func(lo int) int {
			v := next()<<16 | next()<<8 | next()
			return lo + v%(math.MaxInt32-lo)
		}
		ints := func(lo int) []int {
			out := make([]int, 1+next()%MaxParam)
			for i := range out {
				out[i] = num(lo)
			}
			return out
		}
		in := Input{Ns: ints(0), NBs: ints(1), PMAP: PMap(next() % 2), Threshold: float64(num(0)-1<<22) / float64(1+next()),
			NBMINs: ints(1), NDIVs: ints(2), DEPTHs: ints(0), SWAP: Swap(next() % 3), SwapThreshold: num(0),
			L1NoTransposed: next()%2 == 1, UNoTransposed: next()%2 == 1, Equilibration: next()%2 == 1, Align: num(1)}
		for i := 0; i <= next()%MaxParam; i++ {
			in.Grids = append(in.Grids, Grid{1 + next(), 1 + next()})
			in.PFACTs = append(in.PFACTs, Fact(next()%3))
			in.RFACTs = append(in.RFACTs, Fact(next()%3))
			in.BCASTs = append(in.BCASTs, Bcast(next()%6))
		}
		if next()%2 == 1 {
			in.PTRANSNs, in.PTRANSNBs = ints(1), ints(1)
		}
		dat, err := in.HPLDat()
		if err != nil {
			t.Fatalf("valid input refused: %v", err)
		}
		back, dev, err := pdinfo(dat)
		hplPart := in
		hplPart.PTRANSNs, hplPart.PTRANSNBs = nil, nil
		if err != nil || dev != 6 || !equalInput(back, hplPart) {
			t.Fatalf("HPL.dat read back as %+v (device %d, %v), want %+v\n%s", back, dev, err, hplPart, dat)
		}
		inf, err := in.HPCCInf()
		if err != nil {
			t.Fatal(err)
		}
		if back, err := hpccinf(inf); err != nil || !equalInput(back, in) {
			t.Fatalf("hpccinf.txt read back as %+v (%v), want %+v\n%s", back, err, in, inf)
		}
	})
}

// The model of HPL's reader is strict where HPL is: a list that does not
// start in column 1 or has three spaces between values is misread (this is
// why the round-trip tests can fail).
func TestPdinfoModelMisreadsOtherSpacing(t *testing.T) {
	in := labInput()
	in.Ns = []int{3000, 4000, 5000}
	dat, _ := in.HPLDat()
	if back, _, err := pdinfo(dat); err != nil || !equalInput(back, in) {
		t.Fatalf("sbench's own spacing misread: %+v %v", back, err)
	}
	for _, bad := range []string{"\n3000   4000 5000 Ns", "\n  3000 4000 5000 Ns"} {
		mod := strings.Replace(string(dat), "\n3000 4000 5000 Ns", bad, 1)
		if mod == string(dat) {
			t.Fatal("the N line is not where the test expects it")
		}
		if back, _, err := pdinfo([]byte(mod)); err == nil && equalInput(back, in) {
			t.Errorf("%q read as meant", bad)
		}
	}
}
