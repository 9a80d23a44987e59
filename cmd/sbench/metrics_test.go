package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/store"
)

// metricsCampaign is an application with no known output (a shell
// printing LAMMPS's lines) read by user-defined metrics, and one whose
// output shows a rejected pattern. reject is the "broken" benchmark's
// reject list.
func metricsCampaign(reject string) string {
	return `
[campaign]
name = "metrics"
[slurm]
nodes = 1
ntasks_per_node = 1

[[benchmark]]
name = "app"
command = ["sh", "-c", "echo 'Loop time of 1.41366 on 2 procs for 100 steps with 32000 atoms'; echo 'Performance: 30558.925 tau/day, 70.738 timesteps/s'; echo 'Total wall time: 0:00:01'"]
require = ['^Total wall time: ']
checks = ["timesteps_per_s>=50"]
[[benchmark.metric]]
name = "timesteps_per_s"
regex = 'Performance: .*, ([0-9.]+) timesteps/s'
unit = "timesteps/s"
[[benchmark.metric]]
name = "tau_per_day"
regex = 'Performance: (?P<tau>[0-9.]+) tau/day'
value = "tau"
unit = "tau/day"
[[benchmark.metric]]
name = "loop_time"
regex = '^Loop time of ([0-9.]+) on'
unit = "ms"

[[benchmark]]
name = "broken"
command = ["sh", "-c", "echo 'step 1 t= 5'; echo 'ERROR: Lost atoms: original 32000 current 31999'"]
reject = ` + reject + `
[[benchmark.metric]]
name = "t"
regex = 't= (\d+)'
unit = "s"
`
}

// TestLocalUserMetrics: sbench local runs a command no parser knows, with
// no parser given: its runs are read by the campaign's patterns (parser
// none, wall time included), a rejected pattern makes a run invalid with
// the pattern in its reason, the bundle records the definitions, and
// sbench ingest --reparse reads the archived runs again with a changed
// campaign, in place.
func TestLocalUserMetrics(t *testing.T) {
	endToEndDir(t, "runs a campaign")
	os.WriteFile("m.toml", []byte(metricsCampaign(`['^ERROR']`)), 0o644)
	_, stderr, _ := sbench(t, "local", "m.toml", "--db", "a.db")

	out, _ := mustSbench(t, 0, "runs", "--db", "a.db", "--json")
	var runs []runJSON
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, stderr)
	}
	byName := map[string]runJSON{}
	for _, r := range runs {
		byName[r.Benchmark] = r
	}
	if r := byName["app"]; r.Status != "ok" {
		t.Errorf("app: %+v\n%s", r, stderr)
	}
	wantReason := `sanity: the output shows the rejected pattern "^ERROR" on line 2: "ERROR: Lost atoms: original 32000 current 31999"`
	if r := byName["broken"]; r.Status != "invalid" || r.Error != wantReason {
		t.Errorf("broken: %+v, want invalid: %s", r, wantReason)
	}
	values := map[string]string{}
	for _, row := range exportRows(t, "a.db") {
		values[row["benchmark"]+" "+row["metric"]+" "+row["unit"]] = row["value"]
	}
	for k, v := range map[string]float64{"app timesteps_per_s timesteps/s": 70.738, "app tau_per_day tau/day": 30558.925, "app loop_time s": 0.00141366, "broken t s": 5} {
		got, err := strconv.ParseFloat(values[k], 64)
		if err != nil || got != v {
			t.Errorf("%s = %q, want %v (all: %v)", k, values[k], v, values)
		}
	}
	if values["app wall_time s"] == "" {
		t.Errorf("no wall time: %v", values)
	}
	// The bundle records the definitions it was read with.
	db, err := store.OpenReadOnly("a.db")
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.Bundle(context.Background(), byName["app"].ID)
	db.Close()
	if err != nil || b.Benchmark.Extract == nil || len(b.Benchmark.Extract.Metrics) != 3 || b.Benchmark.Extract.Require[0] != "^Total wall time: " {
		t.Errorf("the bundle lacks its definitions: %v %+v", err, b)
	}

	// Read again with the definitions recorded: nothing changes.
	out, _ = mustSbench(t, 0, "ingest", "--db", "a.db", "--reparse", "campaign:metrics")
	if !strings.Contains(out, "2 run(s) re-parsed, 0 changed") {
		t.Errorf("reparse with the recorded definitions: %s", out)
	}
	// A campaign that rejects nothing more: broken is ok again, in place.
	os.WriteFile("m2.toml", []byte(metricsCampaign(`['^FATAL']`)), 0o644)
	out, _ = mustSbench(t, 0, "ingest", "--db", "a.db", "--reparse", "--campaign", "m2.toml")
	want := "run " + strconv.FormatInt(byName["broken"].ID, 10) + " broken: invalid [t=5 wall_time="
	if !strings.Contains(out, want) || !strings.Contains(out, "] ("+wantReason+") → ok [t=5 wall_time=") || !strings.Contains(out, "2 run(s) re-parsed, 1 changed") {
		t.Errorf("reparse --campaign:\n%s\nwant %s", out, want)
	}
	out, _ = mustSbench(t, 0, "runs", "--db", "a.db", "--json")
	runs = nil
	json.Unmarshal([]byte(out), &runs)
	if len(runs) != 2 {
		t.Fatalf("%d runs after reparse", len(runs))
	}
	for _, r := range runs {
		if r.Status != "ok" || r.ID != byName[r.Benchmark].ID {
			t.Errorf("after reparse: %+v", r)
		}
	}
}

