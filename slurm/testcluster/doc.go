// Package testcluster starts a throw-away Slurm on this machine: munged,
// slurmctld and fake nodes n1..nN (one slurmd each, on 127.0.0.1 or each
// in a network namespace of its own), all under one directory, no
// systemd, nothing in /etc. It is for tests and
// demos, never for production.
//
// The work is done by two scripts, usable by hand:
//
//	eval "$(slurm/testcluster/start.sh /tmp/lab 2)"   # prints export SLURM_CONF=…
//	srun -N2 -n4 hostname
//	slurm/testcluster/stop.sh /tmp/lab
//
// Go tests embed the same scripts through Start, so a test of any package
// can bring a cluster up and down:
//
//	lab, err := testcluster.Start(ctx, t.TempDir(), 2)
//	…
//	defer lab.Stop(context.Background())
//	cmd.Env = append(os.Environ(), lab.Env()...)
//
// # Nodes with links of their own
//
// On 127.0.0.1 every node pair measures the same path, so a slow node or a
// bad cable cannot be shown. WithNetns (start.sh LABDIR N --netns) puts
// every fake node nK in its own network namespace with address
// 198.18.0.(10+K) and hostname nK, on a veth joined to one bridge that
// holds 198.18.0.1 on the host side (slurmctld listens there); Shape
// (shape.sh) slows one node's link with a token bucket, in both
// directions or one:
//
//	lab, err := testcluster.Start(ctx, dir, 8, testcluster.WithNetns())
//	err = lab.Shape(ctx, "n3", "1gbit", testcluster.Both)   // or Out, In; "off"
//
// Everything a netns lab makes is listed in LABDIR/run/netns before it is
// made, and Stop (stop.sh) deletes exactly that, also after a start that
// failed half-way; run-tests.sh stops every lab its tests started, through
// the registry start.sh writes to ($SBENCH_LAB_REGISTRY), however the
// tests ended. What works in this kernel and what does not (no netem;
// slurmd under nsenter, not "ip netns exec"; one hostname and /etc/hosts
// per node for srun's callbacks) is in docs/test-cluster.md.
//
// The facts behind the scripts (why TmpFS per node, why batch_sched_delay=0,
// why MinJobAge and jobcomp/filetxt) are in
// docs/test-cluster.md.
package testcluster
