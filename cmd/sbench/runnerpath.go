package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// newToken makes the per-job secret that authenticates the runner's ranks to
// each other. It travels in the job's environment only, never in a script.
func newToken() string { return randomHex(32) }

// selfDir is the directory of the running sbench binary; sbench-runner is
// looked for there first, since the two are built and installed together.
func selfDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Dir(exe)
}

// findRunner returns the sbench-runner to start for local runs.
func findRunner(name string) (string, error) {
	if strings.ContainsRune(name, '/') {
		return name, nil
	}
	if d := selfDir(); d != "" {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s not found next to sbench or in PATH (build it with make build)", name)
	}
	return p, nil
}

// pathWithSelf puts sbench's own directory first in PATH, so that jobs find
// the sbench-runner installed beside it.
func pathWithSelf(path string) string {
	d := selfDir()
	if d == "" {
		return path
	}
	return d + string(os.PathListSeparator) + path
}
