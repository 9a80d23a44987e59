package testenv

import (
	"path/filepath"
	"testing"
)

func TestLookPath(t *testing.T) {
	if p := LookPath(t, "sh", ""); !filepath.IsAbs(p) {
		t.Errorf("LookPath(sh) = %q, want an absolute path", p)
	}
	// Outside CI a missing tool skips the test that needs it.
	t.Setenv("SBENCH_REQUIRE_INTEGRATION", "")
	var skipped bool
	t.Run("missing", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		LookPath(t, "sbench-no-such-tool", "nothing")
	})
	if !skipped {
		t.Error("a missing tool did not skip the test")
	}
}
