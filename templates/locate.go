package templates

import (
	"regexp"
	"strconv"
	"strings"
)

// keyIndex maps key paths of a TOML document to the line and column where
// they are written, so that a semantic error ("nodes must be at least 1") can
// name the line like a syntax error does. Paths use the decoded names with
// array-of-tables indices: "benchmark[1].params.sizes".
//
// It reads the document line by line and understands what campaign files
// use: [table] and [[array]] headers, dotted and quoted keys, and inline
// tables. It is a locator, not a parser: toml.Decode has already accepted the
// document.
type keyIndex struct {
	pos      map[string][2]int // path -> line, col (1-based)
	unindexd map[string][2]int // path without indices -> first line, col
}

var (
	arrayHeaderRE = regexp.MustCompile(`^\s*\[\[\s*([^\]]+?)\s*\]\]`)
	tableHeaderRE = regexp.MustCompile(`^\s*\[\s*([^\]]+?)\s*\]`)
	keyLineRE     = regexp.MustCompile(`^(\s*)((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=\s*(.*)$`)
	inlineKeyRE   = regexp.MustCompile(`([A-Za-z0-9_-]+|"[^"]*")\s*=`)
	indexRE       = regexp.MustCompile(`\[\d+\]`)
)

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
	ix := &keyIndex{pos: map[string][2]int{}, unindexd: map[string][2]int{}}
	counts := map[string]int{} // array-of-tables path (unindexed) -> count so far
	current := ""              // indexed path of the current table
	put := func(path string, line, col int) {
		if _, ok := ix.pos[path]; !ok {
			ix.pos[path] = [2]int{line, col}
		}
		plain := indexRE.ReplaceAllString(path, "")
		if _, ok := ix.unindexd[plain]; !ok {
			ix.unindexd[plain] = [2]int{line, col}
		}
	}
	// indexed turns header parts into an indexed path, giving every prefix
	// that is an array of tables its current index.
	indexed := func(parts []string) string {
		var out []string
		for i, p := range parts {
			out = append(out, p)
			plain := strings.Join(parts[:i+1], ".")
			if n, ok := counts[plain]; ok {
				out[len(out)-1] = p + "[" + strconv.Itoa(n-1) + "]"
			}
		}
		return strings.Join(out, ".")
	}
	for n, line := range strings.Split(src, "\n") {
		lineNo := n + 1
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		col := len(line) - len(strings.TrimLeft(line, " \t")) + 1
		if m := arrayHeaderRE.FindStringSubmatch(line); m != nil {
			parts := splitQuotedKey(m[1])
			plain := strings.Join(parts, ".")
			counts[plain]++
			current = indexed(parts)
			put(current, lineNo, col)
			continue
		}
		if m := tableHeaderRE.FindStringSubmatch(line); m != nil {
			current = indexed(splitQuotedKey(m[1]))
			put(current, lineNo, col)
			continue
		}
		m := keyLineRE.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		key := strings.Join(splitQuotedKey(line[m[4]:m[5]]), ".")
		path := key
		if current != "" {
			path = current + "." + key
		}
		put(path, lineNo, m[4]+1)
		value := line[m[6]:m[7]]
		if strings.HasPrefix(strings.TrimSpace(value), "{") {
			for _, km := range inlineKeyRE.FindAllStringSubmatchIndex(value, -1) {
				k := strings.Join(splitQuotedKey(value[km[2]:km[3]]), ".")
				put(path+"."+k, lineNo, m[6]+km[2]+1)
			}
		}
	}
	return ix
}

// lookup returns the line and column of path, trying the indexed form first
// and then the first occurrence of the path without indices; its parent's
// position when the key itself is not written (a missing key).
func (ix *keyIndex) lookup(path string) (line, col int) {
	for p := path; p != ""; {
		if v, ok := ix.pos[p]; ok {
			return v[0], v[1]
		}
		if v, ok := ix.unindexd[indexRE.ReplaceAllString(p, "")]; ok {
			return v[0], v[1]
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return 0, 0
}
