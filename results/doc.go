// Package results defines the result bundle: the versioned JSON document that
// sbench-runner writes for every job step and that sbench ingests into the
// archive. It is the contract between the runner, the parsers and the store.
//
// The package is a leaf: it imports nothing of sbench's own, so that the
// runner, the parsers, the HPL code and the store can all depend on it without
// cycles. A bundle carries the campaign and variant, the Slurm job, per-host
// provenance, what ran, its status, the measured samples and scalars, the
// validity checks and the raw tool output.
//
// Bundles are written atomically (WriteFile: temporary file, sync, rename) so
// that a reader never sees half a result, and read strictly (Decode refuses
// unknown fields and other schema versions).
package results
