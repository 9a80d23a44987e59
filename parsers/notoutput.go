package parsers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// NotToolOutputPrefix starts the message of the SyntaxError that Parse
// (format "auto") and the error that Detect give for an input that is no
// tool's output: a text no format recognises, a shell script, or a file
// sbench wrote that holds no run. "sbench ingest" skips such files when it
// meets them in a directory.
const NotToolOutputPrefix = "not output of any known tool"

// sbenchScriptRE is the name sbench gives the sbatch scripts it renders:
// the job's number, zero-padded, the campaign and the variant or mode
// (campaign.Plan: "01-quickstart-steps.sbatch").
var sbenchScriptRE = LazyRegexp(`^[0-9]+-.+\.sbatch$`)

// SbenchWritten reports whether a file is one that sbench itself writes
// beside a campaign's results and that holds no run, and why, in words
// for the user. name is the file's path; head is its beginning (SniffLen
// bytes are plenty). Views that walk a results folder skip these files
// silently: they are expected there, and never tool output, whatever their
// comments say (a campaign described as "OSU Micro-Benchmarks over UCX"
// puts "# OSU Micro-Benchmarks …" in its script, which OSU's title
// sniffer would otherwise take).
//
// It recognises
//   - the sbatch scripts sbench renders: a "#!" first line and sbench's
//     header comment ("# sbench campaign NAME: job …", line 2 of the
//     built-in template, or "# Rendered by sbench …"); or, for a site's own
//     template without that header, a "#!" first line and the name sbench
//     gives its scripts (NN-CAMPAIGN-….sbatch);
//   - sbench-runner's rendezvous address files (SESSION.addr): JSON of
//     schema "sbench.rendezvous/…".
//
// It does not recognise the files that hold runs: result bundles
// ("sbench.result/…", format "bundle"), and the jobs' Slurm output files
// (*.out), which hold what the job printed, the tools' output included,
// and are ingested like any other log.
func SbenchWritten(name string, head []byte) (why string, ok bool) {
	head = bytes.TrimPrefix(head[:min(len(head), SniffLen)], []byte("\ufeff"))
	if t := bytes.TrimSpace(head); bytes.HasPrefix(t, []byte("{")) {
		// The document's own schema, not a string anywhere in it: a
		// bundle's error text may quote an address file. Address files
		// are a few hundred bytes, so head holds all of one.
		var doc struct {
			Schema string `json:"schema"`
		}
		if json.Unmarshal(t, &doc) == nil && strings.HasPrefix(doc.Schema, "sbench.rendezvous/") {
			return fmt.Sprintf("sbench-runner's rendezvous address file (schema %.60q), written while its ranks meet", doc.Schema), true
		}
		return "", false
	}
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", false
	}
	// sbench's header is the comment block under the #! line; a site
	// template may put its own lines first, so the whole block is read.
	for _, l := range strings.Split(string(head), "\n")[1:] {
		l = strings.TrimRight(l, "\r")
		if !strings.HasPrefix(l, "#") {
			break
		}
		if rest, found := strings.CutPrefix(l, "# sbench campaign "); found {
			campaign, _, _ := strings.Cut(rest, ":")
			return fmt.Sprintf("an sbatch script rendered by sbench (campaign %.60s)", strings.TrimSpace(campaign)), true
		}
		if strings.HasPrefix(l, "# Rendered by sbench ") {
			return "an sbatch script rendered by sbench", true
		}
	}
	if sbenchScriptRE.MatchString(filepath.Base(name)) {
		return "an sbatch script rendered by sbench (named as sbench names its job scripts)", true
	}
	return "", false
}

// NotToolOutput reports whether head (the beginning of a file) is plainly
// no benchmark tool's output, and why: a file sbench wrote that holds no
// run (SbenchWritten), or a shell script, that is a "#!" first line or an
// #SBATCH directive (at the start of a line, as sbatch reads them). A
// script names tools in its comments and commands ("# OSU bandwidth",
// "srun osu_bw"), which sniffers look for in output; no tool prints either
// form. Detect refuses such an input before any sniffer sees it.
func NotToolOutput(name string, head []byte) (why string, ok bool) {
	head = head[:min(len(head), SniffLen)]
	if why, ok := SbenchWritten(name, head); ok {
		return why, true
	}
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	if bytes.HasPrefix(head, []byte("#!")) {
		first, _, _ := bytes.Cut(head, []byte("\n"))
		return fmt.Sprintf("a shell script (line 1 is %.60q)", strings.TrimRight(string(first), "\r")), true
	}
	for i, l := range bytes.Split(head, []byte("\n")) {
		if rest, found := bytes.CutPrefix(l, []byte("#SBATCH")); found && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t') {
			return fmt.Sprintf("a Slurm batch script (#SBATCH directive on line %d)", i+1), true
		}
	}
	return "", false
}
