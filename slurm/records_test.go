package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
)

func scanAll(t testing.TB, text, name string) ([]Record, []*SyntaxError) {
	t.Helper()
	var recs []Record
	var bad []*SyntaxError
	sc := NewRecordScanner(strings.NewReader(text), name)
	for sc.Scan() {
		rec, syn := sc.Record()
		if syn != nil {
			bad = append(bad, syn)
			continue
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs, bad
}

func TestScanScontrolOneLine(t *testing.T) {
	recs, bad := scanAll(t, testdata(t, "scontrol-show-job-oneline.txt"), "oneline")
	if len(recs) != 5 || len(bad) != 0 {
		t.Fatalf("%d records, %v; want 5 and no errors", len(recs), bad)
	}
	for i, r := range recs {
		if r.Line != i+1 || r.Value("JobId") != strconv.Itoa(i+1) {
			t.Errorf("record %d: line %d JobId %q", i, r.Line, r.Value("JobId"))
		}
		if n := len(r.Fields); n < 55 {
			t.Errorf("record %d has %d fields", i, n)
		}
	}
	j4 := recs[3]
	for key, want := range map[string]string{
		"JobState": "TIMEOUT", "Reason": "TimeLimit", "ExitCode": "0:15", "AllocNode:Sid": "localhost:3743",
		"ReqB:S:C:T": "0:0:*:*", "CPUs/Task": "1", "TRES": "cpu=1,node=1,billing=1", "Account": "(null)",
		"Command": "/scratch/lab/jobs/timeout.sbatch", "MCS_label": "N/A",
	} {
		if got, ok := j4.Get(key); !ok || got != want {
			t.Errorf("job 4 %s = %q, %v; want %q", key, got, ok, want)
		}
	}
	// The last field is empty and followed by a space.
	if last := j4.Fields[len(j4.Fields)-1]; last != (Field{"Power", ""}) {
		t.Errorf("last field %+v", last)
	}
	if _, ok := j4.Get("Nope"); ok {
		t.Error("Get found a key that is not there")
	}
}

// The multi-line form is the same record as the one-line form.
func TestScanScontrolMultiLine(t *testing.T) {
	multi, bad := scanAll(t, testdata(t, "scontrol-show-job-3.txt"), "multi")
	if len(multi) != 1 || len(bad) != 0 {
		t.Fatalf("%d records, %v", len(multi), bad)
	}
	one, err := ParseRecord(line(t, "scontrol-show-job-oneline.txt", "JobId=3 "))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(multi[0].Fields, one.Fields) {
		t.Errorf("multi-line fields\n%v\none-line\n%v", multi[0].Fields, one.Fields)
	}
	// Two blocks, with the blank and white-space lines scontrol puts
	// between them.
	text := testdata(t, "scontrol-show-job-3.txt")
	recs, _ := scanAll(t, text+strings.Replace(text, "JobId=3", "JobId=33", 1), "two")
	if len(recs) != 2 || recs[1].Value("JobId") != "33" || recs[1].Line != strings.Count(text, "\n")+1 {
		t.Errorf("two blocks: %d records, second %q at line %d", len(recs), recs[1].Value("JobId"), recs[1].Line)
	}
}

func TestScanValuesWithSpaces(t *testing.T) {
	node, err := ParseRecord(line(t, "lab-scontrol-show-node-oneline.txt", "NodeName=n1 "))
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Value("OS"); got != "Linux 6.18.44-fc-v782 #1 SMP PREEMPT_DYNAMIC @0" {
		t.Errorf("OS = %q", got)
	}
	if got := node.Value("RealMemory"); got != "12052" {
		t.Errorf("RealMemory after a value with spaces = %q", got)
	}
	long, err := ParseRecord(testdata(t, "lab-scontrol-long-name.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if got := long.Value("JobName"); got != "a very long job name with | pipes and spaces that goes on and on" {
		t.Errorf("JobName = %q", got)
	}
	for text, want := range map[string][]Field{
		"JobId=9 JobState=CANCELLED by 0 Reason=None": {{"JobId", "9"}, {"JobState", "CANCELLED by 0"}, {"Reason", "None"}},
		"WorkDir=/scratch/my dir/x=y Power=":          {{"WorkDir", "/scratch/my dir/x=y"}, {"Power", ""}},
		"A==b B=c=d":                                  {{"A", "=b"}, {"B", "c=d"}},
		"  Indented=1\t\tTab=2  ":                     {{"Indented", "1"}, {"Tab", "2"}},
		// Slurm does not quote: a name holding "Key=" splits, as in its
		// own output. Documented, not hidden.
		"JobName=run N=4 UserId=root(0)": {{"JobName", "run"}, {"N", "4"}, {"UserId", "root(0)"}},
	} {
		r, err := ParseRecord(text)
		if err != nil || !reflect.DeepEqual(r.Fields, want) {
			t.Errorf("ParseRecord(%q) = %v, %v; want %v", text, r.Fields, err, want)
		}
	}
}

func TestScanJobComp(t *testing.T) {
	recs, bad := scanAll(t, testdata(t, "jobcomp-filetxt.txt"), "jobcomp")
	if len(recs) != 5 || len(bad) != 0 {
		t.Fatalf("%d records, %v", len(recs), bad)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.Value("JobId")+":"+r.Value("JobState")+":"+r.Value("ExitCode"))
	}
	if want := []string{"1:COMPLETED:0:0", "2:COMPLETED:0:0", "5:FAILED:0:11", "3:FAILED:3:0", "4:TIMEOUT:0:0"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("jobcomp = %q, want %q", ids, want)
	}
	// Empty values: ReservationName= Account= …
	if v, ok := recs[0].Get("ReservationName"); !ok || v != "" {
		t.Errorf("ReservationName = %q, %v", v, ok)
	}
}

func TestScanSyntaxErrors(t *testing.T) {
	text := "No jobs in the system\n" +
		"JobId=1 JobState=RUNNING\n" +
		"\n" +
		"garbage here\n" +
		"   Continued=yes\n" +
		"JobId=2 JobState=PENDING\n"
	recs, bad := scanAll(t, text, "in.txt")
	if len(recs) != 2 || recs[0].Line != 2 || recs[1].Line != 6 || recs[1].Value("JobId") != "2" {
		t.Errorf("records %+v", recs)
	}
	want := []string{
		`in.txt:1: record starts with "No", not Key=Value`,
		`in.txt:4: record starts with "garbage", not Key=Value`,
	}
	var got []string
	for _, b := range bad {
		got = append(got, b.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("syntax errors %q, want %q", got, want)
	}
	if _, err := ParseRecord("  "); err == nil {
		t.Error("ParseRecord of blanks did not fail")
	}
}

func TestScanIOError(t *testing.T) {
	sc := NewRecordScanner(iotest.TimeoutReader(strings.NewReader("JobId=1 A=b\nJobId=2\n")), "slow")
	for sc.Scan() {
	}
	if err := sc.Err(); !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("Err = %v, want the reader's", err)
	}
	long := "JobId=1 Name=" + strings.Repeat("x", MaxRecordLine) + "\n"
	sc = NewRecordScanner(strings.NewReader(long), "long")
	if sc.Scan() || sc.Err() == nil {
		t.Error("a line over MaxRecordLine did not stop the scan with an error")
	}
}

// FuzzRecordScanner: any input scans without panic; every record's keys are
// keys, and writing the records back as one-line records and scanning them
// again gives the same fields (the form scontrol -o and jobcomp write).
func FuzzRecordScanner(f *testing.F) {
	for _, name := range []string{"scontrol-show-job-3.txt", "jobcomp-filetxt.txt", "lab-scontrol-show-node-oneline.txt"} {
		f.Add(testdata(f, name))
	}
	f.Add("JobId=1 JobState=CANCELLED by 0\n\n  X=1\nnot a record\n")
	f.Add("A= B==C\r\n\tD=é\x00 E")
	f.Fuzz(func(t *testing.T, text string) {
		sc := NewRecordScanner(strings.NewReader(text), "fuzz")
		var recs []Record
		lastLine := 0
		for sc.Scan() {
			rec, bad := sc.Record()
			line := rec.Line
			if bad != nil {
				line = bad.Line
			} else {
				if len(rec.Fields) == 0 {
					t.Fatalf("record without fields at line %d", rec.Line)
				}
				for _, f := range rec.Fields {
					if k, _, ok := splitKey(f.Key + "="); !ok || k != f.Key {
						t.Fatalf("field key %q is not a key", f.Key)
					}
				}
				recs = append(recs, rec)
			}
			if line <= lastLine {
				t.Fatalf("record at line %d after line %d", line, lastLine)
			}
			lastLine = line
		}
		if sc.Err() != nil {
			return
		}
		var b strings.Builder
		for _, r := range recs {
			for i, f := range r.Fields {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(f.Key + "=" + f.Value)
			}
			b.WriteByte('\n')
		}
		again, bad := scanAll(t, b.String(), "again")
		if len(bad) != 0 || len(again) != len(recs) {
			t.Fatalf("rescan: %d records, %v; want %d", len(again), bad, len(recs))
		}
		for i := range recs {
			if !reflect.DeepEqual(again[i].Fields, recs[i].Fields) {
				t.Fatalf("record %d: rescan\n%q\nwant\n%q", i, again[i].Fields, recs[i].Fields)
			}
		}
	})
}

// BenchmarkJobCompLookup: the jobcomp log grows forever (one line per job);
// a fallback lookup reads all of it.
func BenchmarkJobCompLookup(b *testing.B) {
	line := strings.TrimSpace(testdata(b, "jobcomp-filetxt.txt"))
	line = line[:strings.IndexByte(line, '\n')]
	var sb strings.Builder
	const jobs = 100_000
	for i := 1; i <= jobs; i++ {
		sb.WriteString(strings.Replace(line, "JobId=1 ", "JobId="+strconv.Itoa(i)+" ", 1))
		sb.WriteByte('\n')
	}
	log := filepath.Join(b.TempDir(), "jobcomp.txt")
	if err := os.WriteFile(log, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	c := &Client{JobCompLoc: log}
	b.SetBytes(int64(sb.Len()))
	b.ResetTimer()
	for b.Loop() {
		found, note := c.jobComp(context.Background(), []string{"77777"})
		if note != "" || found["77777"].State != "COMPLETED" {
			b.Fatal(found, note)
		}
	}
}
