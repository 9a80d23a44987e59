package runner

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestGatherGivesTheRunsCause: when the run has ended while rank 0 waits
// at a barrier (a watcher cancelled it with another rank's failure, which
// names that rank), gather returns that cause as it is. Wrapped, it named
// the barrier and the rank twice: "barrier exec-start: rank 1 (node n2):
// rank 1 (node n2): start /nonexistent/tool …", which CI's race run saw
// in TestExecFailingCommand when rank 1's failure reached rank 0's watcher
// before its barrier message reached gather.
func TestGatherGivesTheRunsCause(t *testing.T) {
	c := &comm{
		id:      Identity{Rank: 0, Size: 2, NodeName: "n1", Nodes: []string{"n1", "n2"}},
		members: []member{{Rank: 0, Node: "n1"}, {Rank: 1, Node: "n2"}},
		ctrl:    map[int]*ctrlConn{1: {rank: 1, msgs: make(chan frame)}},
	}
	cause := errors.New("rank 1 (node n2): start /nonexistent/tool -x: fork/exec /nonexistent/tool: no such file or directory")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if err := c.gather(ctx, "exec-start", time.Now().Add(time.Second)); err != cause {
		t.Errorf("gather: %v, want the run's cause as it is: %v", err, cause)
	}
}
