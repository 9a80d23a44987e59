package store

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/sbench/sbench/results"
)

// undoV6 takes a v6 archive back to v5: the column goes, and a wrapped
// tool's runs.tool is the bundle's again (the parser's name for the run,
// as a v5 sbench stored it), read from the bundle as ingested (those not
// compressed, which is every one the tests make of wrapped runs).
const undoV6 = `ALTER TABLE runs DROP COLUMN tool_benchmark;
UPDATE runs SET tool = coalesce((SELECT json_extract(b.data, '$.benchmark.tool') FROM bundles b
	WHERE b.run_id = runs.id AND b.encoding = 'json'), tool);
`

// A v5 archive holds what a v4 one does; its runs know their system.
func init() {
	seeds[5] = func(t *testing.T, tx *sql.Tx) {
		seeds[4](t, tx)
		if _, err := tx.Exec(`UPDATE runs SET system = ''`); err != nil {
			t.Fatal(err)
		}
	}
}

// runsKeptByV6 are the columns of a v5 runs table that v6 keeps: all but
// tool, which it rewrites for wrapped tools.
const runsKeptByV6 = `id, hash, campaign, variant, benchmark, kind, kernel, command, launcher, tool_version, status, error, job_id,
	step, array_index, nodes, tasks, tasks_per_node, start_time, end_time, runner_version, source, origin, ingested_at, restart, system`

// TestMigrateV5ToV6 takes an archive as a v5 sbench left it — IMB's
// PingPong and Allreduce wrapped in one campaign benchmark by an older
// runner (the tool's benchmark in runs.tool), the same output ingested
// from a file, a native run — and opens it: every row stays, the wrapped
// runs are two configurations named by the benchmark their tool ran,
// with the tool that ran it, as they are when the same bundles are
// ingested by this sbench, and as a new runner's runs of the campaign
// are; re-ingesting the output with today's parser adds nothing.
func TestMigrateV5ToV6(t *testing.T) {
	ctx := context.Background()
	imb := imbRuns(t)
	old := []struct {
		source string
		runs   []*results.Bundle
	}{
		{"22.json", []*results.Bundle{wrapped(imb[0], "22", true), wrapped(imb[1], "22", true)}},
		{"imb.txt", []*results.Bundle{ingestedBefore(imb[0]), ingestedBefore(imb[1])}},
		{"a.json", []*results.Bundle{osuBundle("acc", "ib", "1", 3)}},
	}
	native := osuBundle("acc", "tcp", "2", 3)
	native.Benchmark.Kind, native.Benchmark.Kernel, native.Benchmark.Tool, native.Benchmark.ToolVersion = "native", "latency", "", ""
	old = append(old, struct {
		source string
		runs   []*results.Bundle
	}{"n.json", []*results.Bundle{native}})

	db := openTemp(t)
	fresh := openTemp(t)
	for _, o := range old {
		ingest(t, db, o.source, o.runs...)
		ingest(t, fresh, o.source, o.runs...)
	}
	tables := slices.DeleteFunc(slices.Clone(v3Tables), func(s string) bool { return s == "runs" })
	db = downgradeAndMigrateKeeping(t, db, undoV9+undoV8+undoV7+undoV6+"PRAGMA user_version = 5", append(tables, "runs"), map[string]string{"runs": runsKeptByV6})

	runs, err := db.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(runs, func(a, b Run) int { return int(a.ID - b.ID) })
	const imbParams = "datatype=MPI_BYTE,reduction_datatype=MPI_FLOAT,reduction_op=MPI_SUM,processes=2"
	want := []toolKey{
		{"IMB-MPI1", "IMB-MPI1 PingPong", "campaign=imb-camp,variant=n2,tool_benchmark=IMB-MPI1 PingPong," + imbParams},
		{"IMB-MPI1", "IMB-MPI1 Allreduce", "campaign=imb-camp,variant=n2,tool_benchmark=IMB-MPI1 Allreduce," + imbParams},
		{"IMB-MPI1", "IMB-MPI1 PingPong", imbParams},
		{"IMB-MPI1", "IMB-MPI1 Allreduce", imbParams},
		{"osu_bw", "osu_bw", "campaign=acc,variant=ib,tool=osu_bw,transport=ib,fabric=ib,site=lab,processes=2"},
		{"", "", "campaign=acc,variant=tcp,tool=osu_bw,transport=tcp,fabric=tcp,site=lab,processes=2"},
	}
	if got := toolKeys(runs); !slices.Equal(got, want) {
		t.Errorf("after migration, runs as tool, tool benchmark, configuration:\n got %q\nwant %q", got, want)
	}
	ingested, err := fresh.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ingested, func(a, b Run) int { return int(a.ID - b.ID) })
	if got, again := toolKeys(runs), toolKeys(ingested); !slices.Equal(got, again) {
		t.Errorf("the migration reads old runs as\n%q\nan ingest of their bundles as\n%q", got, again)
	}

	// Today's runner and parser: the new runs of the campaign are the
	// configurations of the migrated ones; the file is archived already.
	res := ingest(t, db, "33.json", wrapped(imb[0], "33", false), wrapped(imb[1], "33", false))
	again := ingest(t, db, "imb.txt", imb...)
	if len(again.Added) != 0 || len(again.Skipped) != 2 {
		t.Errorf("re-ingesting the IMB output after migration: %+v, want both runs skipped", again)
	}
	newRuns, err := db.Runs(ctx, Filter{RunIDs: res.Added})
	if err != nil || len(newRuns) != 2 {
		t.Fatalf("%d new runs, %v", len(newRuns), err)
	}
	slices.SortFunc(newRuns, func(a, b Run) int { return int(a.ID - b.ID) })
	for i := range newRuns {
		if got, was := ConfigOf(&newRuns[i]).Key(), ConfigOf(&runs[i]).Key(); got != was {
			t.Errorf("new run %d is configuration %q, the migrated one of its benchmark %q", newRuns[i].ID,
				ConfigOf(&newRuns[i]), ConfigOf(&runs[i]))
		}
	}
	if n := count(t, db, "runs WHERE tool_benchmark = 'IMB-MPI1 PingPong'"); n != 3 {
		t.Errorf("%d runs of IMB-MPI1 PingPong in the column, want 3 (migrated, ingested, new)", n)
	}
}