// sbench validate places each problem of a definition in the file: a
// regular expression's at the character where it goes wrong.
func TestValidateUserMetrics(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.toml")
	src := strings.Replace(metricsCampaign(`['^ERROR']`), `regex = 't= (\d+)'`, `regex = 't= (\d+'`, 1)
	os.WriteFile(path, []byte(src), 0o644)
	_, stderr, code := sbench(t, "validate", path)
	want := path + ":33:13: benchmark[1].metric[0].regex: not a regular expression: missing closing ): `t= (\\d+` (column 4 of the pattern)"
	if code == 0 || !strings.Contains(stderr, want) {
		t.Errorf("validate: exit %d\n%s\nwant %s", code, stderr, want)
	}
}

// TestLocalLAMMPSMetrics runs Debian's LAMMPS on the LJ melt input under
// sbench local and reads its timesteps/s, tau/day and loop time.
func TestLocalLAMMPSMetrics(t *testing.T) {
	testenv.LookPath(t, "lmp", "lammps")
	input, err := os.ReadFile(filepath.Join(repoRoot(t), "parsers/testdata/lammps-in.melt"))
	if err != nil {
		t.Fatal(err)
	}
	endToEndDir(t, "runs LAMMPS")
	os.WriteFile("lmp.toml", []byte(`
[campaign]
name = "lj"
[slurm]
nodes = 1
[sweep]
ntasks_per_node = [1, 2]
[[benchmark]]
name = "lj-melt"
command = ["lmp", "-in", "in.melt", "-log", "none"]
launcher = { type = "mpirun", flavor = "openmpi" }
env = { OMP_NUM_THREADS = "1" }
require = ['^Total wall time: ']
reject = ['^ERROR']
[benchmark.files."in.melt"]
content = '''`+string(input)+`'''
[[benchmark.metric]]
name = "timesteps_per_s"
regex = 'Performance: .*, ([0-9.]+) timesteps/s'
unit = "timesteps/s"
[[benchmark.metric]]
name = "tau_per_day"
regex = 'Performance: ([0-9.]+) tau/day'
unit = "tau/day"
[[benchmark.metric]]
name = "loop_time"
regex = '^Loop time of ([0-9.]+) on (?P<procs>\d+) procs'
unit = "s"
`), 0o644)
	_, stderr, code := sbench(t, "local", "lmp.toml", "--db", "a.db")
	if code != 0 {
		t.Fatalf("local: exit %d\n%s", code, stderr)
	}
	got := map[string]map[string]float64{} // variant -> metric unit -> value
	for _, row := range exportRows(t, "a.db") {
		if row["status"] != "ok" {
			t.Errorf("row %v", row)
		}
		v, _ := strconv.ParseFloat(row["value"], 64)
		if got[row["variant"]] == nil {
			got[row["variant"]] = map[string]float64{}
		}
		got[row["variant"]][row["metric"]+" "+row["unit"]] = v
	}
	if len(got) != 2 {
		t.Fatalf("%d variants, want 2 (ntasks_per_node 1 and 2): %v", len(got), got)
	}
	for variant, m := range got {
		for _, k := range []string{"timesteps_per_s timesteps/s", "tau_per_day tau/day", "loop_time s", "wall_time s"} {
			if m[k] <= 0 {
				t.Errorf("%s: %s = %v (all: %v)", variant, k, m[k], m)
			}
		}
		// 200 steps in the loop time: timesteps/s is their ratio, as printed.
		if r := m["timesteps_per_s timesteps/s"] * m["loop_time s"]; r < 199 || r > 201 {
			t.Errorf("%s: timesteps/s × loop time = %v, want 200", variant, r)
		}
	}
}
