package slurm

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestStranded: a pending job whose afterok chain reaches a job that ended
// without completing, however many levels down, is stranded, with the job
// that did it and the jobs between; Slurm itself marks only the first
// level (DependencyNeverSatisfied), the others stay "Dependency".
func TestStranded(t *testing.T) {
	for _, tc := range []struct {
		name string
		jobs []DepJob
		want map[string]Strand
	}{
		{"three-level chain, the first failed", []DepJob{
			{ID: "1", State: "FAILED", Reason: "NonZeroExitCode"},
			{ID: "2", After: []string{"1"}, State: "PENDING", Reason: ReasonDependencyNeverSatisfied},
			{ID: "3", After: []string{"2"}, State: "PENDING", Reason: "Dependency"},
		}, map[string]Strand{"2": {Root: "1"}, "3": {Root: "1", Via: []string{"2"}}}},
		{"four levels, listed out of order", []DepJob{
			{ID: "4", After: []string{"3"}, State: "PENDING", Reason: "Dependency"},
			{ID: "3", After: []string{"2"}, State: "PENDING", Reason: "Dependency"},
			{ID: "2", After: []string{"1"}, State: "PENDING", Reason: "Dependency"},
			{ID: "1", State: "TIMEOUT"},
		}, map[string]Strand{"2": {Root: "1"}, "3": {Root: "1", Via: []string{"2"}}, "4": {Root: "1", Via: []string{"3", "2"}}}},
		{"each ending that is not COMPLETED", []DepJob{
			{ID: "c", State: "CANCELLED by 1000"}, {ID: "n", State: "NODE_FAIL"}, {ID: "o", State: "OUT_OF_MEMORY"},
			{ID: "wc", After: []string{"c"}, State: "PENDING"},
			{ID: "wn", After: []string{"n"}, State: "PENDING"},
			{ID: "wo", After: []string{"o"}, State: "PENDING"},
		}, map[string]Strand{"wc": {Root: "c"}, "wn": {Root: "n"}, "wo": {Root: "o"}}},
		{"completed, running and pending dependencies strand nothing", []DepJob{
			{ID: "1", State: "COMPLETED"},
			{ID: "2", After: []string{"1"}, State: "PENDING", Reason: "Dependency"},
			{ID: "3", State: "RUNNING"},
			{ID: "4", After: []string{"3"}, State: "PENDING", Reason: "Dependency"},
			{ID: "5", After: []string{"4"}, State: "PENDING", Reason: "Dependency"},
		}, map[string]Strand{}},
		{"a job that already ran is not stranded", []DepJob{
			{ID: "1", State: "FAILED"},
			{ID: "2", After: []string{"1"}, State: "CANCELLED"},
			{ID: "3", After: []string{"1"}, State: "RUNNING"},
		}, map[string]Strand{}},
		{"the first broken of several dependencies", []DepJob{
			{ID: "1", State: "COMPLETED"}, {ID: "2", State: "FAILED"}, {ID: "3", State: "CANCELLED"},
			{ID: "4", After: []string{"1", "2", "3"}, State: "PENDING"},
		}, map[string]Strand{"4": {Root: "2"}}},
		{"unknown ids and forgotten jobs are no reason", []DepJob{
			{ID: "1", State: StateUnknown},
			{ID: "2", After: []string{"1", "99"}, State: "PENDING", Reason: "Dependency"},
		}, map[string]Strand{}},
		{"Slurm's own word for a job whose dependency the archive does not know", []DepJob{
			{ID: "2", After: []string{"99"}, State: "PENDING", Reason: ReasonDependencyNeverSatisfied},
			{ID: "3", After: []string{"2"}, State: "PENDING", Reason: "Dependency"},
		}, map[string]Strand{"3": {Root: "2"}}}, // 2 is settled by Slurm's word (JobInfo.NeverRuns)
		{"a cycle (which Slurm refuses) ends", []DepJob{
			{ID: "1", After: []string{"2"}, State: "PENDING"},
			{ID: "2", After: []string{"1"}, State: "PENDING"},
		}, map[string]Strand{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Stranded(tc.jobs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Stranded = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestWaitUntil: a job the caller says is settled (stranded behind a
// failed one) ends the wait as a settled one does; Slurm would keep it
// PENDING forever.
func TestWaitUntil(t *testing.T) {
	f := &waitCluster{t: t, states: map[string][]string{
		"1": {"RUNNING", "FAILED"},
		"2": {"PENDING", "PENDING", "PENDING"}, // Slurm: Dependency, forever
	}}
	failed := false
	var polled []string
	got, err := (&Client{R: f}).WaitUntil(context.Background(), []string{"1", "2"}, time.Millisecond,
		func(j JobInfo, changed bool) {
			polled = append(polled, j.ID+":"+j.State)
			if j.ID == "1" && j.State == "FAILED" {
				failed = true
			}
		},
		func(j JobInfo) bool { return j.ID == "2" && failed })
	if err != nil {
		t.Fatal(err)
	}
	if got["1"].State != "FAILED" || got["2"].State != "PENDING" {
		t.Errorf("WaitUntil = %+v", got)
	}
	if want := []string{"1:RUNNING", "2:PENDING", "1:FAILED", "2:PENDING"}; !slices.Equal(polled, want) {
		t.Errorf("polled %q, want %q (two polls)", polled, want)
	}
}
