package hpl

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sbench/sbench/parsers"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.json from the parsers' output")

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
			data, err := os.ReadFile(filepath.Join("testdata", name))
			if err != nil {
				t.Fatal(err)
			}
			bundles, err := parsers.Parse(name, "auto", data)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bundles {
				if err := b.Validate(); err != nil {
					t.Errorf("bundle does not validate: %v", err)
				}
				b.Raw = ""
			}
			var got bytes.Buffer
			enc := json.NewEncoder(&got)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			if err := enc.Encode(bundles); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".txt")+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("bundles differ from %s (go test -update rewrites it; review the diff):\n%s", golden, firstDiff(got.String(), string(want)))
			}
		})
	}
}

// firstDiff shows the first differing line of two texts, with context.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(no line differs)"
}
