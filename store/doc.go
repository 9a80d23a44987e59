// Package store is sbench's archive: every result bundle ever ingested, kept
// in one SQLite file together with the Slurm jobs that produced them, and the
// queries that reports, compare, history and export run against it.
//
// # Why SQLite, and how it is opened
//
// An archive is a single file an engineer can copy, attach to a ticket or
// open with the sqlite3 shell. Open puts it in WAL mode (on a local file
// system: see below) so that a report can read while an ingest writes,
// turns foreign keys on, and sets a busy timeout so that two sbench
// processes ingesting at once wait for each other instead of failing. Writes go through one connection and start with BEGIN
// IMMEDIATE: a write transaction that began as a read could otherwise fail
// with SQLITE_BUSY when another writer commits first. Reads use a separate
// pool of query-only connections and run each multi-query read in one
// transaction, so a report never sees half of an ingest.
//
// synchronous=NORMAL is used with WAL: a power cut may lose the last commits
// but never corrupts the file, and the bundles on disk remain the source of
// truth (ingest is idempotent, so re-ingesting them restores what was lost).
//
// # On a network file system
//
// WAL's index of the log is shared memory (PATH-shm), which each host maps
// on its own: SQLite documents that WAL does not work on a network file
// system, and a cluster's home directories are one. Open and OpenReadOnly
// ask statfs(2) for the file system (NFS, Lustre, GPFS, BeeGFS, CIFS/SMB,
// CephFS, FUSE, AFS …: networkFileSystems) and there use a rollback journal
// (journal_mode=DELETE, synchronous=FULL), whose only shared state is the
// file's POSIX locks; where the mount options keep the locks on one host
// (NFS nolock, CIFS nobrl, Lustre localflock) the archive is refused, a
// *FileSystemError. An archive found there in WAL mode is switched first
// (leaveWAL), in exclusive locking mode, which reads the log without
// mapping PATH-shm and succeeds only when no other process has the archive
// open. Readers then wait for a commit, and a commit for readers, within
// busyTimeout. docs/install.md has the table and what remains a risk.
//
// # Schema and migrations
//
// The schema version is PRAGMA user_version; the archive is marked with its
// own PRAGMA application_id so that Open refuses an unrelated SQLite file.
// Migrations are an ordered list; version N means the first N have been
// applied, each in its own transaction. An archive written by a newer sbench
// (a version beyond the list) is refused rather than misread.
//
// Tables: runs (one per bundle, unique by content hash, with the system it
// came from: SystemOf; and its tool and the benchmark the tool ran as
// results.Benchmark.Normalized reads them from a bundle of any sbench,
// schema v6; and an ok run's note, v7), run_labels,
// run_params, hosts (each distinct host description once) and run_hosts,
// samples, scalars, checks, bundles (the bundle as ingested, in the
// canonical form results.Hash hashes, as JSON, gzip-compressed when large)
// and jobs. Times are stored
// as fixed-width RFC 3339 UTC text with nanoseconds, which sorts as it reads;
// an unknown time is NULL.
//
// # Ingest
//
// Ingest stores the bundles of one source file in one transaction: all of
// them or none. A bundle whose content hash (results.Hash) is already in the
// archive is skipped, so ingesting the same results directory twice is
// harmless. Statements are prepared once per archive and reused by every
// transaction, and the bundles are validated and encoded before the write
// lock is taken.
//
// The cost of an ingest is mostly its commit: every page the transaction
// touched (about twenty for a 25-point OSU file: the runs row and its
// indexes, the bundle, labels, samples) is written to the WAL. That is why
// there are few indexes and why samples are clustered by run, and why
// IngestFiles exists: it stores a whole directory in one transaction, each
// file in a savepoint so that a bad file is still left out whole.
//
// # Queries and export
//
// A Filter selects runs (system, campaign, run ids, benchmark, labels,
// status, job, start time); Runs, Samples, Scalars and Checks return rows
// in a fixed order, and ExportCSV and ExportJSON write them
// deterministically (floats in their shortest exact form), so exported
// files can be diffed and used as golden files. ExportBenchfmt writes the
// Go benchmark format (configuration lines, unit directions) so that
// benchstat reads an archive.
//
// # An archive of years
//
// A site keeps years of runs in one file, several clusters side by side
// (runs.system, schema v5). Every command that reads the whole archive
// streams it: EachRun walks runs one at a time in a single statement (each
// run's labels, parameters and hosts aggregated by subqueries), decoding
// what runs share — labels, node lists, host descriptions — once and
// sharing it; EachSample reads samples a batch ahead on a goroutine of its
// own, in no sorted order but run by run, values only unless asked, with
// the forms the store writes decoded without reflection. Exports walk the
// runs in id order, each run's rows read with it. ExportArchive and
// ImportArchive move one run at a time. What a command keeps is what it
// computes, never the samples.
//
// # Baselines, archives and pruning
//
// A baseline (schema v3: baselines, baseline_runs) names a set of runs as a
// reference point, frozen when it is set: later runs never join it, and
// Prune never deletes a run a baseline holds. PlanPrune lists what a prune
// would delete before Prune deletes exactly those ids. ExportArchive and
// ImportArchive move runs between archives as their bundles (gzip), through
// the same ingest, so an import is as atomic and idempotent as an ingest;
// a baseline whose runs all travel goes with them, its runs named by
// content hash. Vacuum gives the space of deleted runs back to the disk.
package store
