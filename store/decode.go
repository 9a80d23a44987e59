package store

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// A walk over the samples of a year's runs decodes a million small JSON
// values (tags, rank pairs) and the same few strings (metrics, units, node
// names) again and again. The decoders here read the forms the store
// itself writes — json.Marshal of a map of plain strings, of a list of
// ints — without reflection, and an interner gives every repeated string
// one copy; anything else goes to encoding/json.

// interner returns one string per distinct byte sequence. It is meant for
// one walk: it holds every distinct string it was given.
type interner map[string]string

func (in interner) get(b []byte) string {
	if s, ok := in[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	in[s] = s
	return s
}

// str is get for a string.
func (in interner) str(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	in[s] = s
	return s
}

// decodeTags reads a JSON object of string values, as json.Marshal wrote
// it; nil for NULL.
func (in interner) decodeTags(b []byte) (map[string]string, error) {
	if b == nil {
		return nil, nil
	}
	if m, ok := in.plainObject(b); ok {
		return m, nil
	}
	var m map[string]string
	return m, json.Unmarshal(b, &m)
}

// plainObject reads {"k":"v",…} with no escapes or spaces; ok is false
// for anything else.
func (in interner) plainObject(b []byte) (map[string]string, bool) {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' || bytes.IndexByte(b, '\\') >= 0 {
		return nil, false
	}
	m := make(map[string]string, 4)
	rest := b[1 : len(b)-1]
	for len(rest) > 0 {
		k, r, ok := plainString(rest)
		if !ok || len(r) == 0 || r[0] != ':' {
			return nil, false
		}
		v, r, ok := plainString(r[1:])
		if !ok {
			return nil, false
		}
		m[in.get(k)] = in.get(v)
		if len(r) > 0 {
			if r[0] != ',' || len(r) == 1 {
				return nil, false
			}
			r = r[1:]
		}
		rest = r
	}
	return m, true
}

// plainString reads a quoted string at the start of b.
func plainString(b []byte) (s, rest []byte, ok bool) {
	if len(b) < 2 || b[0] != '"' {
		return nil, nil, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return nil, nil, false
	}
	return b[1 : 1+end], b[2+end:], true
}

// decodeInts reads a JSON list of integers, as json.Marshal wrote it; nil
// for NULL.
func decodeInts(b []byte) ([]int, error) {
	if b == nil {
		return nil, nil
	}
	return parseInts(string(b))
}

// parseInts reads a JSON list of integers: [1,2] without a copy or a
// split, anything else with encoding/json.
func parseInts(s string) ([]int, error) {
	if len(s) >= 3 && s[0] == '[' && s[len(s)-1] == ']' {
		out := make([]int, 0, 2)
		rest := s[1 : len(s)-1]
		for {
			f, r, more := strings.Cut(rest, ",")
			v, err := strconv.Atoi(f)
			if err != nil {
				break
			}
			out = append(out, v)
			if !more {
				return out, nil
			}
			rest = r
		}
	}
	var v []int
	return v, json.Unmarshal([]byte(s), &v)
}
