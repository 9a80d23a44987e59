package parsers

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use, so that a process
// that never parses (sbench-runner on most ranks) does not compile the
// parsers' patterns at start-up. A pattern that does not compile panics on
// first use, which every parser's tests reach.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// LazyRegexp returns a Regexp for expr, compiled when first used.
func LazyRegexp(expr string) *Regexp { return &Regexp{expr: expr} }

func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// The methods the parsers use, as regexp.Regexp has them.

func (r *Regexp) Match(b []byte) bool                  { return r.get().Match(b) }
func (r *Regexp) MatchString(s string) bool            { return r.get().MatchString(s) }
func (r *Regexp) FindStringSubmatch(s string) []string { return r.get().FindStringSubmatch(s) }
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.get().ReplaceAllString(src, repl)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.get().FindAllStringSubmatch(s, n)
}
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.get().FindAllStringSubmatchIndex(s, n)
}

// matches reports whether re matches s, leaving its submatches in *m, so
// that a switch tests and reads a pattern in one case.
func matches(re *Regexp, s string, m *[]string) bool {
	*m = re.FindStringSubmatch(s)
	return *m != nil
}
