package hpl

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sbench/sbench/internal/golden"
	"github.com/sbench/sbench/parsers"
)

// goldenInputs are the real outputs of testdata (see testdata/README.md)
// that parse; each has testdata/golden/NAME.json, the bundles as JSON
// without their raw text.
var goldenInputs = []string{
	"000-hpl-infiniband.txt",
	"000-hpl-100mbit.txt",
	"hpl-1.0a-ompi-users-18tests.txt",
	"hpl-1.0a-tutorial-cut.txt",
	"hpl-2.2-lbnl-readme-tail.txt",
	"hpl-2.3-velocity-bench-failed.txt",
	"hpl-2.3-rpi-cluster-log.txt",
	"hpl-nvidia-wc0.txt",
	"intel-mkl-hpl-failed-excerpt.txt",
	"hpccoutf-srun-pmix-N1n2.txt",
	"hpccoutf-mpirun-np2-N1000.txt",
	"hpccoutf-mpirun-np2-N1000-threshold0.001.txt",
	"hpccoutf-mpirun-np2-N1000-threshold0.txt",
}

// TestGolden parses every fixture as "sbench ingest --format auto" would
// and compares the bundles with the golden JSON; go test -update rewrites
// the golden files after a deliberate change.
func TestGolden(t *testing.T) {
	for _, name := range goldenInputs {
		t.Run(name, func(t *testing.T) {
			bundles, err := parsers.Parse(name, "auto", readFixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bundles {
				if err := b.Validate(); err != nil {
					t.Errorf("bundle does not validate: %v", err)
				}
				b.Raw = ""
			}
			golden.CheckJSON(t, filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".txt")+".json"), bundles)
		})
	}
}
