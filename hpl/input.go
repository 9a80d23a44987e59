package hpl

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Input is the content of an HPL.dat (or of the HPL part of HPCC's
// hpccinf.txt): HPL runs one test for every combination of the listed
// values (N × NB × grid × PFACT × NBMIN × NDIV × RFACT × BCAST × DEPTH).
type Input struct {
	// Ns are the problem sizes (matrix orders), NBs the block sizes.
	Ns, NBs []int
	// PMAP is how MPI ranks are laid out on each grid.
	PMAP PMap
	// Grids are the process grids, P rows × Q columns; P×Q ranks each.
	Grids []Grid
	// Threshold bounds the scaled residuals; a test above it FAILED. HPL
	// checks nothing when it is ≤ 0 (and sbench then marks the run invalid).
	Threshold float64
	PFACTs    []Fact
	NBMINs    []int
	NDIVs     []int
	RFACTs    []Fact
	BCASTs    []Bcast
	DEPTHs    []int
	SWAP      Swap
	// SwapThreshold is the column count where SwapMix changes algorithm.
	SwapThreshold int
	// L1NoTransposed and UNoTransposed store the panels untransposed.
	L1NoTransposed, UNoTransposed bool
	Equilibration                 bool
	// Align is the memory alignment in doubles.
	Align int

	// PTRANSNs and PTRANSNBs are HPCC's additional PTRANS sizes; HPCC
	// always adds N/2 of every HPL size itself.
	PTRANSNs, PTRANSNBs []int
}

// Grid is one process grid.
type Grid struct{ P, Q int }

// Ranks is the number of processes the grid uses.
func (g Grid) Ranks() int { return g.P * g.Q }

func (g Grid) String() string { return strconv.Itoa(g.P) + "x" + strconv.Itoa(g.Q) }

// DefaultInput returns HPL's defaults for every tuning value: those of the
// HPL.dat and hpccinf.txt that HPL and HPCC ship (PFACT Right, NBMIN 4,
// NDIV 2, RFACT Crout, BCAST 1ringM, DEPTH 1, SWAP mix at 64 columns,
// threshold 16, equilibration, alignment 8). Ns, NBs and Grids are left
// for the caller: they depend on the machine.
func DefaultInput() Input {
	return Input{
		PMAP:          PMapRow,
		Threshold:     16,
		PFACTs:        []Fact{FactRight},
		NBMINs:        []int{4},
		NDIVs:         []int{2},
		RFACTs:        []Fact{FactCrout},
		BCASTs:        []Bcast{Bcast1RingM},
		DEPTHs:        []int{1},
		SWAP:          SwapMix,
		SwapThreshold: 64,
		Equilibration: true,
		Align:         8,
	}
}

// MaxParam is HPL_MAX_PARAM: HPL refuses a list of more values.
const MaxParam = 20

// maxLine is the longest line HPL reads whole: fgets into HPL_LINE_MAX - 2
// = 254 bytes keeps 253 characters, the newline included. A longer line
// would be cut and its rest read as the next line.
const maxLine = 252

// Validate checks the input against what HPL_pdinfo accepts. HPL clamps
// some bad values silently (an unknown PFACT becomes Right); sbench
// refuses them instead, so that the file says what runs.
func (in Input) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	list := func(name string, n int) bool {
		switch {
		case n == 0:
			bad("%s: no value", name)
		case n > MaxParam:
			bad("%s: %d values, HPL takes at most %d", name, n, MaxParam)
		default:
			return true
		}
		return false
	}
	ints := func(name string, vs []int, min int) {
		if !list(name, len(vs)) {
			return
		}
		for _, v := range vs {
			if v < min || v > math.MaxInt32 {
				bad("%s: %d is out of range (at least %d)", name, v, min)
			}
		}
	}
	ints("N", in.Ns, 0)
	ints("NB", in.NBs, 1)
	if list("grids", len(in.Grids)) {
		for _, g := range in.Grids {
			if g.P < 1 || g.Q < 1 || g.P > math.MaxInt32 || g.Q > math.MaxInt32 || g.P*g.Q > math.MaxInt32 {
				bad("grid %s: P and Q must be at least 1", g)
			}
		}
	}
	if in.PMAP != PMapRow && in.PMAP != PMapColumn {
		bad("PMAP: %d is not 0 (row-major) or 1 (column-major)", in.PMAP)
	}
	if math.IsNaN(in.Threshold) || math.IsInf(in.Threshold, 0) {
		bad("threshold: %v is not a number", in.Threshold)
	}
	facts := func(name string, fs []Fact) {
		if !list(name, len(fs)) {
			return
		}
		for _, f := range fs {
			if f < FactLeft || f > FactRight {
				bad("%s: %d is not 0 (left), 1 (Crout) or 2 (right)", name, f)
			}
		}
	}
	facts("PFACT", in.PFACTs)
	ints("NBMIN", in.NBMINs, 1)
	ints("NDIV", in.NDIVs, 2)
	facts("RFACT", in.RFACTs)
	if list("BCAST", len(in.BCASTs)) {
		for _, b := range in.BCASTs {
			if b < Bcast1Ring || b > BcastLongM {
				bad("BCAST: %d is not 0-5", b)
			}
		}
	}
	ints("DEPTH", in.DEPTHs, 0)
	if in.SWAP < SwapBinaryExchange || in.SWAP > SwapMix {
		bad("SWAP: %d is not 0 (binary-exchange), 1 (long) or 2 (mix)", in.SWAP)
	}
	if in.SwapThreshold < 0 || in.SwapThreshold > math.MaxInt32 {
		bad("swapping threshold: %d is out of range", in.SwapThreshold)
	}
	if in.Align < 1 || in.Align > math.MaxInt32 {
		bad("memory alignment: %d must be at least 1", in.Align)
	}
	for _, p := range []struct {
		name string
		vs   []int
		min  int
	}{{"PTRANS N", in.PTRANSNs, 1}, {"PTRANS NB", in.PTRANSNBs, 1}} {
		if len(p.vs) > MaxParam {
			bad("%s: %d values, HPCC takes at most %d", p.name, len(p.vs), MaxParam)
		}
		for _, v := range p.vs {
			if v < p.min || v > math.MaxInt32 {
				bad("%s: %d is out of range", p.name, v)
			}
		}
	}
	return errors.Join(errs...)
}

