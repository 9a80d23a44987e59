package store

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/sbench/sbench/results"
)

func TestLaunchName(t *testing.T) {
	for _, c := range []struct {
		job, task, step string
		restart         int
		want            string
	}{
		{"8", "", "3", 0, "8.3"},
		{"8", "", "3", 1, "8.3 r1"},
		{"8", "", "", 2, "8 r2"},
		{"8", "7", "0", 1, "8_7.0 r1"},
		{"local-20261204T0836-1", "", "3-n1-n2", 0, "local-20261204T0836-1.3-n1-n2"},
		{"", "", "3", 1, ""},
	} {
		if got := LaunchName(c.job, c.task, c.step, c.restart); got != c.want {
			t.Errorf("LaunchName(%q, %q, %q, %d) = %q, want %q", c.job, c.task, c.step, c.restart, got, c.want)
		}
	}
}

func TestParseJobRef(t *testing.T) {
	for in, want := range map[string]JobRef{
		"4242":               {Job: "4242", Restart: -1},
		"4242_7":             {Job: "4242", Task: "7", Restart: -1},
		"4242.3":             {Job: "4242", Step: "3", Restart: -1},
		"4242.3r1":           {Job: "4242", Step: "3", Restart: 1},
		"4242r1":             {Job: "4242", Restart: 1},
		"4242.3r0":           {Job: "4242", Step: "3", Restart: 0},
		"4242_7.0r2":         {Job: "4242", Task: "7", Step: "0", Restart: 2},
		"4242.3-n1-n2r1":     {Job: "4242", Step: "3-n1-n2", Restart: 1},
		"4242.3-n1-gpur1r0":  {Job: "4242", Step: "3-n1-gpur1", Restart: 0},
		"local-20261204-1":   {Job: "local-20261204-1", Restart: -1},
		"local-20261204-1.2": {Job: "local-20261204-1", Step: "2", Restart: -1},
	} {
		got, err := ParseJobRef(in)
		if err != nil || got != want {
			t.Errorf("ParseJobRef(%q) = %+v, %v; want %+v", in, got, err, want)
			continue
		}
		if back, _ := ParseJobRef(got.String()); back != got {
			t.Errorf("%q: String %q reads back as %+v", in, got.String(), back)
		}
	}
	for _, bad := range []string{"", "4242.", ".3", "4242.3.1", "42 42", "4242;rm"} {
		if _, err := ParseJobRef(bad); err == nil {
			t.Errorf("ParseJobRef(%q) accepted", bad)
		}
	}
	if r, _ := ParseJobRef("4242"); !r.Plain() {
		t.Error("4242 is a whole job")
	}
	if r, _ := ParseJobRef("4242r0"); r.Plain() {
		t.Error("4242r0 is an attempt")
	}
}

// A requeued job's two attempts of step 3 are told apart by Filter.Launches.
func TestFilterLaunches(t *testing.T) {
	db := openTemp(t)
	var bs []*results.Bundle
	for _, c := range []struct {
		job, step string
		restart   int
	}{{"8", "3", 0}, {"8", "3", 1}, {"8", "4", 1}, {"9", "3", 0}} {
		b := osuBundle("c", "v", c.job, 2)
		b.Job.Step, b.Job.Restart = c.step, c.restart
		bs = append(bs, b)
	}
	ingest(t, db, "t", bs...)
	launches := func(f Filter) []string {
		runs, err := db.Runs(context.Background(), f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.Launch())
		}
		slices.Sort(out)
		return out
	}
	ref := func(s string) JobRef {
		r, err := ParseJobRef(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{Launches: []JobRef{ref("8.3r1")}}, "8.3 r1"},
		{Filter{Launches: []JobRef{ref("8.3")}}, "8.3,8.3 r1"},
		{Filter{Launches: []JobRef{ref("8r1")}}, "8.3 r1,8.4 r1"},
		{Filter{Launches: []JobRef{ref("8.3r0")}, JobIDs: []string{"9"}}, "8.3,9.3"},
		{Filter{JobIDs: []string{"8"}}.And(Filter{Launches: []JobRef{ref("8.3")}}), "8.3,8.3 r1"},
		{Filter{Launches: []JobRef{ref("8.3")}}.And(Filter{Launches: []JobRef{ref("8r1")}}), "8.3 r1"},
		{Filter{JobIDs: []string{"9"}}.And(Filter{Launches: []JobRef{ref("8.3")}}), ""},
	} {
		if got := strings.Join(launches(c.f), ","); got != c.want {
			t.Errorf("filter %+v selects %q, want %q", c.f, got, c.want)
		}
	}
}
