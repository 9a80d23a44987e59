package hpl

import (
	"errors"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/internal/parsetest"
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// addSeeds feeds every fixture, and a few fragments that stop at awkward
// places, to a fuzz target.
func addSeeds(f *testing.F) {
	for _, data := range golden.Files(f, "testdata/*.txt") {
		f.Add(data)
		// The same output quoted without its T/V headers.
		if cut := withoutHeaders(string(data)); cut != string(data) {
			f.Add([]byte(cut))
		}
	}
	for _, s := range []string{
		// Excerpts without the T/V header, as mailing lists quote them.
		"WR11C2R4        5000   160     1     2              10.10              8.253e+00\n" +
			"--------------------------------------------------------------------------------\n" +
			"||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=        0.0034561 ...... PASSED\n",
		"WR10R2C4       20000   104     1     4             736.74          7.240e+00\n" +
			"----------------------------------------------------------------------------\n" +
			"||Ax-b||_oo / ( eps * ||A||_1  * N        ) =       44.6046954 ...... FAILED\n" +
			"||Ax-b||_oo / ( eps * ||A||_1  * ||x||_1  ) =       43.1710652 ...... FAILED\n" +
			"||Ax-b||_oo / ( eps * ||A||_oo * ||x||_oo ) =        8.2276427 ...... PASSED\n",
		"WR00L2L2       25920   120     3     5             529.79          2.192e+01\nWR00L2L4       25920   120     3     5             532.56          2.180e+01\n",
		"WC0           299008  1024     2     4        52.88       3.370e+05 ( 4.213e+04)\n",
		"WR0 1 1 1 1 1 1\nT/V N NB P Q Time Gflops\n",
		"T/V                N    NB     P     Q               Time                 Gflops\nW",
		"T/V N NB P Q Time Gflops\nWR0 1 1 1 1 1 1 ( 1)\n||A||_oo . . = nan\n",
		"HPLinpack 2.3  --\nThe following parameter values will be used:\nN :\n   1 2\n",
		"Begin of HPL section.\nBegin of Summary section.\n",
		"Begin of Summary section.\nSuccess=0\nCurrent time (99999999999999) is\nEnd of Summary section.\n",
		"Finished 1 tests with the following results:\n1 tests completed without checking,\nEnd of Tests.\n",
	} {
		f.Add([]byte(s))
	}
}

// checkParse is what HPL's parsers add to parsetest's rules: syntax errors
// that name the input, and a reason for every invalid run.
func checkParse(t *testing.T, _ []byte, bs []*results.Bundle, err error) {
	var se parsers.SyntaxErrors
	if errors.As(err, &se) {
		for _, e := range se {
			if e.FileName != parsetest.Name || e.Line < 0 || e.Msg == "" {
				t.Fatalf("bad syntax error %+v", e)
			}
		}
	}
	for _, b := range bs {
		if b.Status == results.StatusInvalid && b.Error == "" {
			t.Fatalf("invalid bundle without a reason")
		}
	}
}

func FuzzHPL(f *testing.F) {
	addSeeds(f)
	parsetest.Fuzz[parsers.SyntaxErrors](f, ParseHPL, checkParse)
}

func FuzzHPCC(f *testing.F) {
	addSeeds(f)
	parsetest.Fuzz[parsers.SyntaxErrors](f, ParseHPCC, func(t *testing.T, data []byte, bs []*results.Bundle, err error) {
		checkParse(t, data, bs, err)
		if len(bs) > 0 && bs[len(bs)-1].Benchmark.Name != "hpcc" {
			t.Fatalf("no hpcc bundle last")
		}
	})
}
