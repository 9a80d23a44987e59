package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sbench/sbench/results"
)

// applicationID marks a SQLite file as an sbench archive ("sbnc" in ASCII),
// so that Open refuses to add tables to somebody else's database.
const applicationID = 0x73626e63

// A migration takes the schema from its position in the list to the next
// version. Migrations are never edited once released: a change is a new
// migration appended to the list.
type migration struct {
	name  string
	apply func(ctx context.Context, tx *sql.Tx) error
}

// migrations is the schema's history; version N means the first N applied.
var migrations = []migration{
	{"base tables", execSQL(schemaV1)},
	{"query indexes", execSQL(schemaV2)},
	{"baselines", execSQL(schemaV3)},
	{"attempts and planned steps", execSQL(schemaV4)},
	{"systems and housekeeping indexes", execSQL(schemaV5)},
	{"tool benchmarks", migrateV6},
	{"run notes", execSQL(schemaV7)},
	{"submissions and job dependencies", execSQL(schemaV8)},
	{"expectations", execSQL(schemaV9)},
}

// LatestSchemaVersion is the schema version this sbench writes.
func LatestSchemaVersion() int { return len(migrations) }

func execSQL(script string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, script)
		return err
	}
}

// schemaV1 holds the tables. Columns that hold the bundle's optional strings
// are NOT NULL and hold the empty string for absent, as the bundle does;
// NULL is kept for what has no value at all (an unknown time, a sample with
// no x).
const schemaV1 = `
CREATE TABLE runs (
	id             INTEGER PRIMARY KEY,
	hash           TEXT NOT NULL UNIQUE,
	campaign       TEXT NOT NULL,
	variant        TEXT NOT NULL,
	benchmark      TEXT NOT NULL,
	kind           TEXT NOT NULL,
	kernel         TEXT NOT NULL,
	command        TEXT,             -- JSON array
	launcher       TEXT NOT NULL,
	tool           TEXT NOT NULL,
	tool_version   TEXT NOT NULL,
	status         TEXT NOT NULL,
	error          TEXT NOT NULL,
	job_id         TEXT NOT NULL,    -- Slurm job id; with campaign, links to jobs
	step           TEXT NOT NULL,
	array_index    TEXT NOT NULL,
	nodes          TEXT,             -- JSON array, in Slurm's order
	tasks          INTEGER NOT NULL,
	tasks_per_node TEXT NOT NULL,
	start_time     TEXT,
	end_time       TEXT,
	runner_version TEXT NOT NULL,
	source         TEXT NOT NULL,    -- file the run was ingested from
	origin         TEXT NOT NULL,    -- the bundle's own source (section of a file)
	ingested_at    TEXT NOT NULL
);

-- The bundle as ingested, apart from runs so that scanning runs stays cheap.
CREATE TABLE bundles (
	run_id   INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	encoding TEXT NOT NULL CHECK (encoding IN ('json', 'json+gzip')),
	data     BLOB NOT NULL        -- TEXT when encoding is json, so json_extract works on it
);

CREATE TABLE run_labels (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	key    TEXT NOT NULL,
	value  TEXT NOT NULL,
	PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE TABLE run_params (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	key    TEXT NOT NULL,
	value  TEXT NOT NULL,
	PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

-- Host descriptions, stored once however many runs they took part in: the
-- same nodes run a whole campaign, and a description with its CPU flags is
-- a kilobyte or more.
CREATE TABLE hosts (
	id           INTEGER PRIMARY KEY,
	hash         TEXT NOT NULL UNIQUE, -- SHA-256 of host
	hostname     TEXT NOT NULL,
	node_name    TEXT NOT NULL,
	cpu_model    TEXT NOT NULL,
	cores        INTEGER NOT NULL,
	memory_bytes INTEGER NOT NULL,
	kernel       TEXT NOT NULL,
	os           TEXT NOT NULL,
	mpi          TEXT NOT NULL,
	host         TEXT NOT NULL         -- the whole results.Host as JSON
);

CREATE TABLE run_hosts (
	run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	idx     INTEGER NOT NULL,          -- position in the bundle
	host_id INTEGER NOT NULL REFERENCES hosts(id),
	PRIMARY KEY (run_id, idx)
) WITHOUT ROWID;

-- Samples, scalars and checks are clustered by run: reading a run's points
-- is one range scan, and an ingest appends to the end of one b-tree instead
-- of a table and an index.
CREATE TABLE samples (
	run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,    -- position in the bundle
	metric     TEXT NOT NULL,
	unit       TEXT NOT NULL,
	x          REAL,                -- NULL for a point with no x
	x_unit     TEXT NOT NULL,
	value      REAL NOT NULL,
	min        REAL,
	max        REAL,
	p50        REAL,
	p99        REAL,
	iterations INTEGER NOT NULL,
	repeat     INTEGER NOT NULL,
	pair       TEXT,                -- JSON array of ranks
	tags       TEXT,                -- JSON object
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE scalars (
	run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq    INTEGER NOT NULL,
	name   TEXT NOT NULL,
	unit   TEXT NOT NULL,
	value  REAL NOT NULL,
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE checks (
	run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq       INTEGER NOT NULL,
	name      TEXT NOT NULL,
	value     REAL NOT NULL,
	threshold REAL NOT NULL,
	op        TEXT NOT NULL,
	passed    INTEGER NOT NULL CHECK (passed IN (0, 1)),
	PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE jobs (
	id          INTEGER PRIMARY KEY,
	slurm_id    TEXT NOT NULL,
	campaign    TEXT NOT NULL,
	variants    TEXT,               -- JSON array
	name        TEXT NOT NULL,
	script      TEXT NOT NULL,
	results_dir TEXT NOT NULL,
	submitted   TEXT,
	state       TEXT NOT NULL,
	reason      TEXT NOT NULL,
	exit_code   TEXT NOT NULL,
	start_time  TEXT,
	end_time    TEXT,
	nodelist    TEXT NOT NULL,
	updated     TEXT,
	UNIQUE (campaign, slurm_id)
);
`

