package ingest

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	_ "github.com/sbench/sbench/hpl" // registers the hpl and hpcc formats
	"github.com/sbench/sbench/parsers"
	"github.com/sbench/sbench/results"
)

// maxInput caps one input file: benchmark outputs are kilobytes, a job log
// a few megabytes; anything far larger is not what the user meant.
const maxInput = 256 << 20

// Input is one file (or a stream) to load.
type Input struct {
	Name string
	// found is set for files met while walking a directory: those that are
	// not benchmark output are skipped, not errors.
	found bool
	open  func() (io.ReadCloser, error)
}

// File is the input of the file at path; found says it was met in a
// directory walk (Expand), not named by the user.
func File(path string, found bool) Input {
	return Input{Name: path, found: found, open: func() (io.ReadCloser, error) { return openRegular(path) }}
}

// Stream is the input of r (standard input), read once.
func Stream(name string, r io.Reader) Input {
	return Input{Name: name, open: func() (io.ReadCloser, error) { return io.NopCloser(r), nil }}
}

// InputError is an input the user named that cannot be ingested: missing,
// or not a regular file.
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// openRegular opens a file to ingest, and refuses anything else. Opening a
// named pipe blocks until something writes to it, which may be never, and
// no signal ends the wait; O_NONBLOCK makes that open return at once (for a
// regular file it changes nothing), and the check on what was opened, not
// on a Stat before, holds even if the path changed in between.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := checkRegular(path, st.Mode()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkRegular refuses what is not a regular file, naming what it is.
func checkRegular(path string, m fs.FileMode) error {
	var what string
	switch {
	case m.IsRegular():
		return nil
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeCharDevice != 0:
		what = "a character device"
	case m&fs.ModeDevice != 0:
		what = "a block device"
	case m.IsDir():
		what = "a directory"
	default:
		what = "not a regular file (" + m.Type().String() + ")"
	}
	return InputError{fmt.Errorf("%s is %s, not a file: use - to read from standard input", path, what)}
}

// Expand turns the command line into inputs: directories are walked
// (hidden entries skipped), "-" is stdin. A file named on the command line
// must be a regular file; what a walk finds that is not is skipped.
func Expand(ctx context.Context, stdin io.Reader, args []string) ([]Input, error) {
	var ins []Input
	for _, a := range args {
		if a == "-" {
			ins = append(ins, Stream("stdin", stdin))
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return nil, InputError{err}
		}
		if !st.IsDir() {
			if err := checkRegular(a, st.Mode()); err != nil {
				return nil, err
			}
			ins = append(ins, File(a, false))
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err // a walk of a large tree on a slow file system
			}
			if p != a && d.IsDir() && sbenchDir(p) {
				return filepath.SkipDir
			}
			hidden := p != a && strings.HasPrefix(d.Name(), ".")
			switch {
			case d.IsDir() && hidden:
				return filepath.SkipDir // rendezvous files and temporaries
			case d.Type().IsRegular() && !hidden:
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.SortFunc(found, results.NaturalCompare)
		for _, p := range found {
			ins = append(ins, File(p, true))
		}
	}
	return ins, nil
}

// ScriptsStamp names the folder "sbench submit" renders a submission's
// scripts into: RESULTS/scripts/STAMP/.
const ScriptsStamp = "20060102T150405.000"

// sbenchDir reports whether a directory met in a walk holds only files
// sbench wrote, none of them a run: a submission's scripts
// (RESULTS/scripts/STAMP), or the exec kernels' work directories
// (RESULTS/work/SESSION, beside the runner's RESULTS/.rendezvous), where
// the tool wrote the output its bundle already holds, and the runner the
// tool's input files. Parsing them would fail (a script's comments name
// tools) or store a run twice.
func sbenchDir(path string) bool {
	parent := filepath.Dir(path)
	switch filepath.Base(path) {
	case "work":
		st, err := os.Stat(filepath.Join(parent, ".rendezvous"))
		return err == nil && st.IsDir()
	default:
		_, err := time.Parse(ScriptsStamp, filepath.Base(path))
		return err == nil && filepath.Base(parent) == "scripts"
	}
}

// skipped is a file met in a directory walk that is not ingested. Files
// sbench wrote (own) are skipped silently: they are expected there. Others
// are counted as "not benchmark output".
type skipped struct {
	name, why string
	own       bool
}

func (s skipped) Error() string { return s.name + ": " + s.why }

// ctxReader stops a read of many chunks (a large file, a stream) between
// chunks once ctx is done; a single read blocked in the kernel is for the
// caller to stop waiting for.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// readInput parses one input into bundles and applies the user's labels.
func readInput(ctx context.Context, in Input, o Options) ([]*results.Bundle, error) {
	r, err := in.open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx, r}, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in.Name, err)
	}
	if len(data) > maxInput {
		return nil, fmt.Errorf("%s: larger than %d MiB; not a benchmark output", in.Name, maxInput>>20)
	}
	if in.found {
		// Whatever Format says: a script's comments name tools ("# OSU
		// Micro-Benchmarks …"), and no tool writes a batch script or a
		// rendezvous file.
		if why, ok := parsers.SbenchWritten(in.Name, data); ok {
			return nil, skipped{name: in.Name, why: why, own: true}
		}
		switch filepath.Ext(in.Name) {
		case ".sbatch":
			return nil, skipped{name: in.Name, why: "a batch script"}
		case ".addr":
			return nil, skipped{name: in.Name, why: "a rendezvous address file"}
		}
	}
	bundles, err := parsers.Parse(in.Name, o.Format, data)
	if err != nil {
		return nil, err
	}
	for _, b := range bundles {
		if len(o.Labels) > 0 && b.Labels == nil {
			b.Labels = map[string]string{}
		}
		for k, v := range o.Labels {
			b.Labels[k] = v
		}
		if o.Amend != nil {
			o.Amend(b)
		}
	}
	return bundles, nil
}
