package runner

import (
	"context"
	"errors"
	"testing"
)

// A run that failed after the signal that stopped it says the signal
// first, whatever rank 0 read before the signal reached it; a run whose
// context ended without a cause of its own, or whose error says the
// cause already, is left as it is.
func TestStoppedFirst(t *testing.T) {
	sig := errors.New("interrupted by Ctrl-C (SIGINT)")
	lost := errors.New("lost rank 1 (node local1): connection closed (the process exited or was killed)")
	stopped, stop := context.WithCancelCause(context.Background())
	stop(sig)
	plain, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"stopped, another rank's end read first", stopped, lost, "interrupted by Ctrl-C (SIGINT); lost rank 1 (node local1): connection closed (the process exited or was killed)"},
		{"stopped, the signal already said", stopped, errors.New("rank 1 (node local1): interrupted by Ctrl-C (SIGINT)"), "rank 1 (node local1): interrupted by Ctrl-C (SIGINT)"},
		{"cancelled without a cause", plain, lost, lost.Error()},
		{"running", context.Background(), lost, lost.Error()},
	} {
		got := stoppedFirst(c.ctx, c.err)
		if got.Error() != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: %v no longer wraps %v", c.name, got, c.err)
		}
	}
	if stoppedFirst(stopped, nil) != nil {
		t.Error("a run that did not fail is not made to fail by its signal")
	}
}
