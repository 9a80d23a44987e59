package main

import (
	"crypto/rand"
	"encoding/hex"
	"time"
)

// newSubmissionID names one sbench submit: every job it records carries
// it (store.Job.Submission), and campaign:NAME@N counts submissions by
// it. The time to the millisecond and random hex: two submits of a
// campaign seconds apart, or on two machines sharing an archive, are two.
func newSubmissionID(kind string) string {
	return kind + "-" + time.Now().UTC().Format("20060102T150405.000") + "-" + randomHex(3)
}

// randomHex is n random bytes in hex (crypto/rand.Read never fails).
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// localSubmission is the submission of one sbench local run, and of its
// resumes: local-STAMP, the prefix of its jobs' ids (local-STAMP-N), which
// is what the jobs of an sbench local recorded before submissions were
// are grouped by (compare.Submissions).
func localSubmission(stamp string) string { return "local-" + stamp }
