package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// newSubmissionID names one sbench submit: every job it records carries
// it (store.Job.Submission), and campaign:NAME@N counts submissions by
// it. The time to the millisecond and random hex: two submits of a
// campaign seconds apart, or on two machines sharing an archive, are two.
func newSubmissionID(kind string) (string, error) {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("submission id: %w", err)
	}
	return kind + "-" + time.Now().UTC().Format("20060102T150405.000") + "-" + hex.EncodeToString(b[:]), nil
}

// localSubmission is the submission of one sbench local run, and of its
// resumes: local-STAMP, the prefix of its jobs' ids (local-STAMP-N), which
// is what the jobs of an sbench local recorded before submissions were
// are grouped by (compare.Submissions).
func localSubmission(stamp string) string { return "local-" + stamp }
