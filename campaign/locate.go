package campaign

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// keyIndex maps key paths of a TOML document to the line and column where
// they are written, so that a semantic error ("nodes must be at least 1") can
// name the line like a syntax error does. Paths use the decoded names with
// array-of-tables indices, each key as TOML would write it (keyPart):
// "benchmark[1].params.sizes", `benchmark[0].per_rank."1"`. The items of a
// list are indexed too, "benchmark[0].command[2]", so that a problem in one
// string of a command can point at that string.
//
// It reads the document line by line and understands what campaign files
// use: [table] and [[array]] headers, dotted and quoted keys, inline tables
// and lists, over several lines, with strings and comments in them. It is a
// locator, not a parser: toml.Decode has already accepted the document.
type keyIndex struct {
	pos map[string][2]int // path -> line, col (1-based)
	// vals holds the offset of a key's value; src is the document.
	vals map[string]int
	src  string
	// lineStart holds the offset of each line's first byte.
	lineStart []int
}

var (
	arrayHeaderRE = regexp.MustCompile(`^\s*\[\[\s*([^\]]+?)\s*\]\]`)
	tableHeaderRE = regexp.MustCompile(`^\s*\[\s*([^\]]+?)\s*\]`)
	keyLineRE     = regexp.MustCompile(`^(\s*)((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=\s*(.*)$`)
	bareKeyRE     = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	digitsRE      = regexp.MustCompile(`^[0-9]+$`)
)

// keyPart is one key of a path as a problem names it: bare when TOML
// allows it and it cannot be read as a list index, quoted otherwise
// (per_rank."1", files."HPL.dat", sweep."launcher.type").
func keyPart(k string) string {
	if bareKeyRE.MatchString(k) && !digitsRE.MatchString(k) {
		return k
	}
	return strconv.Quote(k)
}

// joinKeys writes the keys of a dotted key as a path.
func joinKeys(parts []string) string {
	return strings.Join(mapped(parts, keyPart), ".")
}

// splitQuotedKey splits a dotted key, keeping dots inside quotes.
func splitQuotedKey(s string) []string {
	var parts []string
	var cur strings.Builder
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		case r == ' ' || r == '\t':
		default:
			cur.WriteRune(r)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

func newKeyIndex(src string) *keyIndex {
	// toml.Decode skips a byte order mark; columns count from after it.
	src = strings.TrimPrefix(src, "\ufeff")
	ix := &keyIndex{pos: map[string][2]int{}, vals: map[string]int{}, src: src, lineStart: []int{0}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			ix.lineStart = append(ix.lineStart, i+1)
		}
	}
	counts := map[string]int{} // array-of-tables path (unindexed) -> count so far
	current := ""              // indexed path of the current table
	// indexed turns header parts into an indexed path, giving every prefix
	// that is an array of tables its current index.
	indexed := func(parts []string) string {
		var out []string
		for i, p := range parts {
			out = append(out, keyPart(p))
			if n, ok := counts[joinKeys(parts[:i+1])]; ok {
				out[len(out)-1] += "[" + strconv.Itoa(n-1) + "]"
			}
		}
		return strings.Join(out, ".")
	}
	for off := 0; off < len(src); {
		end := strings.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off
		}
		line, next := src[off:end], end+1
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
		case arrayHeaderRE.MatchString(line):
			parts := splitQuotedKey(arrayHeaderRE.FindStringSubmatch(line)[1])
			counts[joinKeys(parts)]++
			// A new table of an array starts its own arrays of tables
			// ([[benchmark.metric]] counts from 0 in each [[benchmark]]).
			for k := range counts {
				if strings.HasPrefix(k, joinKeys(parts)+".") {
					delete(counts, k)
				}
			}
			current = indexed(parts)
			ix.put(current, off+len(line)-len(strings.TrimLeft(line, " \t")))
		case tableHeaderRE.MatchString(line):
			current = indexed(splitQuotedKey(tableHeaderRE.FindStringSubmatch(line)[1]))
			ix.put(current, off+len(line)-len(strings.TrimLeft(line, " \t")))
		default:
			m := keyLineRE.FindStringSubmatchIndex(line)
			if m == nil {
				break
			}
			path := joinKeys(splitQuotedKey(line[m[4]:m[5]]))
			if current != "" {
				path = current + "." + path
			}
			ix.put(path, off+m[4])
			if _, ok := ix.vals[path]; !ok {
				ix.vals[path] = off + m[6]
			}
			// A value over several lines (a list, a long string) is
			// read whole, and its lines are not keys.
			if v := ix.value(src, off+m[6], path); v > end {
				if nl := strings.IndexByte(src[v:], '\n'); nl >= 0 {
					next = v + nl + 1
				} else {
					next = len(src)
				}
			}
		}
		off = next
	}
	return ix
}

// put records that path is written at byte offset off, unless it was
// already (a key's first place is where it is defined).
func (ix *keyIndex) put(path string, off int) {
	if _, ok := ix.pos[path]; ok {
		return
	}
	line := sort.SearchInts(ix.lineStart, off+1) // lines starting at or before off
	ix.pos[path] = [2]int{line, off - ix.lineStart[line-1] + 1}
}