// schemaV2 adds the indexes behind the common queries. It is a migration of
// its own so that the upgrade path is exercised from the first release.
// Every index costs a page write per ingest transaction (the measured cost of
// an ingest is mostly pages written to the WAL), so there is none that a
// clustered key or a cheap scan already serves: runs of a job are found
// through their campaign, samples through their run.
const schemaV2 = `
CREATE INDEX runs_start ON runs(start_time, id);
CREATE INDEX runs_campaign ON runs(campaign, start_time);
CREATE INDEX runs_benchmark ON runs(benchmark, start_time);
CREATE INDEX run_labels_kv ON run_labels(key, value);
CREATE INDEX hosts_hostname ON hosts(hostname);
CREATE INDEX jobs_submitted ON jobs(submitted, id);
`

// schemaV3 adds baselines: named sets of runs that later runs are compared
// with. A baseline holds run ids rather than the selection that found them,
// so that it does not grow as runs are added. baseline_runs.run_id has no
// ON DELETE action: deleting a run a baseline holds fails, and prune leaves
// such runs alone; the index serves that check and "which baselines hold
// this run".
const schemaV3 = `
CREATE TABLE baselines (
	name      TEXT PRIMARY KEY,
	selection TEXT NOT NULL,   -- the selector the user gave, for display
	note      TEXT NOT NULL,
	created   TEXT NOT NULL
);

CREATE TABLE baseline_runs (
	baseline TEXT NOT NULL REFERENCES baselines(name) ON DELETE CASCADE,
	run_id   INTEGER NOT NULL REFERENCES runs(id),
	PRIMARY KEY (baseline, run_id)
) WITHOUT ROWID;

CREATE INDEX baseline_runs_run ON baseline_runs(run_id);
`

