package parsers

import (
	"bytes"
	"strings"
)

// Section is one part of an input that holds several runs.
type Section struct {
	// Label is the marker's text ("use erdma for osu_lat"); "" for an input
	// without markers, or for text outside every marked section.
	Label string
	// Line is the number of the section's first line in the whole input.
	Line int
	Data []byte
}

// Markers that job scripts print around each run, as article 004's does:
//
//	++++++ use erdma for osu_lat: START
//	…
//	------ use erdma for osu_lat: END
//
// Any run of three or more '+', '=', '#' or '-' works, and the colon is
// optional.
var (
	startRE = LazyRegexp(`^\s*(?:\+{3,}|={3,}|#{3,}|-{3,})\s*(.*?)\s*:?\s*(?i:START|BEGIN)\s*(?:\+{3,}|={3,}|#{3,}|-{3,})?\s*$`)
	endRE   = LazyRegexp(`^\s*(?:\+{3,}|={3,}|#{3,}|-{3,})\s*(.*?)\s*:?\s*(?i:END)\s*(?:\+{3,}|={3,}|#{3,}|-{3,})?\s*$`)
)

// Sections splits data at START/END markers. Text outside every marked
// section that holds more than blank lines becomes a section of its own
// with no label; an input without markers is one section.
func Sections(data []byte) []Section {
	if !hasMarkerLine(data) {
		return []Section{{Line: 1, Data: data}} // what the loop below makes of it
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var out []Section
	var cur *Section
	var loose Section
	flushLoose := func() {
		if len(bytes.TrimSpace(loose.Data)) > 0 {
			out = append(out, loose)
		}
		loose = Section{}
	}
	for i, l := range lines {
		n := i + 1
		text := strings.TrimRight(string(l), "\r\n")
		if m := startRE.FindStringSubmatch(text); m != nil && cur == nil {
			flushLoose()
			cur = &Section{Label: m[1], Line: n + 1}
			continue
		}
		if cur != nil {
			if m := endRE.FindStringSubmatch(text); m != nil && (m[1] == cur.Label || m[1] == "") {
				out = append(out, *cur)
				cur = nil
				continue
			}
			cur.Data = append(cur.Data, l...)
			continue
		}
		if loose.Line == 0 {
			loose.Line = n
		}
		loose.Data = append(loose.Data, l...)
	}
	if cur != nil { // a section the job never closed: keep what it printed
		out = append(out, *cur)
	}
	flushLoose()
	if len(out) == 0 {
		return []Section{{Line: 1, Data: data}}
	}
	return out
}

// hasMarkerLine reports whether a line of data could be a START or END
// marker: one that opens, after white space, with three of the same
// marker character, as both regexps require. Most inputs have none, and
// then need no regexp on every line.
func hasMarkerLine(data []byte) bool {
	for line := range bytes.Lines(data) {
		line = bytes.TrimLeft(line, " \t\f\r\v")
		if len(line) >= 3 && strings.IndexByte("+=#-", line[0]) >= 0 && line[1] == line[0] && line[2] == line[0] {
			return true
		}
	}
	return false
}