// value reads the TOML value at src[i:], the value of path, recording
// the items of lists and the keys of inline tables in it; it returns the
// offset just past the value.
func (ix *keyIndex) value(src string, i int, path string) int {
	if i >= len(src) {
		return i
	}
	switch {
	case strings.HasPrefix(src[i:], `"""`), strings.HasPrefix(src[i:], `'''`):
		return stringEnd(src, i+3, src[i:i+3], src[i] == '"')
	case src[i] == '"' || src[i] == '\'':
		return stringEnd(src, i+1, src[i:i+1], src[i] == '"')
	case src[i] == '[' || src[i] == '{':
		// A list's items are path[N]; an inline table's keys path.KEY.
		list, closing := src[i] == '[', byte('}')
		if list {
			closing = ']'
		}
		i++
		for n := 0; ; {
			i = skipBlank(src, i)
			switch {
			case i >= len(src):
				return i
			case src[i] == closing:
				return i + 1
			case src[i] == ',':
				i++
				continue
			}
			item := fmt.Sprintf("%s[%d]", path, n)
			if list {
				ix.put(item, i)
			} else {
				start := i
				i = keyEnd(src, i)
				item = path + "." + joinKeys(splitQuotedKey(src[start:i]))
				ix.put(item, start)
				if i < len(src) && src[i] == '=' {
					i++
				}
				for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
					i++
				}
			}
			if j := ix.value(src, i, item); j > i {
				i = j
			} else {
				i++
			}
			n++
		}
	}
	// A number, boolean or date: up to what ends it.
	for i < len(src) && !strings.ContainsRune(",]}\n#", rune(src[i])) {
		i++
	}
	return i
}

// stringEnd returns the offset just past the string whose body starts at
// src[i:] and ends with the delimiter delim; escapes are those of a
// basic string.
func stringEnd(src string, i int, delim string, escapes bool) int {
	for i < len(src) {
		switch {
		case escapes && src[i] == '\\':
			i += 2
		case strings.HasPrefix(src[i:], delim):
			i += len(delim)
			// """a"""" is the string a": up to two quotes end the body.
			for n := 0; len(delim) == 3 && n < 2 && i < len(src) && src[i] == delim[0]; n++ {
				i++
			}
			return i
		case len(delim) == 1 && src[i] == '\n':
			return i
		default:
			i++
		}
	}
	return min(i, len(src))
}

// keyEnd returns the offset of the '=' ending the key that starts at
// src[i:], quotes and all.
func keyEnd(src string, i int) int {
	for i < len(src) && src[i] != '=' && src[i] != '\n' && src[i] != '}' {
		if src[i] == '"' || src[i] == '\'' {
			i = stringEnd(src, i+1, src[i:i+1], src[i] == '"')
			continue
		}
		i++
	}
	return i
}

// skipBlank skips white space, line ends and comments.
func skipBlank(src string, i int) int {
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\r', '\n':
			i++
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		default:
			return i
		}
	}
	return i
}

// has reports whether path is written (false without an index).
func (ix *keyIndex) has(path string) bool {
	if ix == nil {
		return false
	}
	_, ok := ix.pos[path]
	return ok
}

// lookup returns the line and column of path, or of the nearest enclosing
// path that is written when path itself is not (a missing key, a value
// that came from elsewhere): the item's list, the key's table.
func (ix *keyIndex) lookup(path string) (line, col int) {
	for p := path; p != ""; p = parentPath(p) {
		if v, ok := ix.pos[p]; ok {
			return v[0], v[1]
		}
	}
	return 0, 0
}

// parentPath strips the last key or index of a path: a.b[2] -> a.b,
// a."b.c" -> a, a.b -> a, a -> "".
func parentPath(p string) string {
	switch {
	case strings.HasSuffix(p, "]"):
		if i := strings.LastIndexByte(p, '['); i >= 0 {
			return p[:i]
		}
	case strings.HasSuffix(p, `"`):
		// The opening quote of the last key: a quote not escaped.
		for i := len(p) - 2; i >= 0; i-- {
			if p[i] == '"' && (i == 0 || p[i-1] != '\\') {
				return strings.TrimSuffix(p[:i], ".")
			}
		}
	}
	if i := strings.LastIndexByte(p, '.'); i >= 0 {
		return p[:i]
	}
	return ""
}

// inString is the line and column of the col'th character (1-based) of
// the one-line string value at path (a key's value, or a list's item):
// exactly when the file writes the string as it is (a literal string, or
// a basic one without escapes before that character); else the value's,
// or the key's, place.
func (ix *keyIndex) inString(path, text string, col int) (line, c int) {
	off, ok := ix.vals[path]
	if !ok {
		if p, isItem := ix.pos[path]; isItem && strings.HasSuffix(path, "]") {
			off, ok = ix.lineStart[p[0]-1]+p[1]-1, true
		}
	}
	if !ok || off >= len(ix.src) {
		return ix.lookup(path)
	}
	line = sort.SearchInts(ix.lineStart, off+1)
	c = off - ix.lineStart[line-1] + 1
	q := ix.src[off]
	if col < 1 || q != '\'' && q != '"' || strings.HasPrefix(ix.src[off:], `"""`) || strings.HasPrefix(ix.src[off:], "'''") {
		return line, c
	}
	if prefix := text[:min(col-1, len(text))]; strings.HasPrefix(ix.src[off+1:], prefix) && !strings.Contains(prefix, "\n") {
		return line, c + col
	}
	return line, c
}