// schemaV4 keeps what a job was planned to run and what became of it:
// every planned step ends as a run, with a bundle or without (jobs.plan);
// a requeued job's attempts are told apart (runs.restart, jobs.restarts);
// the job's output files are where a step that wrote no bundle left its
// messages (jobs.output, jobs.error); a job submitted but not yet known by
// its Slurm id is found again by the comment sbatch was given
// (jobs.intent).
const schemaV4 = `
ALTER TABLE runs ADD COLUMN restart INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN plan TEXT;                          -- JSON array of planned steps
ALTER TABLE jobs ADD COLUMN output TEXT NOT NULL DEFAULT '';    -- sbatch --output, as given (%j …)
ALTER TABLE jobs ADD COLUMN error TEXT NOT NULL DEFAULT '';     -- sbatch --error, "" when with output
ALTER TABLE jobs ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN intent TEXT NOT NULL DEFAULT '';    -- sbatch --comment before the id was known
CREATE INDEX runs_job ON runs(job_id, campaign);
`

// schemaV5 makes the system a run came from a column of its own, so that
// one archive holds a site's clusters and every command filters and groups
// by it through an index: runs.system is the run's "system" label (what
// sbench ingest --system and campaign labels set, copied here for the runs
// already archived), else the Slurm cluster the runner recorded. It also
// adds the indexes the filters lacked: runs by status (prune --status
// failed), and run_hosts by host, which prune's clean-up of unused host
// descriptions and "which runs used this node" read.
const schemaV5 = `
ALTER TABLE runs ADD COLUMN system TEXT NOT NULL DEFAULT '';
UPDATE runs SET system = l.value FROM run_labels l WHERE l.run_id = runs.id AND l.key = 'system';
CREATE INDEX runs_system ON runs(system, start_time);
CREATE INDEX runs_status ON runs(status, start_time);
CREATE INDEX run_hosts_host ON run_hosts(host_id);
`

