// Package screen decides what a screening of a partition found: which
// node, which one direction of a node's link, which node pair is not what
// the others are, from the archived runs of a screening campaign
// (examples/screen.toml). It is the one analysis behind sbench screen and
// the report's screening section and heatmaps; they only draw it.
//
// # What is judged
//
// The matrix kernel measures every ordered node pair (matrix_latency,
// matrix_bandwidth, tagged from/to). Each run's pairs are judged together
// by ClusterKit's rule (package kernels' Tolerance: a latency above 2.1×
// the lowest, a bandwidth below 93% of the highest is outside tolerance).
// The runner re-tests the pairs it finds outside tolerance
// (matrix_retest_latency and matrix_retest_bandwidth, tagged pass=K);
// re-tests are held to the first pass's references, so that re-testing
// only bad pairs does not make the worst of them the standard. A value is
// bad when it is outside tolerance in the first pass and in every re-test
// of it, transient when a re-test came back within — transient links are
// listed, never flagged. Over several matrix runs a link is bad when it
// is bad in every run that measured it.
//
// A pairs = "reference" placement (the first node to every other and
// back, latency at the smallest size measured, bandwidth at the largest)
// is judged the same way, all links together; a reference link outside
// tolerance that the matrix measured within is transient (the matrix
// measures it again and again: repeats, re-tests). The per-node figures —
// STREAM triad (node_stream_triad) and HPL Gflops (node_hpl_gflops) —
// are held to Options.NodeFraction (85%) of their median over the nodes.
// The provenance the runner recorded of every node (CPU, cores, memory,
// OS, kernel, MPI, governor, every InfiniBand port's state, rate, firmware
// and link layer, network interfaces' speeds) is compared field by field:
// a node whose value differs from one held by more than half of the
// nodes is blamed (memory within 3% of the median is alike); a field
// without such a majority is a warning.
//
// # Nodes, one-way links and links
//
// A bad link is blamed on a node, on one direction of a node's link, or
// on itself:
//
//   - a node is bad when more than half of its links from it AND more
//     than half of its links to it are bad. The node with the largest
//     share is blamed first, and its links no longer count for the
//     others: a bad node makes one of every other node's links bad, two
//     bad nodes two, and that must not make a third look bad. Both links
//     between a node and the reference node bad blames it too, as does a
//     low STREAM or HPL figure or a provenance mismatch. A bad node is
//     drained.
//   - one-way: more than half of a node's links in one direction are
//     bad, those the other way are fine ("n3→*": what n3 sends; "*→n3":
//     what it receives). The node computes and receives (or sends)
//     normally: its port, cable or NIC is slow one way. Not drained; the
//     links are named.
//   - what is left is a link: one direction of a pair ("n3→n5") or both
//     ("n3↔n5").
//
// Attribution needs 4 nodes: with 3, each has two links a direction and
// a bad link looks like a bad node. A failed screening run is a finding
// of its own, as what it was to measure is not known.
//
// # Views
//
// Analyze returns a Verdict: the findings with their evidence (the
// value, the reference, the limit), the drain list with its scontrol
// lines (quoted for a shell; sbench never runs them), the per-node table
// and the transient links. WriteText and WriteDrain draw it for a
// terminal; it encodes as JSON; package reports draws it as a section and
// orders and marks its heatmaps with it (NodeOrder, MatrixCheck.Link).
// Latest picks the screening to judge: the submission of the newest
// matrix run.
package screen
