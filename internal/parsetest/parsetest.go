// Package parsetest is what the fuzz targets of every output parser (the
// packages parsers and hpl) check, whatever the format: a parser given any
// bytes must not panic, and answers either with syntax errors or with runs
// that are valid result bundles — never with both, never with another kind
// of error.
//
// It does not import package parsers, whose own tests use it: the syntax
// error type is a type parameter, parsers.SyntaxErrors in practice.
package parsetest

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/sbench/sbench/results"
)

// ParseFunc is an output parser, as parsers.Format.Parse.
type ParseFunc func(name string, r io.Reader) ([]*results.Bundle, error)

// Name is the input name the fuzz inputs are parsed under, for checks of
// the file names syntax errors carry.
const Name = "fuzz"

// Fuzz fuzzes parse from f's seed corpus (see golden.Seed). Each input is
// parsed as Name and must give either syntax errors (a non-empty E and no
// runs) or runs that validate and encode as JSON. check, if not nil, then
// adds the format's own rules.
func Fuzz[E interface {
	~[]P
	error
}, P any](f *testing.F, parse ParseFunc, check func(t *testing.T, data []byte, runs []*results.Bundle, err error)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		runs, err := parse(Name, bytes.NewReader(data))
		var se E
		switch {
		case errors.As(err, &se):
			if len(se) == 0 || runs != nil {
				t.Fatalf("%d syntax errors with %d runs", len(se), len(runs))
			}
		case err != nil:
			t.Fatalf("not a syntax error: %v (%T)", err, err)
		}
		for _, b := range runs {
			if err := b.Validate(); err != nil {
				t.Fatalf("invalid bundle: %v", err)
			}
			if _, err := results.Marshal(b); err != nil {
				t.Fatalf("bundle does not encode: %v", err)
			}
		}
		if check != nil {
			check(t, data, runs, err)
		}
	})
}
