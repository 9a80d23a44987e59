// Package runner is the per-rank engine of sbench-runner: it learns which
// rank of a job step it is (under srun, mpirun or `sbench local`), meets the
// other ranks over TCP, runs a native kernel (between ranks 0 and 1, pairs of
// ranks, every pair of nodes, a collective of all ranks, STREAM on every rank)
// or wraps a real tool on every rank, gathers each node's provenance, and has rank 0
// write the result bundles atomically. It also starts a step's ranks as local
// processes (LocalStep) for `sbench local`, with the environment srun would
// give them, or an MPI launcher that starts them (LauncherStep); both stop
// a step by signalling its ranks (the signal a context's StopSignal cause
// names, so that a Ctrl-C is recorded as one), and kill what a rank left
// running, found by walking /proc from the processes they started.
//
// The package builds without cgo and never imports the archive or the
// reports (internal/layering checks both). sbench-runner is one static file
// copied to compute nodes because the Makefile builds it with
// CGO_ENABLED=0 and the netgo and osusergo tags; its TCP is package net's,
// and ranks advertise and dial IP literals only, so that no rank needs a
// name service (--bind takes an IP address too).
//
// # Identity
//
// IdentityFromEnv prefers an MPI launcher's variables to Slurm's: under
// mpirun inside a batch job, SLURM_PROCID is 0 on every rank (or the rank of
// the daemon mpirun started with srun). Open MPI (OMPI_COMM_WORLD_*), then
// Hydra and other PMI-1 launchers (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, but
// not Slurm's mpi/pmi2, which adds PMI_JOBID), then PMIx (PMIX_RANK, unless
// the namespace is Slurm's), then srun. Under mpirun the node is the
// hostname (Hydra copies the launching node's SLURMD_NODENAME to every
// rank), and the node list is made at the bootstrap, in order of first
// appearance by rank. testdata/env holds the environments the tests read,
// and says where each comes from.
//
// The session names the rendezvous file and binds connections: --session
// when given (the campaign's scripts pass "$SLURM_JOB_ID.<step index>"),
// else srun's job and step ids, else mpirun's job id (OMPI_MCA_ess_base_jobid,
// PMIX_NAMESPACE). Hydra exports no job id: it needs --session.
//
// # Bootstrap
//
// Every rank listens on an ephemeral TCP port, on every interface (or on
// the --bind address), and advertises the addresses of the interfaces
// that are up: IPv4 first, then global IPv6, then 127.0.0.1 for ranks on
// the same host. Rank 0 publishes its addresses in <rundir>/<session>.addr
// (written atomically; the run directory must be shared by the step's
// nodes). The other ranks poll for that file, connect, authenticate and
// send a join: their rank, node, listening addresses, a digest of their
// configuration and, from each node's local rank 0, the node's
// provenance. Rank 0 answers with the table of every rank (an all-gather),
// then all ranks pass a barrier. Rank 0 holds one control connection per
// rank, so the bootstrap costs O(n) connections; it handles each join in
// the connection's own goroutine and sends the table and the barrier's
// release to every rank at once.
//
// Each node is described once (GatherHost: /proc, /sys, /etc, and the MPI
// probe for the exec kernel). Rank 0 describes its own before the
// bootstrap; every other node's local rank 0 (every rank, where the
// launcher does not say which that is) describes its node with its join,
// the other ranks send only their own few facts. Rank 0 also publishes
// its machine key (a digest of the kernel's boot id, the hostname and the
// network, mount and UTS namespaces): a node whose ranks have rank 0's key
// is a fake node on rank 0's machine (sbench local makes hundreds), says
// nothing, and rank 0's description stands for it. Either way the bundle
// has one host per node, with the ranks that ran there.
//
// Each host also says which network interfaces its ranks' kernel
// connections crossed (results.Host.Traffic, traffic.go): the interface of
// a connection's local end, or the loopback interface when the peer is on
// the same machine, which Linux routes through lo whichever of the
// machine's addresses was dialled — so the fake nodes of sbench local and
// the ranks of one node say lo. Every rank names its own at the final
// barrier; rank 0 merges them per node. A report quotes the link rate of
// these interfaces only, and none for lo. The exec kernel's tool talks
// over connections of its own, which the runner does not see: its hosts
// say nothing.
//
// Nothing waits forever. Rank 0 gives up at the bootstrap timeout and names
// the ranks that did not join and the node Slurm should have started them on
// (block or cyclic distribution over SLURM_STEP_NODELIST and
// SLURM_STEP_TASKS_PER_NODE). A rank whose kernel fails reports it on its
// control connection; rank 0 then aborts the run on every rank. A control
// connection that closes means its rank died, and fails the run at once.
//
// The run's timeout (--timeout) is one deadline for the step, though each
// rank counts it from its own start: the first rank to pass it tells rank 0,
// or rank 0 tells the others, and every rank stops as at its own deadline.
// The verdict names the command that was still running (rank 0's if it
// had one), "timed out after" the timeout, whichever rank noticed first.
//
// # Authentication
//
// Every connection starts with an HMAC-SHA256 challenge and response in both
// directions, keyed by SBENCH_TOKEN and bound to the job step, so a process
// without the token can neither join nor impersonate rank 0. A refused
// connection is logged on stderr and the run goes on. Without SBENCH_TOKEN the
// runner warns and derives a token from the job and step ids, which keeps
// ranks of different steps apart but is no secret.
//
// What a stranger can cost a rank is bounded: at most 128 connections (or
// the step's size less one, when that is more: every rank may dial rank 0
// at once) may be in their handshake at once (one more closes the oldest,
// which a real rank, answering within a round trip, never is for long),
// each for 3s at most; a connection is admitted before the rank is
// welcomed, so a rank turned away dials again rather than failing; refusals are logged three at a time, then summed up in one line per
// 10s. Accept errors, such as running out of file descriptors, are retried
// after 5ms doubling to 1s, never the end of the listener, and a bootstrap
// that fails meanwhile says so before naming the ranks that did not join.
//
// # Wire format
//
// Control messages are frames: a 4-byte big-endian length, a type byte and a
// JSON payload, but for the rank table, which every rank receives and
// which grows with the step: it is binary (table.go), encoded once and
// sent to every rank at once, as barrier releases are. Frames before
// authentication are limited to 4 KiB. Kernel data travels unframed on its
// own connection, after the same handshake.
//
// # Kernels
//
// latency is a ping-pong: rank 0 sends a message, rank 1 echoes it, and the
// one-way latency is half the round trip (avg, min, max, p50, p99 in us).
// bw streams a window of messages back to back from rank 0 to rank 1, which
// acknowledges each window; bandwidth is bytes over time in MB/s (10^6 bytes
// per second), and min/max/p50/p99 are over windows. Both set TCP_NODELAY.
//
// Every kernel connection between two ranks of one node caps its send
// buffer at 256 KiB (SO_SNDBUF 128 KiB, which Linux doubles). Over
// loopback, autotuning lets a streaming sender queue megabytes, more than
// the cores' caches hold, and the copies into and out of the socket then
// run from memory: bw cost twice NPtcp's CPU time per byte. Before each
// size the streaming kernels (bw, bibw, pairs, matrix) let the sender's
// buffer grow with the message, to 1 MiB at most (SO_SNDBUF 512 KiB), so
// that a large message does not wait for its peer several times over.
// Between nodes the buffers stay the kernel's, sized for the link. In spin
// mode, reads of every size busy-poll for up to 50 us before they park
// (fastio.go).
//
// Over loopback a stream is bound by its sender's core: Linux runs the
// receiving half of TCP (delivery, acknowledgements, freeing what the
// receiver has read) on the sending CPU, so bw's sender does nearly all
// the stack's work, where a ping-pong such as NPtcp's shares it between
// both cores. Smaller or larger send buffers, writes in pieces, spinning
// writes and readers that wait on poll(2) were all measured and were no
// better. What takes work off the sender is not copying: with send=splice
// (a parameter of bw, pairs and matrix) a sender hands messages of 64 KiB
// and more to TCP by reference, vmsplice(2) into a pipe and splice(2) into
// the socket, as sendfile(2) does for iperf3 -Z (splice.go); the receiver
// still copies and checks every byte. What that buys depends on the host:
// on a 2-vCPU VM on 2026-12-02 it raised bw at 512 KiB by a median 1.22x
// over write(2) (8 interleaved runs of 60 windows; 7 of 8 faster) and won
// 6 of 6 interleaved runs at 256 KiB; on a 2-core AMD EPYC VM on
// 2026-12-03 bench/runner-vs-tools.sh measured bw spliced at 0.40-0.92x
// NPtcp from 64 KiB up, where writing reached 1.04-3.07x at every one of
// those sizes, and the quickstart's 4 MiB bandwidth fell from 1.08x iperf3
// to 0.44-0.53x. So send=copy, which writes as NPtcp, iperf3 and MPI
// libraries do, is the default, and the figures of every archived run
// before splicing are its: a run that spliced says send=splice in its
// bundle's params, so that it is never pooled with, or compared as the
// same configuration as, a run that wrote. The pairs kernel's senders on
// one node share half the user's pipe pages (fs.pipe-user-pages-soft). The
// bench judges the default and shows splicing beside it
// (bench/runner-vs-tools.sh).
//
// Default repetitions follow OSU's scaling by size, reduced so that a
// 1 B to 4 MiB sweep over loopback takes a few seconds:
//
//	latency  up to 8 KiB: 1000 iterations, 100 warm-up
//	         above 8 KiB: 100 iterations, 10 warm-up
//	bw       up to 8 KiB: 100 windows, 10 warm-up
//	         above 8 KiB: 20 windows, 2 warm-up, fewer for large messages so
//	         that one size moves at most 512 MiB (never under 2 windows and
//	         1 warm-up)
//
// The iterations and warmup parameters override these for every size.
// Messages carry a pattern that depends on the size and the iteration; the
// receiver checks the first and last byte of every message and the whole
// message on the first iterations, every 16th and the last (every message up
// to 4 KiB), so a corrupted or misordered transfer fails the run. A 0-byte
// message travels as a 1-byte marker, since TCP has no empty messages.
//
// # More kernels
//
// These run over a mesh of kernel connections: each rank connects to the
// few peers its algorithm needs (and to rank 0, which collects every
// rank's measurements on them), with the same handshake, deadlines and
// checks as latency and bw.
//
//	bibw       both directions at once between ranks 0 and 1 (osu_bibw):
//	           each side writes a window while reading the other's, rank 1
//	           acknowledges; bidirectional_bandwidth counts both directions
//	pairs      several pairs stream at once after a barrier (systest,
//	           osu_mbw_mr): placement=half (default) pairs rank i with
//	           i+n/2, intra pairs within each node, inter node j with node
//	           j+m/2; a bandwidth sample per pair (tagged intra-node or
//	           inter-node, from and to), aggregate_bandwidth (the sum) and
//	           message_rate (messages/s)
//	matrix     every ordered pair of nodes, between the lowest ranks of
//	           the nodes: matrix_latency at latency_size (default 8 B; the
//	           median of 100 round trips' halves) and matrix_bandwidth at
//	           bandwidth_size (default 1 MiB, about 32 MiB streamed); no
//	           x, tags from, to, round and schedule, for a heatmap. Then
//	           re-tests of the links outside tolerance (see below)
//	barrier    a dissemination barrier (⌈log2 n⌉ rounds)
//	allreduce  sum of float64 vectors: recursive doubling (any n, as
//	           MPICH) below 64 KiB, a ring (reduce-scatter, all-gather) above
//	alltoall   n-1 pairwise exchange steps
//	bcast      binomial tree from rank 0
//	stream     STREAM's copy, scale, add and triad on every rank at once
//	           (a barrier before each kernel), per rank and summed per node
//	hpl        HPL's LU with partial pivoting (package hpl/lu, pure Go and
//	           Go assembly) on every rank at once, each solving its own
//	           system of order n ("EP", like HPCC's Star runs): hpl_gflops
//	           per rank and node_hpl_gflops per node, scalars gflops (sum),
//	           time_s (slowest rank), residual (worst), and HPL's residual
//	           check (< 16) — a failed one makes the run invalid
//
// Collectives (barrier, allreduce, alltoall, bcast) time each iteration
// between barriers, as OSU's collective benchmarks do, and report
// "latency" over the size as OSU prints it: the mean over ranks of each
// rank's mean time (OSU's Avg Latency), min and max the fastest and
// slowest rank's. (The mean of the per-iteration maximum would read
// higher and would not plot against OSU's curves.) Sizes default to 8 B
// to 1 MiB; allreduce's must be multiples of 8.
//
// Every kernel checks its data: messages carry the latency kernel's
// pattern and are checked the same way (alltoall's depend on the source
// and destination too, bibw's on the direction); allreduce's elements are
// whole numbers whose sum every rank checks; stream checks its arrays
// against STREAM's expected values (average relative error under 1e-13),
// as STREAM does.
//
// stream's array_size (default 10M doubles: 3 arrays are 240 MB, over
// 4× a large L3) and iterations (default 10) follow STREAM; its rate is
// STREAM's best rate, the first iteration left out, in MB/s (10^6 B/s).
//
// # The matrix kernel's rounds and re-tests
//
// schedule=rounds (the default) is a round-robin tournament by the
// circle method (kernels.MatrixRounds): n/2 disjoint node pairs per round, n-1
// rounds for even n, n for odd n (node r sits out round r), each round
// after a dissemination barrier of its own participants only; a pair
// measures a to b, then b to a. schedule=sequential is one pair per
// round after a barrier of every node, for fabrics where concurrent
// pairs interfere. The measuring side of each direction keeps its
// summaries (value, min, max, p50, p99, iterations) and sends them to
// rank 0 every 64 rounds and at the end of a pass: a few KiB, which the
// socket buffers hold, so no node waits for rank 0 to read.
//
// Rank 0 then judges the pass with package kernels' Tolerance
// (latency_tolerance, bandwidth_tolerance: ClusterKit's 2.1 and 0.93)
// and sends the suspect directed links down a binomial tree of the
// nodes; every node packs them into rounds of disjoint pairs the same way
// (kernels.PackRounds, a greedy edge colouring) and re-tests them with half the
// repetitions of the pass before, each pass judged against the first
// pass's lowest latency and highest bandwidth (JudgeAgainst), up to
// retests passes (default 3). Re-test samples are
// matrix_retest_latency and matrix_retest_bandwidth, tagged with their
// pass. The bundle's params record the schedule, retests and both
// tolerances.
//
// # The exec kernel
//
// exec runs a real tool instead (osu_bw, NPtcp, iperf3, xhpl, hpcc …): a
// command on every rank (Exec.Argv) or per rank (Exec.RankArgv), with
// placeholders ({rank}, {size}, {host:N}, {node:N}, {hostname:N},
// {workdir}) the runner expands itself once the bootstrap has told every
// rank the others' addresses; no shell is involved. Rank 0 prepares the
// work directory and its input files; the other ranks start their commands
// and say so at a barrier; after StartDelay rank 0 starts its own. When it
// ends, rank 0 tells the others, whose commands get a second to end by
// themselves (MPI programs, NetPIPE's receiver), then SIGTERM, then
// SIGKILL (servers such as iperf3 -s). Every command runs in its own
// process group with the runner's environment, so an MPI program started
// under srun --mpi=pmix or mpirun finds its launcher. A final barrier
// brings rank 0 how each command ended and the tail of its standard error.
//
// Since the tool is likely an MPI program, each node's description then
// names the MPI installed there (Host.MPI, from mpirun --version,
// mpichversion or ompi_info, within 2 seconds) and the MPI library the
// tool's program loads there, which need not be the same
// (Host.MPILibrary and MPILibraryPath, mpilib.go): the program as the
// rank starts it (PATH, or relative to the work directory), its ELF
// dependencies resolved as glibc's loader does (DT_RPATH up the chain of
// loaders, LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache, the default
// directories), and the version the library exports (Open MPI's
// ompi_version_string, MPICH's MPII_Version_string, named after the
// derivative whose name its read-only data holds). Nothing is run. Every
// kernel's records the runner's own commit (Host.Extra["runner_revision"])
// when the build stamped one.
//
// A command that fails anywhere fails the run, naming the rank, the node,
// the command, its exit status and its last line of standard error. A
// command on a rank other than 0 that exits non-zero by itself (not a
// signal) is weighed first: rank 0's command gets execStopWait to end by
// itself, and when it exited 0 and its output parses without an error,
// the run is ok and the exit is its note (Bundle.Note): the other ranks'
// commands did their part whatever status they ended with. NPtcp 3.7.2's
// receiver is the known case: it exits 3 ("Connection reset by peer") on
// its closing handshake, after a complete curve, and the rank whose
// command exited succeeds too. Without a command on rank 0 (any rank may
// have written the output) or without a parser, such an exit fails the
// run. Whatever became of the run, rank 0 parses its standard output (or
// Exec.Output) with the parsers package (HPL and HPCC included) and writes
// one bundle per run found, with its samples: a failed run's bundles keep
// them, and every rank's standard error, and no view takes them for
// figures; an output no parser reads gives one failed bundle with it.
// Each bundle keeps the campaign's benchmark name and says, as the parser
// does for the same output ingested from a file, which tool printed it
// (Benchmark.Tool: IMB-MPI1, osu-micro-benchmarks) and which of its
// benchmarks the run is (Benchmark.ToolBenchmark: "IMB-MPI1 PingPong",
// "IMB-MPI1 Allreduce"), so that one command running several benchmarks
// archives several configurations, never one.
//
// Parser none (parsers.None) is for a command whose output holds no
// figures (hostname, an application): its run is ok or failed by its
// exit status, keeps its output, and has one figure, its wall time
// (results.MetricWallTime, in s, lower is better): rank 0's command's, or
// the time until every rank's had ended when rank 0 runs none. Parser
// auto refuses an output no format knows, and its error says to use none.
//
// # Placement
//
// sbench's scripts tell every launch how its ranks were planned
// (--plan-nodes N --plan-ppn K, Config.Plan). Rank 0 compares the ranks'
// nodes, as the bootstrap met them (the bundle's hosts, each with its
// ranks), with the plan: on another number of nodes, or with more than K
// ranks on one node, the run is still measured, and every bundle of it
// that did not fail is invalid with both placements in its reason
// ("placement: planned 2 nodes × 1 rank; ran on 1 node: n1 ranks 0,1"),
// before the reasons of failed checks. A wrapped tool runs beside each
// rank, with its environment (its MPI rank is the runner's), so the
// judgement holds for tools as for native kernels; a tool that is itself
// a launcher places its own processes, which the runner does not see.
//
// # Checks and repeats
//
// Every kernel's bundles go through the same --check specs (ApplyChecks): a
// check that fails, or finds nothing to judge, makes an ok bundle invalid.
// --repeat numbers a repetition in the bundle's params and samples.
package runner
