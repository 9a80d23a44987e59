package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

// The migration harness: for every schema version older than the latest,
// build an archive that stops at that version, fill it the way that
// version's sbench wrote it (raw SQL against that version's tables, not
// today's Ingest), open it with Open and check that everything reads back.
//
// Adding migration N+1 means adding seeds[N]: a fill of the archive as
// version N stores it. TestEveryOldVersionHasASeed fails until then.

// seedBundle is the run every seed stores.
func seedBundle() *results.Bundle {
	b := results.New()
	b.Campaign = "legacy"
	b.Variant = "ib"
	b.Params = map[string]string{"transport": "ib"}
	b.Labels = map[string]string{"fabric": "ib"}
	b.Job = results.Job{ID: "77", Step: "0", Nodes: []string{"n1", "n2"}, Tasks: 2}
	b.Start = time.Date(2023, 1, 2, 3, 4, 5, 6, time.UTC)
	b.End = b.Start.Add(time.Minute)
	b.Hosts = []results.Host{{Hostname: "n1", Cores: 8}}
	b.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool", Kernel: "osu"}
	b.Samples = []results.Sample{
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(1), XUnit: "bytes", Value: 0.5, P99: results.F(0.75)},
		{Metric: "bandwidth", Unit: "MB/s", X: results.F(2), XUnit: "bytes", Value: 1.25, Pair: []int{0, 1}},
	}
	b.Scalars = []results.Scalar{{Name: "peak", Unit: "MB/s", Value: 1.25}}
	b.Checks = []results.Check{{Name: "peak>0", Value: 1.25, Threshold: 0, Op: ">", Passed: true}}
	return b
}

var seeds = map[int]func(t *testing.T, tx *sql.Tx){
	1: seedV1,
}

