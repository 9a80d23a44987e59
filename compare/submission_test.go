package compare

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sbench/sbench/store"
)

// TestSubmissionsRecorded is item 6 of issue 26: submissions are the ids
// sbench submit and sbench local record on their jobs, not guessed from
// time gaps. Two submits seconds apart (jobs recorded without a script)
// used to be one submission; a resume of a local run, after a submit in
// between, a submission of its own. Jobs recorded before ids were keep
// the old inference, and a resume recorded since continues an old local
// run.
func TestSubmissionsRecorded(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	const oldLocal = "local-20261204T083000000-aaaaaa"
	const local = "local-20261204T090040000-bbbbbb"
	job := func(id, submission string, at time.Duration) store.Job {
		return store.Job{SlurmID: id, Campaign: "acc", Submitted: t0.Add(at), Submission: submission}
	}
	jobs := []store.Job{
		job("90", "", -time.Hour), job("91", "", -time.Hour+10*time.Second), // recorded before ids: one submit
		job(oldLocal+"-1", "", -30*time.Minute),
		job("1", "submit-20261204T090000.000-111111", 0), job("2", "submit-20261204T090000.000-111111", 5*time.Second),
		job("3", "submit-20261204T090020.000-222222", 20*time.Second), job("4", "submit-20261204T090020.000-222222", 25*time.Second),
		job(local+"-1", local, 40*time.Second),
		job("5", "submit-20261204T090050.000-333333", 50*time.Second),
		job(local+"-1-resume1", local, 60*time.Second),
		job(oldLocal+"-1-resume1", oldLocal, 70*time.Second),
	}
	var got [][]string
	for _, s := range Submissions(jobs) {
		var ids []string
		for _, j := range s {
			ids = append(ids, j.SlurmID)
		}
		got = append(got, ids)
	}
	want := [][]string{
		{"5"},
		{local + "-1", local + "-1-resume1"},
		{"3", "4"},
		{"1", "2"},
		{oldLocal + "-1", oldLocal + "-1-resume1"},
		{"90", "91"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("submissions, newest first:\n got %q\nwant %q", got, want)
	}

	// campaign:NAME@N selects by them.
	a := newArchive(t)
	for _, j := range jobs {
		if _, err := a.RecordJob(context.Background(), j); err != nil {
			t.Fatal(err)
		}
	}
	r1 := a.add("acc", "latency", "1", t0.Add(time.Minute), nil)
	r3 := a.add("acc", "latency", "3", t0.Add(2*time.Minute), nil)
	r4 := a.add("acc", "bw", "4", t0.Add(3*time.Minute), nil)
	rl := a.add("acc", "latency", local+"-1", t0.Add(4*time.Minute), nil)
	rr := a.add("acc", "bw", local+"-1-resume1", t0.Add(5*time.Minute), nil)
	for sel, want := range map[string][]int64{
		"campaign:acc@2": {rl, rr},
		"campaign:acc@3": {r3, r4},
		"campaign:acc@4": {r1},
	} {
		if got, err := a.selected(sel); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s selects %v, %v; want %v", sel, got, err, want)
		}
	}
}