// MaxRanks is the largest grid's P×Q: HPL needs at least that many ranks.
func (in Input) MaxRanks() int {
	m := 0
	for _, g := range in.Grids {
		m = max(m, g.Ranks())
	}
	return m
}

// Tests is how many tests HPL runs for this input.
func (in Input) Tests() int {
	return len(in.Ns) * len(in.NBs) * len(in.Grids) * len(in.PFACTs) * len(in.NBMINs) *
		len(in.NDIVs) * len(in.RFACTs) * len(in.BCASTs) * len(in.DEPTHs)
}

// HPLDat returns the input as xhpl's HPL.dat, results to standard output
// (device 6), in the layout of the HPL.dat HPL ships.
func (in Input) HPLDat() ([]byte, error) {
	b, err := in.dat("HPL.dat", "6")
	if err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// HPCCInf returns the input as HPC Challenge's hpccinf.txt: HPL's 31 lines
// (HPCC writes its results to hpccoutf.txt whatever they say), the
// separator line 32, then PTRANS's additional sizes — laid out like the
// hpccinf.txt HPCC ships, byte for byte when there are none.
func (in Input) HPCCInf() ([]byte, error) {
	b, err := in.dat("hpccinf.txt", "8")
	if err != nil {
		return nil, err
	}
	b.WriteString("##### This line (no. 32) is ignored (it serves as a separator). ######\n")
	// With no additional sizes HPCC skips the values lines; they keep the
	// sample's values, which is what HPCC users know.
	ptrans := func(vs []int, countLabel, valuesLabel, sample string) {
		if len(vs) == 0 {
			b.WriteString(sample)
			return
		}
		fmt.Fprintf(b, "%-24s\t%s\n", strconv.Itoa(len(vs)), countLabel)
		fmt.Fprintf(b, "%-24s\t%s\n", joinInts(vs), valuesLabel)
	}
	ptrans(in.PTRANSNs, "Number of additional problem sizes for PTRANS", "values of N",
		"0                      \t\tNumber of additional problem sizes for PTRANS\n"+
			"1200 10000 30000        \tvalues of N\n")
	ptrans(in.PTRANSNBs, "number of additional blocking sizes for PTRANS", "values of NB",
		"0                       \tnumber of additional blocking sizes for PTRANS\n"+
			"40 9 8 13 13 20 16 32 64       \tvalues of NB\n")
	return b.Bytes(), nil
}

// dat validates the input and writes its 31 HPL.dat lines, for the file
// name (in errors) with the device-out value device.
func (in Input) dat(name, device string) (*bytes.Buffer, error) {
	if err := in.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var b bytes.Buffer
	if err := in.write(&b, device); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &b, nil
}

// write writes HPL.dat's 31 lines. Each value field starts in column 1 with
// single spaces between values: HPL_pdinfo steps through a list by the
// length of each value plus one, so any other spacing misreads the list.
func (in Input) write(b *bytes.Buffer, device string) error {
	var err error
	line := func(value, label string) {
		s := fmt.Sprintf("%-12s %s", value, label)
		if len(s) > maxLine && err == nil {
			err = fmt.Errorf("the line %q is longer than the %d bytes HPL reads", label, maxLine)
		}
		b.WriteString(s)
		b.WriteByte('\n')
	}
	count := func(n int, label string) { line(strconv.Itoa(n), label) }
	b.WriteString("HPLinpack benchmark input file\n")
	b.WriteString("Innovative Computing Laboratory, University of Tennessee\n")
	line("HPL.out", "output file name (if any)")
	line(device, "device out (6=stdout,7=stderr,file)")
	listLines(line, in.Ns, "# of problems sizes (N)", "Ns")
	listLines(line, in.NBs, "# of NBs", "NBs")
	line(strconv.Itoa(int(in.PMAP)), "PMAP process mapping (0=Row-,1=Column-major)")
	count(len(in.Grids), "# of process grids (P x Q)")
	ps, qs := make([]int, len(in.Grids)), make([]int, len(in.Grids))
	for i, g := range in.Grids {
		ps[i], qs[i] = g.P, g.Q
	}
	line(joinInts(ps), "Ps")
	line(joinInts(qs), "Qs")
	line(formatThreshold(in.Threshold), "threshold")
	listLines(line, in.PFACTs, "# of panel fact", "PFACTs (0=left, 1=Crout, 2=Right)")
	listLines(line, in.NBMINs, "# of recursive stopping criterium", "NBMINs (>= 1)")
	listLines(line, in.NDIVs, "# of panels in recursion", "NDIVs")
	listLines(line, in.RFACTs, "# of recursive panel fact.", "RFACTs (0=left, 1=Crout, 2=Right)")
	listLines(line, in.BCASTs, "# of broadcast", "BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)")
	listLines(line, in.DEPTHs, "# of lookahead depth", "DEPTHs (>=0)")
	line(strconv.Itoa(int(in.SWAP)), "SWAP (0=bin-exch,1=long,2=mix)")
	line(strconv.Itoa(in.SwapThreshold), "swapping threshold")
	line(boolDigit(in.L1NoTransposed), "L1 in (0=transposed,1=no-transposed) form")
	line(boolDigit(in.UNoTransposed), "U  in (0=transposed,1=no-transposed) form")
	line(boolDigit(in.Equilibration), "Equilibration (0=no,1=yes)")
	line(strconv.Itoa(in.Align), "memory alignment in double (> 0)")
	return err
}

// listLines writes a list's two lines: its length, then the list.
func listLines[T ~int](line func(value, label string), vs []T, countLabel, label string) {
	line(strconv.Itoa(len(vs)), countLabel)
	line(joinInts(vs), label)
}

// formatThreshold writes 16 as "16.0", as HPL's own files do; HPL reads it
// with atof, which takes any of Go's shortest forms.
func formatThreshold(t float64) string {
	if t == math.Trunc(t) && math.Abs(t) < 1e15 {
		return strconv.FormatFloat(t, 'f', 1, 64)
	}
	return strconv.FormatFloat(t, 'g', -1, 64)
}

func boolDigit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func joinInts[T ~int](vs []T) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = strconv.Itoa(int(v))
	}
	return strings.Join(parts, " ")
}