func seedV1(t *testing.T, tx *sql.Tx) {
	b := seedBundle()
	hash, _ := results.Hash(b)
	data, _ := results.Marshal(b)
	for _, s := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO runs (id, hash, campaign, variant, benchmark, kind, kernel, command, launcher, tool, tool_version, status, error,
			job_id, step, array_index, nodes, tasks, tasks_per_node, start_time, end_time, runner_version, source, origin, ingested_at)
			VALUES (1, ?, 'legacy', 'ib', 'osu_bw', 'tool', 'osu', NULL, '', '', '', 'ok', '', '77', '0', '', '["n1","n2"]', 2, '',
			'2023-01-02T03:04:05.000000006Z', '2023-01-02T03:05:05.000000006Z', '', 'old.json', '', '2023-01-03T00:00:00.000000000Z')`, []any{hash}},
		{`INSERT INTO bundles (run_id, encoding, data) VALUES (1, 'json', ?)`, []any{string(data)}},
		{`INSERT INTO run_labels VALUES (1, 'fabric', 'ib')`, nil},
		{`INSERT INTO run_params VALUES (1, 'transport', 'ib')`, nil},
		{`INSERT INTO hosts (id, hash, hostname, node_name, cpu_model, cores, memory_bytes, kernel, os, mpi, host)
			VALUES (5, 'h1', 'n1', '', '', 8, 0, '', '', '', '{"hostname":"n1","cores":8}')`, nil},
		{`INSERT INTO run_hosts (run_id, idx, host_id) VALUES (1, 0, 5)`, nil},
		{`INSERT INTO samples (run_id, seq, metric, unit, x, x_unit, value, min, max, p50, p99, iterations, repeat, pair, tags) VALUES
			(1, 0, 'bandwidth', 'MB/s', 1, 'bytes', 0.5, NULL, NULL, NULL, 0.75, 0, 0, NULL, NULL),
			(1, 1, 'bandwidth', 'MB/s', 2, 'bytes', 1.25, NULL, NULL, NULL, NULL, 0, 0, '[0,1]', NULL)`, nil},
		{`INSERT INTO scalars (run_id, seq, name, unit, value) VALUES (1, 0, 'peak', 'MB/s', 1.25)`, nil},
		{`INSERT INTO checks (run_id, seq, name, value, threshold, op, passed) VALUES (1, 0, 'peak>0', 1.25, 0, '>', 1)`, nil},
		{`INSERT INTO jobs (slurm_id, campaign, variants, name, script, results_dir, submitted, state, reason, exit_code, start_time, end_time, nodelist, updated)
			VALUES ('77', 'legacy', '["ib"]', 'j', 's.sbatch', 'out', '2023-01-02T03:00:00.000000000Z', 'COMPLETED', '', '0:0', NULL, NULL, 'n[1-2]', '2023-01-02T04:00:00.000000000Z')`, nil},
	} {
		if _, err := tx.Exec(s.q, s.args...); err != nil {
			t.Fatalf("seed: %v\n%s", err, s.q)
		}
	}
}

// checkSeed reads the seeded run back through today's API.
func checkSeed(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	b := seedBundle()
	runs, err := db.Runs(ctx, Filter{Campaign: "legacy", Labels: map[string]string{"fabric": "ib"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs after migration, want 1", len(runs))
	}
	r := runs[0]
	if r.ID != 1 || r.Variant != "ib" || !r.Start.Equal(b.Start) || !reflect.DeepEqual(r.Nodes, b.Job.Nodes) ||
		!reflect.DeepEqual(r.Params, b.Params) || !reflect.DeepEqual(r.Hosts, b.Hosts) || r.Source != "old.json" ||
		r.ToolBenchmark != "osu_bw" {
		t.Errorf("run after migration = %+v", r)
	}
	samples, err := db.Samples(ctx, Filter{RunIDs: []int64{1}})
	if err != nil {
		t.Fatal(err)
	}
	var want []Sample
	for _, s := range b.Samples {
		want = append(want, Sample{RunID: 1, Sample: s})
	}
	if !reflect.DeepEqual(samples, want) {
		t.Errorf("samples after migration =\n%+v\nwant\n%+v", samples, want)
	}
	scalars, _ := db.Scalars(ctx, Filter{})
	checks, _ := db.Checks(ctx, Filter{})
	if len(scalars) != 1 || scalars[0].Scalar != b.Scalars[0] || len(checks) != 1 || checks[0].Check != b.Checks[0] {
		t.Errorf("scalars %+v, checks %+v after migration", scalars, checks)
	}
	got, err := db.Bundle(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, roundTrip(t, b)) {
		t.Errorf("bundle after migration = %+v", got)
	}
	jobs, err := db.Jobs(ctx, "legacy")
	if err != nil || len(jobs) != 1 || jobs[0].NodeList != "n[1-2]" || !reflect.DeepEqual(jobs[0].Variants, []string{"ib"}) {
		t.Errorf("jobs after migration = %+v, %v", jobs, err)
	}
	// The migrated archive takes new runs, and knows the seeded one.
	res := ingest(t, db, "again.json", b, osuBundle("legacy", "tcp", "78", 3))
	if !reflect.DeepEqual(res.Skipped, []int64{1}) || len(res.Added) != 1 {
		t.Errorf("ingest into the migrated archive = %+v, want the seeded run skipped", res)
	}
}

// buildAt returns the path of an archive at schema version v holding the
// seed for v.
func buildAt(t *testing.T, v int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.db", v))
	old, err := openWith(context.Background(), path, migrations[:v])
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if got, _ := old.SchemaVersion(context.Background()); got != v {
		t.Fatalf("archive built at version %d reports %d", v, got)
	}
	seed := seeds[v]
	if seed == nil {
		t.Fatalf("no seed for schema version %d", v)
	}
	tx, err := old.w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	seed(t, tx)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEveryOldVersionHasASeed(t *testing.T) {
	for v := 1; v < len(migrations); v++ {
		if seeds[v] == nil {
			t.Errorf("schema version %d has no seed: add one so the migration from it is tested", v)
		}
	}
}

func TestMigrateWithData(t *testing.T) {
	for v := 1; v < len(migrations); v++ {
		t.Run(fmt.Sprintf("from v%d", v), func(t *testing.T) {
			db := openAt(t, buildAt(t, v))
			if got, _ := db.SchemaVersion(context.Background()); got != len(migrations) {
				t.Fatalf("schema version after Open = %d, want %d", got, len(migrations))
			}
			checkSeed(t, db)
		})
	}
}

func TestMigrationsCreateIndexes(t *testing.T) {
	path := buildAt(t, 1)
	const query = "SELECT id FROM runs WHERE campaign = 'legacy' ORDER BY start_time"
	plan := func(db *DB) string { return queryPlan(t, db, query) }
	old, err := openWith(context.Background(), path, migrations[:1])
	if err != nil {
		t.Fatal(err)
	}
	before := plan(old)
	old.Close()
	if strings.Contains(before, "runs_campaign") {
		t.Fatalf("v1 archive already uses the v2 index:\n%s", before)
	}
	if after := plan(openAt(t, path)); !strings.Contains(after, "runs_campaign") || strings.Contains(after, "TEMP B-TREE") {
		t.Errorf("a campaign's runs are not read through runs_campaign in order:\n%s", after)
	}
}

func TestFailedMigrationKeepsTheLastGoodVersion(t *testing.T) {
	path := buildAt(t, 1)
	broken := append(append([]migration{}, migrations...), migration{
		name: "broken",
		// The first statement succeeds, the second fails: the transaction
		// must take the first back.
		apply: execSQL("CREATE TABLE half (x); CREATE TABLE runs (x);"),
	})
	_, err := openWith(context.Background(), path, broken)
	if err == nil {
		t.Fatal("Open with a broken migration succeeded")
	}
	for _, w := range []string{path, fmt.Sprintf("schema version %d (broken)", len(migrations)+1), "already exists"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	db := openAt(t, path)
	if v, _ := db.SchemaVersion(context.Background()); v != len(migrations) {
		t.Errorf("schema version %d after a failed migration to %d, want %d (the known ones applied, the broken one rolled back)", v, len(migrations)+1, len(migrations))
	}
	if n := count(t, db, "sqlite_schema WHERE name = 'half'"); n != 0 {
		t.Error("the failed migration's first statement was kept")
	}
	checkSeed(t, db)
}

// queryPlan is SQLite's plan for query, one step a line.
func queryPlan(t *testing.T, db *DB, query string) string {
	t.Helper()
	rows, err := db.r.Query("EXPLAIN QUERY PLAN " + query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan += detail + "\n"
	}
	return plan
}
