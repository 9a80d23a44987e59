package campaign

import (
	"fmt"
	"regexp"
	"strings"
)

// Quote returns s as one shell word: single-quoted, with embedded single
// quotes closed, escaped and reopened. Nothing inside is ever expanded.
func Quote(s string) string {
	if s != "" && safeWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// safeWord matches words that need no quoting at all; they are left bare so
// that rendered scripts stay readable.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// QuoteArgs quotes each word and joins them with spaces.
func QuoteArgs(args []string) string {
	return strings.Join(mapped(args, Quote), " ")
}

// nameRE is the character set for names that end up in file names, job names
// and #SBATCH lines, where quoting is not possible.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// checkName reports whether s may be used as a campaign, benchmark or variant
// name.
func checkName(s string) error {
	if s == "" {
		return fmt.Errorf("is empty")
	}
	if !nameRE.MatchString(s) {
		return fmt.Errorf("%q has a character that is not allowed (use letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit)", s)
	}
	return nil
}

// envNameRE is what a shell accepts as a variable name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkDirective reports whether s can stand as the value of an #SBATCH
// line. sbatch reads those lines itself, not through a shell, so quoting
// would be taken literally; instead anything that could end the line or the
// comment is refused.
func checkDirective(s string) error {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%q has a control character (newline, tab …), which is not allowed in an #SBATCH line", s)
		}
	}
	return nil
}

// commentLines turns free text into shell comment lines, so that a newline
// in a description cannot start a command.
func commentLines(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("# "+l, " ")
	}
	return strings.Join(lines, "\n")
}

// slug turns a free string into a safe file-name part.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_'
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 48 {
		out = strings.TrimRight(out[:48], "-.")
	}
	if out == "" {
		out = "v"
	}
	return out
}