// PMap is HPL's process mapping.
type PMap int

// Process mappings.
const (
	PMapRow    PMap = 0
	PMapColumn PMap = 1
)

// Fact is a panel factorization (PFACT) or recursive panel factorization
// (RFACT) variant.
type Fact int

// Factorization variants, with HPL.dat's codes.
const (
	FactLeft  Fact = 0
	FactCrout Fact = 1
	FactRight Fact = 2
)

// Bcast is a panel broadcast topology.
type Bcast int

// Broadcast topologies, with HPL.dat's codes.
const (
	Bcast1Ring  Bcast = 0
	Bcast1RingM Bcast = 1
	Bcast2Ring  Bcast = 2
	Bcast2RingM Bcast = 3
	BcastLong   Bcast = 4
	BcastLongM  Bcast = 5
)

// Swap is the row swapping algorithm.
type Swap int

// Swapping algorithms, with HPL.dat's codes.
const (
	SwapBinaryExchange Swap = 0
	SwapLong           Swap = 1
	SwapMix            Swap = 2
)

// The names each code goes by: HPL's own (as its output prints them) and
// the short forms of HPL.dat's comments, matched without regard to case.
// The first is the canonical one.
var (
	pmapWords  = [][]string{{"row", "row-major"}, {"column", "column-major", "col"}}
	factWords  = [][]string{{"left"}, {"crout"}, {"right"}}
	bcastWords = [][]string{{"1ring", "1rg"}, {"1ringM", "1rM"}, {"2ring", "2rg"}, {"2ringM", "2rM"}, {"long", "Blong", "Lng"}, {"longM", "BlongM", "LnM"}}
	swapWords  = [][]string{{"binary-exchange", "bin-exch", "binary"}, {"long", "spread-roll"}, {"mix", "mixed"}}
)

