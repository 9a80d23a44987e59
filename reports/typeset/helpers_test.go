package typeset

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/sbench/sbench/internal/testenv"
)

// pdfText extracts a PDF's text the way a reader copying from it would;
// anything pdftotext says on stderr means the PDF is damaged.
func pdfText(t testing.TB, pdf []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(testenv.LookPath(t, "pdftotext", "poppler-utils"), "-enc", "UTF-8", path, "-")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, stderr.Bytes())
	}
	if stderr.Len() > 0 {
		t.Errorf("pdftotext complains:\n%s", stderr.Bytes())
	}
	return stdout.String()
}
