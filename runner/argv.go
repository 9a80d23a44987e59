package runner

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/sbench/sbench/results"
)

// argPart is a literal or a placeholder of an argument template.
type argPart struct {
	lit  string
	name string // placeholder name; "" for a literal
	n    int    // the rank N of {host:N}, {node:N} and {hostname:N}
}

// Placeholders the runner expands in every argument, after the bootstrap
// (when every rank's address is known). Those taking a rank are written
// {name:N}.
var placeholders = map[string]bool{
	"rank": false, "size": false, "workdir": false,
	"host": true, "node": true, "hostname": true,
}

// parseArg splits an argument into literals and placeholders. "{{" is a
// literal '{'; any other '{' opens a placeholder, which must be known and
// closed. '}' outside a placeholder is a literal.
func parseArg(s string) ([]argPart, error) {
	var parts []argPart
	var lit strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '{' {
			j := strings.IndexByte(s[i:], '{')
			if j < 0 {
				j = len(s) - i
			}
			lit.WriteString(s[i : i+j])
			i += j
			continue
		}
		if strings.HasPrefix(s[i:], "{{") {
			lit.WriteByte('{')
			i += 2
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return nil, fmt.Errorf("placeholder %.40q has no closing '}' (write {{ for a literal '{')", s[i:])
		}
		p, err := parsePlaceholder(s[i+1 : i+end])
		if err != nil {
			return nil, err
		}
		if lit.Len() > 0 {
			parts = append(parts, argPart{lit: lit.String()})
			lit.Reset()
		}
		parts = append(parts, p)
		i += end + 1
	}
	if lit.Len() > 0 || len(parts) == 0 {
		parts = append(parts, argPart{lit: lit.String()})
	}
	return parts, nil
}

func parsePlaceholder(body string) (argPart, error) {
	name, arg, hasArg := strings.Cut(body, ":")
	takesRank, known := placeholders[name]
	switch {
	case !known:
		return argPart{}, fmt.Errorf("unknown placeholder {%.40s} (known: {rank}, {size}, {workdir}, {host:N}, {node:N}, {hostname:N}; {{ for a literal '{')", body)
	case takesRank && !hasArg:
		return argPart{}, fmt.Errorf("placeholder {%s} needs a rank: {%s:N}", name, name)
	case !takesRank && hasArg:
		return argPart{}, fmt.Errorf("placeholder {%s} takes no argument", name)
	}
	p := argPart{name: name}
	if takesRank {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || strings.TrimLeft(arg, "0123456789") != "" || len(arg) > 9 {
			return argPart{}, fmt.Errorf("placeholder {%.40s}: %q is not a rank", body, arg)
		}
		p.n = n
	}
	return p, nil
}

// String writes the parts back as a template ParseArgv accepts.
func argString(parts []argPart) string {
	var b strings.Builder
	for _, p := range parts {
		switch {
		case p.name == "":
			b.WriteString(strings.ReplaceAll(p.lit, "{", "{{"))
		case placeholders[p.name]:
			fmt.Fprintf(&b, "{%s:%d}", p.name, p.n)
		default:
			fmt.Fprintf(&b, "{%s}", p.name)
		}
	}
	return b.String()
}

// checkArgv checks a command's placeholders against the step's size, so
// that {host:5} in a 2-rank step fails before anything runs.
func checkArgv(argv []string, size int) error {
	for i, a := range argv {
		parts, err := parseArg(a)
		if err != nil {
			return fmt.Errorf("argument %d: %w", i, err)
		}
		for _, p := range parts {
			if placeholders[p.name] && p.n >= size {
				return fmt.Errorf("argument %d: {%s:%d}: the step has %d rank%s", i, p.name, p.n, size, results.Plural(size))
			}
		}
	}
	return nil
}

// argValues are what placeholders expand to on one rank.
type argValues struct {
	rank, size int
	workdir    string
	members    []member
}

// expandArgv replaces every placeholder of argv.
func expandArgv(argv []string, v argValues) ([]string, error) {
	out := make([]string, len(argv))
	for i, a := range argv {
		parts, err := parseArg(a)
		if err != nil {
			return nil, fmt.Errorf("argument %d: %w", i, err)
		}
		var b strings.Builder
		for _, p := range parts {
			s, err := v.value(p)
			if err != nil {
				return nil, fmt.Errorf("argument %d: %w", i, err)
			}
			b.WriteString(s)
		}
		out[i] = b.String()
	}
	return out, nil
}

func (v argValues) value(p argPart) (string, error) {
	switch p.name {
	case "":
		return p.lit, nil
	case "rank":
		return strconv.Itoa(v.rank), nil
	case "size":
		return strconv.Itoa(v.size), nil
	case "workdir":
		return v.workdir, nil
	}
	if p.n >= len(v.members) || len(v.members[p.n].Addrs) == 0 {
		return "", fmt.Errorf("{%s:%d}: rank %d is unknown", p.name, p.n, p.n)
	}
	m := v.members[p.n]
	switch p.name {
	case "node":
		return m.Node, nil
	case "hostname":
		return m.Hostname, nil
	}
	return hostIP(m.Addrs), nil
}

// hostIP is the IP a rank advertised first (its usual compute network,
// or the --bind address), or the first host name if it advertised no IP.
func hostIP(addrs []string) string {
	first := ""
	for _, a := range addrs {
		if ap, err := netip.ParseAddrPort(a); err == nil {
			return ap.Addr().String()
		}
		i := strings.LastIndexByte(a, ':')
		if h := strings.Trim(a[:max(i, 0)], "[]"); first == "" && i > 0 && h != "" {
			first = h
		}
	}
	return first
}