// parseWord reads a code of an HPL setting, as its number or one of its
// words.
func parseWord[T ~int](kind, s string, words [][]string) (T, error) {
	t := strings.TrimSpace(s)
	if n, err := strconv.Atoi(t); err == nil {
		if n >= 0 && n < len(words) {
			return T(n), nil
		}
		return 0, fmt.Errorf("%s %d is not 0-%d", kind, n, len(words)-1)
	}
	for code, ws := range words {
		for _, w := range ws {
			if strings.EqualFold(t, w) {
				return T(code), nil
			}
		}
	}
	known := make([]string, len(words))
	for i, ws := range words {
		known[i] = fmt.Sprintf("%s (%d)", ws[0], i)
	}
	return 0, fmt.Errorf("%s %q is not one of %s", kind, s, strings.Join(known, ", "))
}

func word(n int, words [][]string) string {
	if n >= 0 && n < len(words) {
		return words[n][0]
	}
	return strconv.Itoa(n)
}

// ParsePMap reads "row" or "column" (or 0, 1).
func ParsePMap(s string) (PMap, error) {
	return parseWord[PMap]("PMAP", s, pmapWords)
}

// ParseFact reads "left", "crout" or "right" (or 0, 1, 2).
func ParseFact(s string) (Fact, error) {
	return parseWord[Fact]("factorization", s, factWords)
}

// ParseBcast reads "1ring", "1ringM", "2ring", "2ringM", "long", "longM"
// (HPL's "Blong" and HPL.dat's "1rg", "Lng" … too, or 0-5).
func ParseBcast(s string) (Bcast, error) {
	return parseWord[Bcast]("BCAST", s, bcastWords)
}

// ParseSwap reads "binary-exchange", "long" or "mix" (or 0, 1, 2).
func ParseSwap(s string) (Swap, error) {
	return parseWord[Swap]("SWAP", s, swapWords)
}

func (p PMap) String() string  { return word(int(p), pmapWords) }
func (f Fact) String() string  { return word(int(f), factWords) }
func (b Bcast) String() string { return word(int(b), bcastWords) }
func (s Swap) String() string  { return word(int(s), swapWords) }
