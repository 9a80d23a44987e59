package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/results"
)

func TestIngestStoresEverything(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	osu := osuBundle("ib-acceptance", "ib", "1234", 3)
	osu.Samples[1].Min, osu.Samples[1].Max = results.F(1.5), results.F(2.5)
	osu.Samples[1].P50, osu.Samples[1].P99 = results.F(2), results.F(2.4)
	osu.Samples[2].Pair = []int{0, 1}
	osu.Samples[2].Tags = map[string]string{"direction": "n01->n02"}
	osu.Source = "section 2"
	hpl := hplBundle("ib-acceptance", "1235", time.Date(2024, 5, 1, 9, 0, 0, 0, time.FixedZone("CEST", 2*3600)))

	res := ingest(t, db, "/data/results/1234.json", osu, hpl)
	if !reflect.DeepEqual(res, IngestResult{Added: []int64{1, 2}}) {
		t.Fatalf("Ingest = %+v, want runs 1 and 2 added", res)
	}

	runs, err := db.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	// Ordered by start: HPL (07:00 UTC) before OSU (10:00 UTC).
	hash, _ := results.Hash(osu)
	wantOSU := Run{
		ID: 1, Hash: hash, Campaign: "ib-acceptance", Variant: "ib",
		Params: map[string]string{"transport": "ib", "tool": "osu_bw"}, Labels: map[string]string{"fabric": "ib", "site": "lab"},
		Benchmark: "osu_bw", Kind: "tool", Kernel: "osu", Command: []string{"osu_bw", "-m", "1:4194304"},
		Launcher: "srun", Tool: "osu_bw", ToolBenchmark: "osu_bw", ToolVer: "7.4", Status: results.StatusOK,
		JobID: "1234", Step: "0", Nodes: []string{"n01", "n02"}, Tasks: 2, TasksPerNode: "1(x2)",
		Hosts: osu.Hosts, Start: osu.Start, End: osu.End, RunnerVersion: "v0.1.0",
		Source: "/data/results/1234.json", Origin: "section 2", IngestedAt: clock,
	}
	if got := runs[1]; !reflect.DeepEqual(got, wantOSU) {
		t.Errorf("OSU run =\n%+v\nwant\n%+v", got, wantOSU)
	}
	if got := runs[0]; got.ID != 2 || got.Status != results.StatusInvalid || !got.Start.Equal(hpl.Start) ||
		got.Start.Location() != time.UTC || got.Hosts != nil || got.Origin != "" {
		t.Errorf("HPL run = %+v", got)
	}

	samples, err := db.Samples(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var want []Sample
	for _, s := range osu.Samples {
		want = append(want, Sample{RunID: 1, Sample: s})
	}
	for _, s := range hpl.Samples {
		want = append(want, Sample{RunID: 2, Sample: s})
	}
	if !reflect.DeepEqual(samples, want) {
		t.Errorf("samples =\n%+v\nwant\n%+v", samples, want)
	}

	scalars, err := db.Scalars(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(scalars) != len(hpl.Scalars) {
		t.Fatalf("%d scalars, want %d", len(scalars), len(hpl.Scalars))
	}
	for i, s := range scalars {
		if s.RunID != 2 || s.Scalar != hpl.Scalars[i] {
			t.Errorf("scalar %d = %+v, want %+v of run 2 (bundle order kept)", i, s, hpl.Scalars[i])
		}
	}
	checks, err := db.Checks(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 || checks[0].Check != hpl.Checks[0] || checks[1].Check != hpl.Checks[1] || checks[1].RunID != 2 {
		t.Errorf("checks = %+v, want %+v", checks, hpl.Checks)
	}
}

func TestIngestIsIdempotent(t *testing.T) {
	db := openTemp(t)
	a := osuBundle("c", "ib", "1", 5)
	b := osuBundle("c", "tcp", "2", 5)
	first := ingest(t, db, "a.json", a, b)
	before := counts(t, db)

	tests := []struct {
		name    string
		bundles []*results.Bundle
		want    IngestResult
	}{
		{"same file again", []*results.Bundle{a, b}, IngestResult{Skipped: first.Added}},
		{"a copy read from another file", []*results.Bundle{roundTrip(t, b)}, IngestResult{Skipped: first.Added[1:]}},
		{"nothing", nil, IngestResult{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ingest(t, db, "again.json", tt.bundles...)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Ingest = %+v, want %+v", got, tt.want)
			}
			if after := counts(t, db); !reflect.DeepEqual(after, before) {
				t.Errorf("row counts changed: %v, was %v", after, before)
			}
		})
	}

	// A duplicate within one batch is stored once.
	c := osuBundle("c", "roce", "3", 5)
	got := ingest(t, db, "dup.json", c, roundTrip(t, c))
	if len(got.Added) != 1 || !reflect.DeepEqual(got.Skipped, got.Added) {
		t.Errorf("Ingest of a batch with a duplicate = %+v, want one added and the same id skipped", got)
	}
	// A changed bundle is a different run.
	d := roundTrip(t, c)
	d.Samples[0].Value++
	if got := ingest(t, db, "changed.json", d); len(got.Added) != 1 {
		t.Errorf("Ingest of a changed bundle = %+v, want it added", got)
	}
}

func TestIngestIsAllOrNothing(t *testing.T) {
	good := osuBundle("c", "ib", "1", 4)
	invalid := osuBundle("c", "broken", "2", 4)
	invalid.Status = "crashed"
	late := osuBundle("c", "late", "3", 4)
	late.Start = time.Date(12024, 1, 1, 0, 0, 0, 0, time.UTC)
	late.End = late.Start
	boom := osuBundle("c", "boom", "4", 4)
	boom.Samples[2].Metric = "boom" // the trigger below makes its insert fail

	tests := []struct {
		name    string
		bundles []*results.Bundle
		want    []string // in the error
	}{
		{"invalid bundle", []*results.Bundle{good, invalid, osuBundle("c", "x", "9", 1)},
			[]string{"ingest f.json", "bundle 2 of 3", `variant "broken"`, `job "2.0"`, "status"}},
		{"nil bundle", []*results.Bundle{good, nil}, []string{"bundle 2 of 2", "nil"}},
		{"time beyond year 9999", []*results.Bundle{good, late}, []string{"bundle 2 of 2", "start", "year 12024"}},
		// The database refuses a row after the good bundle's rows went in:
		// the transaction must take them back out.
		{"insert fails midway", []*results.Bundle{good, boom}, []string{"bundle 2 of 2", `variant "boom"`, "samples[2]", "no boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openTemp(t)
			if _, err := db.w.Exec(`CREATE TRIGGER no_boom BEFORE INSERT ON samples WHEN NEW.metric = 'boom'
				BEGIN SELECT RAISE(ABORT, 'no boom'); END`); err != nil {
				t.Fatal(err)
			}
			res, err := db.Ingest(context.Background(), "f.json", tt.bundles)
			if err == nil {
				t.Fatalf("Ingest = %+v, want an error", res)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if !reflect.DeepEqual(res, IngestResult{}) {
				t.Errorf("failed Ingest reported %+v", res)
			}
			for tb, n := range counts(t, db) {
				if n != 0 {
					t.Errorf("%s has %d rows after a failed ingest", tb, n)
				}
			}
			// The archive is still usable, and the good bundle goes in alone.
			if got := ingest(t, db, "f.json", good); len(got.Added) != 1 {
				t.Errorf("Ingest after the failure = %+v", got)
			}
		})
	}
}

func TestIngestHonoursCancellation(t *testing.T) {
	db := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := db.Ingest(ctx, "f.json", []*results.Bundle{osuBundle("c", "ib", "1", 4)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Ingest with a cancelled context = %v, want context.Canceled", err)
	}
	if n := count(t, db, "runs"); n != 0 {
		t.Errorf("%d runs stored by a cancelled ingest", n)
	}
}

func TestBundleIsReturnedAsIngested(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	small := osuBundle("c", "ib", "1", 25)
	small.Samples[3].Tags = map[string]string{"a<b": "x&y"}
	small.Hosts[0].Extra = map[string]string{"note": "ünïcödé"}
	large := hplBundle("c", "2", time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC))
	large.Raw = strings.Repeat("WR11C2R4 20000 192 8 20 2274.30 2.35125e+03\n", 1000)
	noTimes := results.New()
	noTimes.Benchmark.Name = "pasted"
	noTimes.Samples = []results.Sample{{Metric: "latency", Unit: "us", X: results.F(0), Value: 1.5}}

	res := ingest(t, db, "f.json", small, large, noTimes)
	encodings := map[int64]string{}
	rows, err := db.r.Query("SELECT run_id, encoding FROM bundles")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var enc string
		rows.Scan(&id, &enc)
		encodings[id] = enc
	}
	rows.Close()

	for i, in := range []*results.Bundle{small, large, noTimes} {
		id := res.Added[i]
		got, err := db.Bundle(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := roundTrip(t, in); !reflect.DeepEqual(got, want) {
			t.Errorf("Bundle(%d) =\n%+v\nwant\n%+v", id, got, want)
		}
		if h1, h2 := mustHash(t, got), mustHash(t, in); h1 != h2 {
			t.Errorf("Bundle(%d) hashes to %s, the ingested bundle to %s", id, h1, h2)
		}
	}
	if encodings[res.Added[0]] != encodingJSON || encodings[res.Added[1]] != encodingJSONGzip {
		t.Errorf("encodings = %v, want the small bundle plain and the large one gzipped", encodings)
	}
	// Plain bundles can be queried from the sqlite3 shell.
	var raw string
	if err := db.r.QueryRow("SELECT json_extract(data, '$.benchmark.tool_version') FROM bundles WHERE run_id = ?", res.Added[0]).Scan(&raw); err != nil || raw != "7.4" {
		t.Errorf("json_extract on a stored bundle = %q, %v", raw, err)
	}

	if _, err := db.Bundle(ctx, 999); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "run 999") {
		t.Errorf("Bundle(999) = %v, want ErrNotFound naming run 999", err)
	}
}

func mustHash(t testing.TB, b *results.Bundle) string {
	t.Helper()
	h, err := results.Hash(b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestHostsAreStoredOnce(t *testing.T) {
	db := openTemp(t)
	a := osuBundle("c", "ib", "1", 2)
	b := osuBundle("c", "tcp", "2", 2)
	c := osuBundle("c", "roce", "3", 2)
	c.Hosts[1].Kernel = "5.14.0" // n02 upgraded between runs
	ingest(t, db, "f.json", a, b, c)
	if n := count(t, db, "hosts"); n != 3 {
		t.Errorf("%d host descriptions stored, want 3 (n01, n02, upgraded n02)", n)
	}
	if n := count(t, db, "run_hosts"); n != 6 {
		t.Errorf("%d run_hosts rows, want 6", n)
	}
	runs, err := db.Runs(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range []*results.Bundle{a, b, c} {
		if !reflect.DeepEqual(runs[i].Hosts, in.Hosts) {
			t.Errorf("run %d hosts =\n%+v\nwant\n%+v", runs[i].ID, runs[i].Hosts, in.Hosts)
		}
	}
	// Runs sharing a description do not share its memory.
	runs[0].Hosts[0].CPUFlags[0] = "changed"
	runs[0].Hosts[0].Extra["bios"] = "changed"
	if runs[1].Hosts[0].CPUFlags[0] != "avx2" || runs[1].Hosts[0].Extra["bios"] != "2.14.2" {
		t.Error("changing one run's host changed another's")
	}
}

func TestIngestFilesKeepsEachFileWhole(t *testing.T) {
	db := openTemp(t)
	if _, err := db.w.Exec(`CREATE TRIGGER no_boom BEFORE INSERT ON samples WHEN NEW.metric = 'boom'
		BEGIN SELECT RAISE(ABORT, 'no boom'); END`); err != nil {
		t.Fatal(err)
	}
	good := osuBundle("c", "ib", "1", 4)
	invalid := osuBundle("c", "broken", "2", 4)
	invalid.Benchmark.Name = ""
	boom := osuBundle("c", "boom", "3", 4)
	boom.Samples[3].Metric = "boom"
	other := osuBundle("c", "tcp", "4", 4)

	got, err := db.IngestFiles(context.Background(), []File{
		{Source: "good.json", Bundles: []*results.Bundle{good}},
		{Source: "invalid.json", Bundles: []*results.Bundle{other, invalid}},
		{Source: "boom.json", Bundles: []*results.Bundle{other, boom}}, // other's rows go in, then come out
		{Source: "copy.json", Bundles: []*results.Bundle{roundTrip(t, good)}},
		{Source: "empty.json"},
		{Source: "other.json", Bundles: []*results.Bundle{other}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		added, skipped int
		err            []string
	}{
		{1, 0, nil},
		{0, 0, []string{"ingest invalid.json", "bundle 2 of 2", "benchmark.name"}},
		{0, 0, []string{"ingest boom.json", "bundle 2 of 2", "samples[3]", "no boom"}},
		{0, 1, nil},
		{0, 0, nil},
		{1, 0, nil},
	}
	if len(got) != len(want) {
		t.Fatalf("%d results for %d files", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if len(g.Added) != w.added || len(g.Skipped) != w.skipped || (g.Err == nil) != (w.err == nil) {
			t.Errorf("file %s: %+v, want %d added, %d skipped, error %v", g.Source, g, w.added, w.skipped, w.err)
			continue
		}
		for _, s := range w.err {
			if !strings.Contains(g.Err.Error(), s) {
				t.Errorf("file %s: error %q does not contain %q", g.Source, g.Err, s)
			}
		}
	}
	if !reflect.DeepEqual(got[3].Skipped, got[0].Added) {
		t.Errorf("copy.json skipped %v, want good.json's run %v", got[3].Skipped, got[0].Added)
	}
	if n := count(t, db, "runs"); n != 2 {
		t.Errorf("%d runs stored, want 2 (good and other)", n)
	}
	if n := count(t, db, "samples"); n != 8 {
		t.Errorf("%d samples stored, want 8", n)
	}
	// A failure that is not about one file stores nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := db.IngestFiles(ctx, []File{{Source: "late.json", Bundles: []*results.Bundle{osuBundle("c", "late", "5", 2)}}})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Errorf("IngestFiles with a cancelled context = %v, %v", res, err)
	}
	if n := count(t, db, "runs"); n != 2 {
		t.Errorf("%d runs after a cancelled batch, want 2", n)
	}
}

func TestIngestInvalidUTF8(t *testing.T) {
	// A tool printing Latin-1 "µs" (0xb5) makes invalid UTF-8. JSON, and so
	// the stored bundle and the content hash, replace each bad byte with
	// U+FFFD; the rows must say the same.
	db := openTemp(t)
	latin := osuBundle("c", "ib", "1", 1)
	latin.Samples[0].Unit = "\xb5s"
	other := osuBundle("c", "ib", "1", 1)
	other.Samples[0].Unit = "\xb6s"
	res := ingest(t, db, "f.json", latin, other)
	if len(res.Added) != 1 || !reflect.DeepEqual(res.Skipped, res.Added) {
		t.Errorf("Ingest = %+v, want one run (the hashes are equal)", res)
	}
	samples, err := db.Samples(context.Background(), Filter{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Bundle(context.Background(), res.Added[0])
	if err != nil {
		t.Fatal(err)
	}
	if samples[0].Unit != "\uFFFDs" || b.Samples[0].Unit != "\uFFFDs" {
		t.Errorf("unit in rows %q, in bundle %q; want both %q", samples[0].Unit, b.Samples[0].Unit, "\uFFFDs")
	}
	if latin.Samples[0].Unit != "\xb5s" {
		t.Error("Ingest changed the caller's bundle")
	}
}

// TestFileSizeIsWhatItHolds: a file's Size, by which ingest bounds the
// bundles it holds at once, is the JSON's length before compression. The
// compressed length understated a large run tenfold, and ingest of a
// site's matrix runs held 355 MB.
func TestFileSizeIsWhatItHolds(t *testing.T) {
	b := osuBundle("c", "ib", "1", 400)
	data, err := json.Marshal(results.Canonical(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(data) <= compressAbove {
		t.Fatalf("the bundle is %d bytes of JSON, not above compressAbove (%d): it is not compressed", len(data), compressAbove)
	}
	f := File{Source: "big.json", Bundles: []*results.Bundle{b}}
	f.Prepare()
	if got := f.Size(); got != len(data) {
		t.Errorf("Size() = %d, want the JSON's %d bytes (stored compressed: %d)", got, len(data), len(f.enc[0].data.([]byte)))
	}
}
