// Package compare answers "what got worse?" after a firmware, driver, kernel
// or MPI upgrade: it compares two selections of archived runs, and follows
// one metric over time to find where it stepped.
//
// # Comparing two selections
//
// A Selector names runs the way a user does: labels or swept values
// (store.Run.Setting), run ids, a campaign, its day or its Nth newest
// submission, a baseline, jobs, or what ran after another selector's runs
// (the Selector type lists its forms). A run both sides select is
// compared on the old side only. A selection that finds nothing is an
// *EmptySelectionError naming what the archive holds (ExplainEmpty), which
// every command can return. Compare loads both sides and Build matches
// their samples: same benchmark, metric, unit, x, tags and rank pair, and
// same configuration. Configuration is the
// campaign, variant, parameters and labels, except those whose values on
// the two sides have nothing in common: those are what the comparison is
// about (the labels the user selected by, a section named after the
// transport), not a reason to keep rows apart.
//
// The run is the unit of replication: each ok run of a side gives a row
// one value, the median of its samples there (a run's own repeats share
// its nodes and its moment, and are no evidence about another run). A
// row compares the medians of the runs' values. When both sides have
// enough runs for a Mann-Whitney U test to reach Alpha at all — MinP(n,
// m) ≤ Alpha, that is 4+4 or 3+5 runs at 0.05 — the row is tested. The
// tested rows of a comparison (of every table, and the rows comparing
// node pairs taken together) are one family: their p-values are adjusted
// by BenjaminiHochberg, and a change counts only when its adjusted q is at
// most Alpha (the text shows "~" otherwise, as benchstat does). A row
// with fewer runs is not judged: "~ n=1+1: too few runs to judge; repeat
// ≥ 4×", and it never counts as a regression — unless
// Options.ThresholdOnly, which judges such rows by the change alone, with
// no evidence behind it. In all cases a change within Threshold is not a
// regression, and the direction comes from the unit (results.BetterFor:
// bandwidth higher is better, latency lower), never from a metric's name.
// Seeded trials (trials_test.go) measure the gate: identical re-runs trip
// it in at most 5% of comparisons, and with 3% run-to-run noise a 20%
// slowdown of one benchmark at 5+5 runs is caught in at least 95%.
//
// Samples that differ only in their node pair (results.PairTag and the
// rank pair) are rows of one table, one per pair and x, closed by a
// PairSummary: counts, the worst pair, and rows comparing each side's pairs
// taken together, which judge when no pair is on both sides (two
// clusters). Tags that only number a sample (results.DescriptiveTag: a
// matrix round, a re-test pass) keep nothing apart. CompareFilters reads
// the archive one run and one sample at a time, both sides at once, each
// side into an accumulator of its own.
//
// The result is data (Result, Table, Row) with text and JSON renderings,
// so that reports can print the same table.
//
// # History: control bands and steps
//
// LoadHistory takes one metric of one benchmark at one x, one point per ok
// run in time order (the median of the run's repeats), and runs two
// analyses:
//
//   - Steps finds changes of level by binary segmentation, each split
//     with the p-value of a permutation test, so that a series of pure
//     noise shows a step at rate Alpha (see Steps for the method, and why
//     it was chosen over PELT and a penalised fit); a segment too short
//     for the test to reach Alpha (Testable: 8 points at 0.05) is not
//     tested.
//   - ControlBands gives each point the mean ± 3σ of up to Window (20)
//     earlier points of the same level, as XDMoD's application kernels do;
//     a band never spans a step, so the new level builds its own band
//     instead of every later run being flagged.
//
// Each step names the first run of the new level, its Slurm job, and what
// differs in provenance between the runs either side of it (kernel, MPI,
// InfiniBand firmware and port rate, …): usually the answer to "why".
//
// # The overview of an archive
//
// OverviewBuilder follows, per system, benchmark and configuration, one key
// figure of each run (peak bandwidth, a matrix's median pair, HPL's Gflops,
// latency at the smallest size) fed one run and one sample at a time, and
// finds its steps as history does: the numbers behind a report's overview,
// for every view of it. Its series are one family (StepFamily): their
// first tests are held to Benjamini–Hochberg, the series selected
// searched further at Alpha·R/m, so that noise in some of many series is
// not taken for steps; HistoryFamily does the same for histories shown
// together.
package compare
