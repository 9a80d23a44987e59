// Package testcluster starts a throw-away Slurm on this machine: munged,
// slurmctld and fake nodes n1..nN (one slurmd each, all on 127.0.0.1), all
// under one directory, no systemd, nothing in /etc. It is for tests and
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
// The facts behind the scripts (why TmpFS per node, why batch_sched_delay=0,
// why MinJobAge and jobcomp/filetxt) are in the lab notes,
// notes/slurm-lab.md.
package testcluster
