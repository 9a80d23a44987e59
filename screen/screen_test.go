package screen

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/fleet"
	"github.com/sbench/sbench/internal/testenv"
	"github.com/sbench/sbench/kernels"
	"github.com/sbench/sbench/results"
	"github.com/sbench/sbench/store"
)

// archive ingests bundles into a fresh archive.
func archive(t *testing.T, bundles []*results.Bundle) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "screen.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Ingest(context.Background(), "fleet", bundles); err != nil {
		t.Fatal(err)
	}
	return db
}

// screenOf ingests a synthetic screening and judges the newest one.
func screenOf(t *testing.T, o Options, bundles ...[]*results.Bundle) *Verdict {
	t.Helper()
	var all []*results.Bundle
	for _, bs := range bundles {
		all = append(all, bs...)
	}
	db := archive(t, all)
	ctx := context.Background()
	f, _, err := Latest(ctx, db, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := Load(ctx, db, f)
	if err != nil {
		t.Fatal(err)
	}
	return Analyze(in, o)
}

// subjects lists the findings as "kind subject".
func subjects(v *Verdict) string {
	var out []string
	for _, f := range v.Findings {
		out = append(out, string(f.Kind)+" "+f.Subject)
	}
	return strings.Join(out, ", ")
}

func drained(v *Verdict) string {
	var out []string
	for _, d := range v.Drain {
		out = append(out, d.Node)
	}
	return strings.Join(out, ",")
}

func text(t *testing.T, v *Verdict) string {
	t.Helper()
	var b bytes.Buffer
	if err := v.WriteText(&b, "test"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestAttribution(t *testing.T) {
	tests := []struct {
		name     string
		spec     fleet.Spec
		findings string
		drain    string
	}{
		{"clean", fleet.Spec{Nodes: 16}, "", ""},
		{"slow node", fleet.Spec{Nodes: 16, SlowNodes: []string{"n5"}}, "node n5", "n5"},
		{"two slow nodes of four", fleet.Spec{Nodes: 4, SlowNodes: []string{"n1", "n2"}, NoReference: true}, "node n1, node n2", "n1,n2"},
		{"slow sender", fleet.Spec{Nodes: 16, SlowSenders: []string{"n7"}}, "one-way n7→*", ""},
		{"one direction of a pair", fleet.Spec{Nodes: 16, BadLinks: [][2]string{{"n2", "n9"}}}, "link n2→n9", ""},
		{"both directions of a pair", fleet.Spec{Nodes: 16, BadLinks: [][2]string{{"n9", "n2"}, {"n2", "n9"}}}, "link n2↔n9", ""},
		{"transient", fleet.Spec{Nodes: 16, Transient: [][2]string{{"n3", "n4"}}}, "", ""},
		{"low stream and hpl", fleet.Spec{Nodes: 16, LowStream: []string{"n10"}, LowHPL: []string{"n11"}}, "node n10, node n11", "n10,n11"},
		{"firmware and half rate", fleet.Spec{Nodes: 16, OddFirmware: []string{"n12"}, HalfRate: []string{"n13"}}, "node n12, node n13", "n12,n13"},
		{"everything", fleet.Spec{Nodes: 64, SlowNodes: []string{"n17"}, SlowSenders: []string{"n33"}, BadLinks: [][2]string{{"n5", "n40"}},
			Transient: [][2]string{{"n8", "n9"}}, LowStream: []string{"n50"}}, "node n17, node n50, one-way n33→*, link n5→n40", "n17,n50"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := screenOf(t, DefaultOptions(), fleet.Bundles(tc.spec))
			if got := subjects(v); got != tc.findings {
				t.Errorf("findings %q, want %q\n%s", got, tc.findings, text(t, v))
			}
			if got := drained(v); got != tc.drain {
				t.Errorf("drained %q, want %q", got, tc.drain)
			}
			if v.Flagged() != (tc.findings != "") {
				t.Errorf("Flagged() = %v with findings %q", v.Flagged(), tc.findings)
			}
		})
	}
}

// A slow node's finding carries the numbers: the links of both
// directions, the worst, the limit and the maximum it comes from, and
// the links to the reference.
func TestNodeEvidence(t *testing.T) {
	v := screenOf(t, DefaultOptions(), fleet.Bundles(fleet.Spec{Nodes: 8, SlowNodes: []string{"n3"}}))
	if len(v.Findings) != 1 {
		t.Fatalf("findings: %s", subjects(v))
	}
	f := v.Findings[0]
	var checks []string
	for _, e := range f.Evidence {
		checks = append(checks, e.Check+"/"+e.Metric)
		if e.Metric == "bandwidth" {
			if !(e.Value < e.Limit && e.Limit < e.Reference) || e.Limit != e.Reference*0.93 {
				t.Errorf("evidence %+v: want value < limit = 93%% of reference", e)
			}
		}
	}
	if got := strings.Join(checks, " "); got != "matrix/bandwidth matrix/latency reference/bandwidth reference/latency" {
		t.Errorf("evidence %s", got)
	}
	if !strings.Contains(f.Evidence[0].Text, "7 of 7 links from n3 and 7 of 7 links to it are outside tolerance") {
		t.Errorf("matrix evidence: %s", f.Evidence[0].Text)
	}
	m := v.Matrix
	if m.Pairs != 56 || m.Bad != 14 || m.Nodes != 8 || m.Schedule != "rounds" || m.Passes != 2 {
		t.Errorf("matrix check %+v", *m)
	}
	st := v.NodeStats[0]
	if st.Node != "n3" || st.Status != Bad || st.BadOut != 7 || st.BadIn != 7 {
		t.Errorf("worst node %+v", st)
	}
	if order := v.NodeOrder("bandwidth"); order[len(order)-1] != "n3" {
		t.Errorf("bandwidth order %v: the slow node is not last", order)
	}
	if order := v.NodeOrder("latency"); order[len(order)-1] != "n3" {
		t.Errorf("latency order %v: the slow node is not last", order)
	}
	if w := m.Worst(3); len(w) != 3 || !strings.Contains(w[0].Name(), "n3") {
		t.Errorf("worst pairs %v", w)
	}
}

// The one-way rule: n7 sends at half the rate, receives at full. Its links
// from it are named; it is not drained; the reference's n7→n1 is part of
// the same finding.
func TestOneWay(t *testing.T) {
	v := screenOf(t, DefaultOptions(), fleet.Bundles(fleet.Spec{Nodes: 8, SlowSenders: []string{"n7"}}))
	if subjects(v) != "one-way n7→*" || len(v.Drain) != 0 {
		t.Fatalf("findings %s, drain %v\n%s", subjects(v), v.Drain, text(t, v))
	}
	f := v.Findings[0]
	want := []string{"n7→n1", "n7→n2", "n7→n3", "n7→n4", "n7→n5", "n7→n6", "n7→n8"}
	if !slices.Equal(f.Links, want) {
		t.Errorf("links %v, want %v", f.Links, want)
	}
	if len(f.Evidence) != 2 || f.Evidence[1].Check != "reference" {
		t.Errorf("evidence %+v", f.Evidence)
	}
	if !strings.Contains(text(t, v), "ONE-WAY n7→*: n7→n[1-6,8]") {
		t.Errorf("text:\n%s", text(t, v))
	}
}

// Re-tests: outside in the first pass and within on a re-test is
// transient; outside in every pass is bad; the re-test is held to the
// first pass's references, not its own.
func TestRetests(t *testing.T) {
	v := screenOf(t, DefaultOptions(), fleet.Bundles(fleet.Spec{Nodes: 8, Transient: [][2]string{{"n3", "n4"}}, BadLinks: [][2]string{{"n5", "n6"}}}))
	if subjects(v) != "link n5→n6" {
		t.Fatalf("findings %s", subjects(v))
	}
	if len(v.Transient) != 1 || v.Transient[0].Name() != "n3→n4" || v.Transient[0].BandwidthStatus != Transient {
		t.Fatalf("transient %+v", v.Transient)
	}
	l, _ := v.Matrix.Link("n5", "n6")
	if len(l.Retests) != 2 || l.BandwidthStatus != Bad {
		t.Errorf("bad link's re-tests %+v", l)
	}
	if !strings.Contains(text(t, v), "n3→n4: bandwidth") {
		t.Errorf("text lacks the transient link:\n%s", text(t, v))
	}
}

// A reference link outside tolerance that the matrix measured within is a
// hiccup of the reference's one measurement: transient. Without a matrix
// it is the link.
func TestReferenceAgainstMatrix(t *testing.T) {
	spec := fleet.Spec{Nodes: 8, RefHiccups: [][2]string{{"n6", "n1"}}, NoHPL: true}
	v := screenOf(t, DefaultOptions(), fleet.Bundles(spec))
	if subjects(v) != "" || len(v.Transient) != 1 || v.Transient[0].Name() != "n6→n1" || v.Transient[0].Note == "" {
		t.Errorf("with a matrix: findings %q, transient %+v", subjects(v), v.Transient)
	}
	spec.NoMatrix = true
	v = screenOf(t, DefaultOptions(), fleet.Bundles(spec))
	if subjects(v) != "link n6→n1" || v.Matrix != nil {
		t.Errorf("without a matrix: findings %q\n%s", subjects(v), text(t, v))
	}
	spec.SlowNodes = []string{"n4"}
	if v := screenOf(t, DefaultOptions(), fleet.Bundles(spec)); subjects(v) != "node n4, link n6→n1" {
		t.Errorf("a slow node without a matrix: findings %q", subjects(v))
	}
}

// judged and combine: the rules in one table.
func TestJudgedCombine(t *testing.T) {
	for _, tc := range []struct {
		first   bool
		retests []bool
		want    Status
	}{
		{false, nil, OK}, {true, nil, Bad}, {true, []bool{true, true}, Bad}, {true, []bool{true, false}, Transient}, {true, []bool{false}, Transient},
	} {
		if got := judged(tc.first, tc.retests); got != tc.want {
			t.Errorf("judged(%v, %v) = %s, want %s", tc.first, tc.retests, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   []Status
		want Status
	}{
		{nil, ""}, {[]Status{OK, OK}, OK}, {[]Status{Bad, Bad}, Bad}, {[]Status{Bad, OK}, Transient}, {[]Status{Transient, Bad}, Transient},
	} {
		if got := combine(tc.in); got != tc.want {
			t.Errorf("combine(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// Tolerances decide: a link at 60% is bad at ClusterKit's 93% and fine at
// 50%; a node at twice the latency is bad at 2.1× only with its
// bandwidth, and at 1.5× for its latency alone.
func TestTolerances(t *testing.T) {
	bs := fleet.Bundles(fleet.Spec{Nodes: 8, BadLinks: [][2]string{{"n2", "n3"}}, NoReference: true, NoHPL: true})
	if v := screenOf(t, DefaultOptions(), bs); subjects(v) != "link n2→n3" {
		t.Errorf("at 93%%: %s", subjects(v))
	}
	loose := DefaultOptions()
	loose.Tolerance.BandwidthFraction = 0.5
	v := screenOf(t, loose, bs)
	if subjects(v) != "" {
		t.Errorf("at 50%%: %s", subjects(v))
	}
	// The runner re-tested by 2.1/0.93 (the bundle's params): say so.
	if w := strings.Join(v.Warnings, "\n"); !strings.Contains(w, "re-tested the pairs outside latency 2.1× / bandwidth 0.93 of the first pass; this screening judges by 2.1× / 0.5") {
		t.Errorf("warnings %q", w)
	}
	if err := (Options{Tolerance: kernels.Tolerance{LatencyFactor: 0.5, BandwidthFraction: 0.9}, NodeFraction: 0.8}).Check(); err == nil {
		t.Error("a latency factor below 1 passed Check")
	}
	if err := (Options{Tolerance: kernels.DefaultTolerance(), NodeFraction: 1.5}).Check(); err == nil {
		t.Error("a node fraction above 1 passed Check")
	}
	slow := fleet.Bundles(fleet.Spec{Nodes: 8, SlowNodes: []string{"n4"}, NoReference: true, NoHPL: true})
	strict := DefaultOptions()
	strict.Tolerance.LatencyFactor = 1.5
	v = screenOf(t, strict, slow)
	if subjects(v) != "node n4" {
		t.Fatalf("findings %s", subjects(v))
	}
	lat := 0
	for _, e := range v.Findings[0].Evidence {
		if e.Metric == "latency" {
			lat++
		}
	}
	if lat != 1 {
		t.Errorf("at 1.5×, the slow node's latency is not evidence: %+v", v.Findings[0].Evidence)
	}
}

// Three nodes cannot tell a bad node from a bad link: links, and a
// warning that says why.
func TestTooFewNodes(t *testing.T) {
	v := screenOf(t, DefaultOptions(), fleet.Bundles(fleet.Spec{Nodes: 3, SlowNodes: []string{"n2"}, NoReference: true, NoHPL: true}))
	if got := subjects(v); got != "link n1↔n2, link n2↔n3" {
		t.Errorf("findings %s", got)
	}
	if !strings.Contains(strings.Join(v.Warnings, "\n"), "with 3 nodes a bad link cannot be told from a bad node") {
		t.Errorf("warnings %q", v.Warnings)
	}
}

// Over several matrix runs a link is bad only when bad in every one; a
// failed screening run is a finding of its own.
func TestRunsTogether(t *testing.T) {
	bad := fleet.Bundles(fleet.Spec{Nodes: 8, BadLinks: [][2]string{{"n1", "n8"}}, NoReference: true, NoHPL: true})
	good := fleet.Bundles(fleet.Spec{Nodes: 8, Seed: 3, NoReference: true, NoHPL: true})
	for _, b := range good {
		b.Job.ID = "4243"
	}
	db := archive(t, append(bad, good...))
	in, err := Load(context.Background(), db, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	v := Analyze(in, DefaultOptions())
	if subjects(v) != "" || len(v.Transient) != 1 || v.Transient[0].Name() != "n1→n8" {
		t.Errorf("findings %q, transient %v", subjects(v), v.Transient)
	}
	if !strings.Contains(text(t, v), "n1→n8: bandwidth") || !strings.Contains(text(t, v), "(the median of 2 runs); bad in 1 of them") {
		t.Errorf("text:\n%s", text(t, v))
	}
	in.Runs[0].Status, in.Runs[0].Error = results.StatusFailed, "matrix kernel, n3 to n5: read: connection reset by peer"
	v = Analyze(in, DefaultOptions())
	if got := subjects(v); got != "run run "+itoa(in.Runs[0].ID) {
		t.Errorf("findings with a failed matrix run: %s", got)
	}
}

func itoa(id int64) string { return store.FormatRunIDs([]int64{id}) }

// Latest picks the newest matrix run's submission.
func TestLatest(t *testing.T) {
	old := fleet.Bundles(fleet.Spec{Nodes: 4, SlowNodes: []string{"n2"}})
	newer := fleet.Bundles(fleet.Spec{Nodes: 4, Seed: 9, Job: "5000"})
	for _, b := range newer {
		b.Start, b.End = b.Start.AddDate(0, 0, 1), b.End.AddDate(0, 0, 1)
	}
	db := archive(t, append(old, newer...))
	ctx := context.Background()
	f, what, err := Latest(ctx, db, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.JobIDs) != 1 || f.JobIDs[0] != "5000" || !strings.Contains(what, "job:5000") {
		t.Errorf("filter %+v, %q", f, what)
	}
	f, _, err = Latest(ctx, db, store.Filter{JobIDs: []string{"4242"}})
	if err != nil || len(f.JobIDs) != 1 || f.JobIDs[0] != "4242" {
		t.Errorf("within job 4242: %+v, %v", f, err)
	}
	if _, _, err := Latest(ctx, db, store.Filter{Campaign: "nope"}); err == nil || !strings.Contains(err.Error(), "no ok matrix") {
		t.Errorf("empty selection: %v", err)
	}
	// Jobs sbench submit recorded make submissions: the newest matrix
	// run's is the screening, with its other jobs (a later job of the
	// same submission, 30 s after).
	day := old[0].Start
	for _, j := range []store.Job{
		{SlurmID: "4242", Campaign: "screen", Submitted: day},
		{SlurmID: "5000", Campaign: "screen", Submitted: day.AddDate(0, 0, 1)},
		{SlurmID: "5001", Campaign: "screen", Submitted: day.AddDate(0, 0, 1).Add(30 * time.Second)},
	} {
		if _, err := db.RecordJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	f, what, err = Latest(ctx, db, store.Filter{})
	if err != nil || !slices.Equal(f.JobIDs, []string{"5000", "5001"}) || !strings.HasPrefix(what, "campaign:screen@latest (run ") {
		t.Errorf("with submissions: %+v, %q, %v", f, what, err)
	}
	f, what, err = Latest(ctx, db, store.Filter{Until: day.Add(time.Hour)})
	if err != nil || !slices.Equal(f.JobIDs, []string{"4242"}) || !strings.HasPrefix(what, "campaign:screen@2 (") {
		t.Errorf("the older submission: %+v, %q, %v", f, what, err)
	}
}

// What ShellQuote writes, a shell reads back as the string it was.
func TestShellQuoteRoundTrip(t *testing.T) {
	sh := testenv.LookPath(t, "bash", "bash")
	for _, s := range []string{"n3", "sbench: 17% of max", `a "b" \c`, "$HOME `id` $(id)", "it's", "wow!", "tab\there", "two\nlines", "ü→ñ", "*?[a]", "~x", "#c", ""} {
		out, err := exec.Command(sh, "-c", "printf %s "+ShellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("ShellQuote(%q) = %s reads back as %q, %v", s, ShellQuote(s), out, err)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"n3":                 "n3",
		"node-01.rack2":      "node-01.rack2",
		"sbench: bw 11% max": `"sbench: bw 11% max"`,
		`a "b" $c`:           `"a \"b\" \$c"`,
		"it's!":              `'it'\''s!'`,
		"":                   `""`,
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// The drain line of a slow node: its reason in ASCII, quoted.
func TestDrainLine(t *testing.T) {
	v := screenOf(t, DefaultOptions(), fleet.Bundles(fleet.Spec{Nodes: 8, SlowNodes: []string{"n3"}, NoReference: true, NoHPL: true}))
	var b bytes.Buffer
	if err := v.WriteDrain(&b); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(b.String())
	if !strings.HasPrefix(line, `scontrol update NodeName=n3 State=DRAIN Reason="sbench: links bandwidth `) || strings.Count(line, "\n") != 0 {
		t.Errorf("drain: %s", line)
	}
	for _, r := range v.Drain[0].Reason {
		if r > 127 {
			t.Errorf("reason %q is not ASCII", v.Drain[0].Reason)
			break
		}
	}
}

// An xhpl output the hpl parser read (kind tool, kernel hpl) is no
// screening run: it has no per-node figure. The newest STREAM or HPL run
// of the runner's own kernels starts the screening, as in the report.
func TestLatestNotFromToolHPL(t *testing.T) {
	bs := fleet.Bundles(fleet.Spec{Nodes: 4, NoMatrix: true, NoReference: true})
	xhpl := results.New()
	xhpl.Benchmark = results.Benchmark{Name: "hpl", Kind: "tool", Kernel: "hpl"}
	xhpl.Campaign, xhpl.Job.ID, xhpl.Job.Nodes = "nightly", "9000", []string{"n1", "n2"}
	xhpl.Start, xhpl.End = bs[0].Start.AddDate(0, 0, 1), bs[0].End.AddDate(0, 0, 1)
	xhpl.Samples = []results.Sample{{Metric: "gflops", Unit: "Gflops", Value: 100, Iterations: 1}}
	db := archive(t, append(bs, xhpl))
	f, what, err := Latest(context.Background(), db, store.Filter{})
	if err != nil || !slices.Equal(f.JobIDs, []string{"4242"}) {
		t.Errorf("Latest: %+v, %q, %v; want job 4242's screening, not the xhpl run's job 9000", f, what, err)
	}
	if Screening(&store.Run{Kind: "tool", Kernel: kernels.KernelHPL}) {
		t.Error("a tool's hpl run counts as a screening run")
	}
}

// Slurm numbers jobs per cluster: without the submission recorded, the
// screening is its job's runs in its own campaign, not those of another
// campaign's job of the same id.
func TestLatestJobOfItsCampaign(t *testing.T) {
	bs := fleet.Bundles(fleet.Spec{Nodes: 4})
	other := results.New()
	other.Benchmark = results.Benchmark{Name: "osu_bw", Kind: "tool", Kernel: "osu"}
	other.Campaign, other.Job.ID, other.Job.Nodes = "nightly", "4242", []string{"x1", "x2"}
	other.Start, other.End = bs[0].Start, bs[0].End
	other.Samples = []results.Sample{{Metric: "bandwidth", Unit: results.UnitMBps, Value: 100, Iterations: 1}}
	db := archive(t, append(bs, other))
	ctx := context.Background()
	f, what, err := Latest(ctx, db, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	in, err := Load(ctx, db, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in.Runs {
		if r.Campaign != "screen" {
			t.Errorf("%s selects run %d of campaign %q, job %s", what, r.ID, r.Campaign, r.JobID)
		}
	}
}
