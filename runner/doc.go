// Package runner is the per-rank engine of sbench-runner: it learns which
// rank of a job step it is (under srun, mpirun or `sbench local`), meets the
// other ranks over TCP, runs a native kernel (between ranks 0 and 1, pairs of
// ranks, every pair of nodes, a collective of all ranks, STREAM or HPL on
// every rank) or wraps a real tool on every rank, gathers each node's
// provenance, and has rank 0 write the result bundles. It also starts a
// step's ranks as local processes for `sbench local` (LocalStep), with the
// environment srun would give them, or through an MPI launcher
// (LauncherStep).
//
// The package builds without cgo and never imports the archive or the
// reports (internal/layering checks both). sbench-runner is one static file
// copied to compute nodes because the Makefile builds it with
// CGO_ENABLED=0 and the netgo and osusergo tags; its TCP is package net's,
// and ranks advertise and dial IP literals only, so that no rank needs a
// name service (--bind takes an IP address too).
//
// # A run, and where each part lives
//
//   - run.go: Config (what the command line and environment give, parsed
//     by package runargs in cmd/sbench-runner) and Run, which validates it,
//     meets the ranks, runs the kernel and has rank 0 write the bundles.
//   - identity.go: which rank this is. An MPI launcher's variables win
//     over Slurm's (under mpirun in a batch job SLURM_PROCID is 0 on every
//     rank): Open MPI, then Hydra and other PMI-1 launchers, then PMIx,
//     then srun. The session (--session, else the job and step) names the
//     rendezvous and binds every connection to the step.
//   - rendezvous.go, comm.go, table.go, wire.go: the bootstrap. Every rank
//     listens on an ephemeral port and advertises its interfaces' addresses
//     (IPv4, then global IPv6, then loopback); rank 0 publishes its own in
//     <rundir>/<session>.addr, written atomically on a directory the nodes
//     share; the others connect, authenticate and join; rank 0 answers with
//     the table of every rank (binary, encoded once) and all pass a
//     barrier. Rank 0 holds one control connection per rank. Control
//     messages are length-prefixed frames with a JSON payload, limited to 4
//     KiB before authentication.
//   - accept.go: authentication and what strangers can cost. Every
//     connection starts with an HMAC-SHA256 challenge and response in both
//     directions, keyed by SBENCH_TOKEN (or, with a warning, a token derived
//     from the job step) and bound to the session. Connections in their
//     handshake are bounded in number and time, refusals are logged within
//     limits, and accept errors are retried with backoff, never the end of
//     the listener.
//   - provenance.go, provenance_mpi.go, mpilib.go, machine.go: each node is
//     described once, by rank 0 before the bootstrap and by every other
//     node's local rank 0 with its join; a node on rank 0's machine (the
//     fake nodes of sbench local: machineKey) says nothing and rank 0's
//     description stands for it. For the exec kernel a node also names its
//     MPI and the MPI library the tool's program loads there, found as
//     glibc's loader would, without running anything.
//   - traffic.go: which network interfaces the kernel connections crossed,
//     per node, so that a report quotes only those links' rates.
//   - kernels: kernel.go (the table kernelRuns, by package kernels' names,
//     each kernel's run and how it finishes its bundle; latency and bw),
//     kernel_mesh.go (the mesh of kernel connections the other kernels
//     use, and rank 0's collection of reports), kernel_coll.go (barrier,
//     allreduce, alltoall, bcast), kernel_pairs.go (bibw, pairs), kernel_matrix.go
//     (rounds of disjoint node pairs, then re-tests of the links out of
//     tolerance), kernel_stream.go, kernel_hpl.go; params.go their
//     parameters; fastio.go how they wait for data (poll=spin or block, by
//     raw system calls on the socket's descriptor); splice.go send=splice.
//   - exec.go, argv.go: the exec kernel, which runs a real tool on every
//     rank (per rank when told), its placeholders ({rank}, {host:N} …)
//     expanded by the runner, never by a shell, and rank 0's output parsed
//     by package parsers into one bundle per run found.
//   - check.go, placement.go: what makes an ok bundle invalid: a --check
//     that fails or finds nothing to judge; ranks placed otherwise than the
//     launch planned (--plan-nodes, --plan-ppn).
//   - local.go, proctree.go: sbench local's steps, and finding what a rank
//     left running by walking /proc.
//
// # Invariants
//
//   - Nothing waits forever. The bootstrap has a timeout, after which rank
//     0 names the ranks that did not join and the nodes Slurm should have
//     started them on; every kernel step has an I/O timeout; the run has
//     one deadline (--timeout) that the first rank to pass it tells the
//     others. A control connection that closes means its rank died and
//     fails the run at once; a rank whose kernel fails tells rank 0, which
//     aborts every rank.
//   - Rank 0 writes a bundle for every run, a failed one too, saying why,
//     atomically (results.WriteFile); an error names the rank and node at
//     fault.
//   - Every kernel checks its data: messages carry a pattern that depends
//     on the size and the iteration and the receiver checks it, collectives
//     check their sums, STREAM its arrays against STREAM's expected values,
//     HPL its residual; a wrong byte fails the run.
//   - A parameter that changes what is measured is in the bundle's params
//     (send=splice, the matrix's schedule and tolerances, the repeat), so
//     that runs that differ are never pooled as one configuration.
//
// Why the kernels are built as they are (send buffers within a node,
// busy-polling, splicing), with the measurements, is in
// docs/performance.md; how they compare with the real tools, in
// docs/tools-vs-native.md.
package runner
