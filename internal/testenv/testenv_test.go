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

// TestLong: a long test runs under SBENCH_LONG=1 only, and skips without
// it outside CI.
func TestLong(t *testing.T) {
	t.Setenv("SBENCH_REQUIRE_INTEGRATION", "")
	for _, tt := range []struct {
		long string
		skip bool
	}{{"1", false}, {"", true}, {"0", true}} {
		t.Setenv("SBENCH_LONG", tt.long)
		var skipped bool
		t.Run("SBENCH_LONG="+tt.long, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			Long(t)
		})
		if skipped != tt.skip {
			t.Errorf("SBENCH_LONG=%q: skipped %v, want %v", tt.long, skipped, tt.skip)
		}
	}
}
