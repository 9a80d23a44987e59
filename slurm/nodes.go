package slurm

import (
	"bytes"
	"context"
	"strconv"
	"strings"
)

// Node is one node as `scontrol show node` describes it.
type Node struct {
	Name string
	// State is Slurm's, with its flags: IDLE, MIXED, ALLOCATED,
	// IDLE+DRAIN, DOWN+NOT_RESPONDING…
	State      string
	Reason     string
	CPUs       int
	MemoryMB   int // RealMemory
	Partitions []string
}

// Idle reports whether the node is up, free and takes jobs: IDLE with no
// flag (a DRAIN or NOT_RESPONDING flag means it would not run a job).
func (n Node) Idle() bool { return n.State == "IDLE" }

// Nodes lists the cluster's nodes in Slurm's order, with one
// `scontrol show node -o`. A cluster is ready for a test when every node is
// Idle.
func (c *Client) Nodes(ctx context.Context) ([]Node, error) {
	stdout, stderr, err := c.run(ctx, []string{"scontrol", "show", "node", "-o"}, nil, "")
	if err != nil {
		return nil, cmdError(ctx, "scontrol show node", stdout, stderr, err)
	}
	var nodes []Node
	sc := NewRecordScanner(bytes.NewReader(stdout), "scontrol show node")
	for sc.Scan() {
		rec, bad := sc.Record()
		if bad != nil {
			continue // "No nodes in the system"
		}
		name, ok := rec.Get("NodeName")
		if !ok {
			continue
		}
		n := Node{Name: name, State: rec.Value("State"), Reason: rec.Value("Reason")}
		n.CPUs, _ = strconv.Atoi(rec.Value("CPUTot"))
		n.MemoryMB, _ = strconv.Atoi(rec.Value("RealMemory"))
		if p := rec.Value("Partitions"); p != "" && p != "(null)" {
			n.Partitions = strings.Split(p, ",")
		}
		nodes = append(nodes, n)
	}
	return nodes, sc.Err()
}
