package runner

import (
	"reflect"
	"testing"
)

func TestExpandArgv(t *testing.T) {
	v := argValues{rank: 1, size: 3, workdir: "/w", members: []member{
		{Rank: 0, Node: "n1", Hostname: "h1", Addrs: []string{"h1:4000", "10.0.0.1:4000", "127.0.0.1:4000"}},
		{Rank: 1, Node: "n2", Hostname: "h2", Addrs: []string{"[fe80::1]:4001"}},
		{Rank: 2, Node: "n3", Hostname: "h3", Addrs: []string{"h3:4002"}},
	}}
	got, err := expandArgv([]string{"{rank}/{size}", "{host:0}", "{host:1}", "{host:2}", "{node:2}@{hostname:0}", "{workdir}/x", "{{rank}", "}{{}", ""}, v)
	want := []string{"1/3", "10.0.0.1", "fe80::1", "h3", "n3@h1", "/w/x", "{rank}", "}{}", ""}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, %v\nwant %q", got, err, want)
	}
	if _, err := expandArgv([]string{"{node:7}"}, v); err == nil {
		t.Error("a rank past the step expanded")
	}
}

// FuzzParseArg: a template either fails cleanly or writes back to a form
// that parses to the same parts, and expands without error.
func FuzzParseArg(f *testing.F) {
	for _, s := range []string{"{rank}", "{host:1}x{{y}", "{", "}", "{{", "{node:}", "{hostname:01}", "a{size}b{workdir}c", "{host:99999999999}"} {
		f.Add(s)
	}
	v := argValues{rank: 0, size: 2, workdir: "/w", members: []member{
		{Node: "n1", Hostname: "h1", Addrs: []string{"127.0.0.1:1"}}, {Node: "n2", Hostname: "h2", Addrs: []string{"127.0.0.1:2"}}}}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := parseArg(s)
		if err != nil {
			return
		}
		again, err := parseArg(argString(parts))
		if err != nil || !reflect.DeepEqual(again, parts) {
			t.Fatalf("%q: %+v written as %q, read back as %+v, %v", s, parts, argString(parts), again, err)
		}
		if checkArgv([]string{s}, 2) == nil {
			if _, err := expandArgv([]string{s}, v); err != nil {
				t.Fatalf("%q passed the check but does not expand: %v", s, err)
			}
		}
	})
}
