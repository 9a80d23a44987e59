package campaign

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestShellInjectionNeverRuns puts shell metacharacters into every string a
// campaign can carry into a script, renders it, runs the scripts with stub
// srun/sbench-runner/module commands, and checks that no payload ran and that
// the runner received every value byte for byte.
func TestShellInjectionNeverRuns(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "PWNED")
	payloads := []string{
		"a$(touch " + mark + ")b",
		"c`touch " + mark + "`d",
		"e;touch " + mark + ";f",
		`g'h"i\j`,
		"k\nl",
		"m && touch " + mark,
		"$HOME ${PATH} !x *",
	}
	var toml strings.Builder
	toml.WriteString("[campaign]\nname = \"inj\"\n")
	toml.WriteString("description = " + tomlString(strings.Join(payloads, " ")) + "\n")
	toml.WriteString("[campaign.labels]\n")
	for i, p := range payloads {
		toml.WriteString("l" + string(rune('a'+i)) + " = " + tomlString(p) + "\n")
	}
	toml.WriteString("[slurm]\nnodes = 1\nntasks_per_node = 2\nmodules = [" + tomlString(payloads[0]) + "]\n")
	toml.WriteString("[slurm.env]\nX1 = " + tomlString(payloads[1]) + "\nX2 = " + tomlString(payloads[3]) + "\n")
	// Native kernels take only numeric parameters, which are validated;
	// free text reaches the runner through labels.
	toml.WriteString("[[benchmark]]\nname = \"lat\"\nkernel = \"latency\"\n[benchmark.labels]\n")
	for i, p := range payloads {
		toml.WriteString("p" + string(rune('a'+i)) + " = " + tomlString(p) + "\n")
	}
	// An external tool: its argv reaches the runner as JSON in one quoted
	// word; an MPI launcher with the payload in its arguments.
	toml.WriteString("[[benchmark]]\nname = \"tool\"\ncommand = [\"osu_bw\", " + tomlString(payloads[0]) + ", " + tomlString(payloads[3]) + "]\n")
	toml.WriteString("launcher = { type = \"mpirun\", args = [" + tomlString(payloads[1]) + ", " + tomlString(payloads[5]) + "] }\n")
	toml.WriteString("[benchmark.files]\n\"in.txt\" = { content = " + tomlString(payloads[6]) + " }\n")
	toml.WriteString("[[variant]]\nname = \"v1\"\nenv = { X3 = " + tomlString(payloads[2]) + " }\nmodules = [" + tomlString(payloads[4]) + "]\n")
	toml.WriteString("[sweep]\n\"label.s\" = [" + tomlString(payloads[2]) + ", " + tomlString(payloads[4]) + "]\n")

	c, err := Parse("inj.toml", []byte(toml.String()))
	if err != nil {
		t.Fatalf("campaign with metacharacters in free-text values should be accepted (they are quoted): %v", err)
	}
	r, _ := NewRenderer()
	plan, err := c.Plan()
	if err != nil {
		t.Fatal(err)
	}
	paths, err := r.RenderDir(plan, filepath.Join(dir, "scripts"))
	if err != nil {
		t.Fatal(err)
	}
	stub := filepath.Join(dir, "stub")
	os.MkdirAll(stub, 0o755)
	argsFile := filepath.Join(dir, "args")
	// The stub srun writes each argument NUL-terminated, so we can compare
	// them byte for byte.
	writeStub(t, stub, "srun", `printf '%s\0' "$@" >> `+Quote(argsFile))
	writeStub(t, stub, "mpirun", `printf '%s\0' "$@" >> `+Quote(argsFile))
	for _, name := range []string{"sbench-runner", "module", "sbatch", "scontrol"} {
		writeStub(t, stub, name, "exit 0")
	}
	for _, p := range paths {
		cmd := exec.Command("bash", p)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + stub + ":/usr/bin:/bin", "HOME=" + dir, "SLURM_JOB_ID=42"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", filepath.Base(p), err, out)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("an injected command ran")
	}
	got, err := os.ReadFile(argsFile)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(got), "\x00")
	joined := "\x00" + string(got)
	for i, p := range payloads {
		if !strings.Contains(joined, "\x00l"+string(rune('a'+i))+"="+p+"\x00") {
			t.Errorf("label payload %q did not reach the runner intact", p)
		}
		if !strings.Contains(joined, "\x00p"+string(rune('a'+i))+"="+p+"\x00") {
			t.Errorf("benchmark label payload %q did not reach the runner intact", p)
		}
	}
	wantJSON, _ := json.Marshal([]string{"osu_bw", payloads[0], payloads[3]})
	if !strings.Contains(joined, "\x00"+string(wantJSON)+"\x00") {
		t.Errorf("the tool's argv did not reach the runner intact as %s", wantJSON)
	}
	for _, p := range []string{payloads[1], payloads[5]} {
		if !strings.Contains(joined, "\x00"+p+"\x00") {
			t.Errorf("launcher argument %q did not reach mpirun intact", p)
		}
	}
	if len(args) < 10 {
		t.Errorf("stub srun saw only %d arguments", len(args))
	}
}

func writeStub(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// tomlString writes s as a TOML basic string.
func tomlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

func TestQuote(t *testing.T) {
	for _, s := range []string{"", "plain", "a b", "it's", `"`, "$(x)", "`x`", "a\nb", "a\\b", "--param=x=1"} {
		out, err := exec.Command("bash", "-c", "printf '%s' "+Quote(s)).Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", Quote(s), err)
		}
		if string(out) != s {
			t.Errorf("Quote(%q) = %s; bash gave back %q", s, Quote(s), out)
		}
	}
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"a", "'", "$(x)", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			return // argv cannot hold NUL; campaigns reject it
		}
		out, err := exec.Command("bash", "-c", "printf '%s' "+Quote(s)).Output()
		if err != nil {
			t.Fatalf("bash on %q: %v", Quote(s), err)
		}
		if string(out) != s {
			t.Fatalf("Quote(%q) = %s; bash gave back %q", s, Quote(s), out)
		}
	})
}