// migrateV6 gives every run the benchmark its tool ran (runs.tool_benchmark),
// part of its configuration (ConfigOf): IMB-MPI1's PingPong and Allreduce
// of one command were two runs of one configuration. The runs already
// archived are read as results.Benchmark.Normalized reads their bundles,
// as an ingest of them would: an ingested tool output's is its benchmark
// name; a wrapped tool's was in runs.tool, which becomes the tool that
// printed it ("IMB-MPI1 PingPong" was run by IMB-MPI1), as a wrapped run
// now says. Wrapped runs are updated per distinct tool (a few dozen
// names, however many runs), each row once.
func migrateV6(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `ALTER TABLE runs ADD COLUMN tool_benchmark TEXT NOT NULL DEFAULT '';
UPDATE runs SET tool_benchmark = benchmark WHERE kind = 'tool' AND kernel != 'exec'`); err != nil {
		return err
	}
	tools, err := queryStrings(ctx, tx, `SELECT DISTINCT tool FROM runs WHERE kind = 'tool' AND kernel = 'exec' AND tool != '' ORDER BY 1`)
	if err != nil {
		return err
	}
	for _, tool := range tools {
		b := results.Benchmark{Kind: "tool", Kernel: "exec", Tool: tool}.Normalized()
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET tool = ?, tool_benchmark = ?
WHERE kind = 'tool' AND kernel = 'exec' AND tool = ? AND tool_benchmark = ''`, b.Tool, b.ToolBenchmark, tool); err != nil {
			return err
		}
	}
	return nil
}

// schemaV7 keeps an ok run's note (results.Bundle.Note: a rank whose
// command exited non-zero after the run's output was complete), which the
// report shows under the run. No archived run has one: a runner before
// notes failed such runs, and an sbench before them refused a bundle with
// one.
const schemaV7 = `
ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
`

// schemaV8 records what was inferred before: the submission a job belongs
// to (jobs.submission, the id sbench submit or sbench local gave all the
// jobs it recorded; "" for jobs recorded before, whose submission is
// still inferred), and the jobs it waits for (jobs.after_ok, the Slurm ids
// of its --dependency=afterok), from which sbench status tells a job that
// can never start however long Slurm keeps it pending.
const schemaV8 = `
ALTER TABLE jobs ADD COLUMN submission TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN after_ok TEXT;                      -- JSON array of Slurm job ids
`

// schemaV9 records each campaign's acceptance references ([[expect]]) as
// it was last submitted or run, so that sbench check campaign:NAME needs
// no file: its own under an empty site, and those of each site profile it ran
// under under the profile's name, each set replaced by the next recording
// of its kind; seq keeps the order.
const schemaV9 = `
CREATE TABLE expectations (
	campaign  TEXT NOT NULL,
	site      TEXT NOT NULL,             -- '' for the campaign's own, else the site profile's name
	seq       INTEGER NOT NULL,
	name      TEXT NOT NULL,
	benchmark TEXT NOT NULL,
	metric    TEXT NOT NULL,
	at        TEXT NOT NULL,
	bound     TEXT NOT NULL,
	selection TEXT NOT NULL,             -- the expectation's where
	system    TEXT NOT NULL,
	source    TEXT NOT NULL,
	recorded  TEXT NOT NULL,
	PRIMARY KEY (campaign, site, seq)
);
`

// NewerSchemaError is returned by Open for an archive written by a newer
// sbench, whose schema this one does not know.
type NewerSchemaError struct {
	Path    string
	Version int // the archive's
	Known   int // the newest this sbench knows
}

func (e *NewerSchemaError) Error() string {
	return fmt.Sprintf("archive %s has schema version %d; this sbench knows up to %d", e.Path, e.Version, e.Known)
}

// migrate applies the migrations of list the archive lacks, each in its own
// transaction, so that a failure leaves the archive at the last version that
// succeeded.
func migrate(ctx context.Context, w *sql.DB, path string, list []migration) error {
	for {
		done, err := migrateStep(ctx, w, path, list)
		if err != nil || done {
			return err
		}
	}
}

// archiveVersion reads the schema version of the archive at path, which q
// reads, checking that it is an sbench archive (or an empty file) of a
// version up to known.
func archiveVersion(ctx context.Context, q interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}, path string, known int) (int, error) {
	var version, appID, objects int
	err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version)
	if err == nil {
		err = q.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID)
	}
	if err == nil {
		err = q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects)
	}
	if err != nil {
		return 0, fmt.Errorf("open archive %s: %w", path, err)
	}
	if appID != applicationID && (appID != 0 || version != 0 || objects != 0) {
		return 0, fmt.Errorf("open archive %s: not an sbench archive (application id %#x, user version %d, %d schema objects)",
			path, appID, version, objects)
	}
	if version > known {
		return 0, &NewerSchemaError{Path: path, Version: version, Known: known}
	}
	return version, nil
}

func migrateStep(ctx context.Context, w *sql.DB, path string, list []migration) (done bool, err error) {
	// The writer's transactions are BEGIN IMMEDIATE: a second sbench opening
	// the same new archive waits here and then finds the work done.
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("open archive %s: %w", path, err)
	}
	defer tx.Rollback()
	version, err := archiveVersion(ctx, tx, path, len(list))
	if err != nil {
		return false, err
	}
	if version == len(list) {
		return true, nil
	}
	m := list[version]
	if err := m.apply(ctx, tx); err != nil {
		return false, fmt.Errorf("migrate archive %s to schema version %d (%s): %w", path, version+1, m.name, err)
	}
	// PRAGMAs take no parameters; both values are integers of ours.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d; PRAGMA application_id = %d", version+1, applicationID)); err != nil {
		return false, fmt.Errorf("migrate archive %s to schema version %d: %w", path, version+1, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate archive %s to schema version %d: %w", path, version+1, err)
	}
	return false, nil
}
