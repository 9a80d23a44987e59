package runner

import (
	"context"
	"errors"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/sbench/sbench/internal/testenv"
)

// Outputs as the tools print them: Open MPI 4.1.4 on this machine (Debian
// 12), Hydra from MPICH 4.0 (Ubuntu 22.04's, quoted in horovod/horovod
// PR #3984), the others in their documented formats.
var mpiOutputs = map[string]struct{ tool, out, want string }{
	"openmpi mpirun":   {"mpirun", "mpirun (Open MPI) 4.1.4\n\nReport bugs to http://www.open-mpi.org/community/help/\n", "Open MPI 4.1.4"},
	"openmpi 1.x":      {"mpirun", "mpirun (OpenRTE) 1.10.7\n\nReport bugs to http://www.open-mpi.org/community/help/\n", "Open MPI 1.10.7"},
	"ompi_info":        {"ompi_info", "Open MPI v4.1.4\n\nhttp://www.open-mpi.org/community/help/\n", "Open MPI 4.1.4"},
	"ompi_info parsed": {"ompi_info", "ompi:version:full:5.0.3\n", "Open MPI 5.0.3"},
	"hydra": {"mpirun", "HYDRA build details:\n    Version:                                 4.0\n    Release Date:                            Fri Jan 21 10:42:29 CST 2022\n    CC:                              gcc -O2\n",
		"MPICH (Hydra) 4.0"},
	"mpichversion": {"mpichversion", "MPICH Version:    \t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\nMPICH ABI:      \t14:2:2\n", "MPICH 4.0.2"},
	"mvapich":      {"mpichversion", "MVAPICH2 Version:     \t2.3.7\nMVAPICH2 Release date:\tWed March 02 22:00:00 EST 2022\n", "MVAPICH2 2.3.7"},
	"intel": {"mpirun", "Intel(R) MPI Library for Linux* OS, Version 2021.10 Build 20230619 (id: c2e19c2f3e)\nCopyright 2003-2023, Intel Corporation.\n",
		"Intel(R) MPI Library for Linux* OS, Version 2021.10 Build 20230619 (id: c2e19c2f3e)"},
	"empty":   {"mpirun", "\n\n", ""},
	"control": {"mpirun", "odd\x1b[0m mpi\x00 1.0\n", "odd[0m mpi 1.0"},
}

func TestParseMPIVersion(t *testing.T) {
	for name, tt := range mpiOutputs {
		if got := parseMPIVersion(tt.tool, []byte(tt.out)); got != tt.want {
			t.Errorf("%s: %q, want %q", name, got, tt.want)
		}
	}
}

func FuzzParseMPIVersion(f *testing.F) {
	for _, tt := range mpiOutputs {
		f.Add(tt.tool, []byte(tt.out))
	}
	f.Fuzz(func(t *testing.T, tool string, out []byte) {
		v := parseMPIVersion(tool, out)
		if len(v) > 200 || strings.ContainsAny(v, "\n\r\x00") || strings.TrimSpace(v) != v {
			t.Fatalf("%q", v)
		}
		if strings.TrimSpace(string(out)) != "" && v == "" && strings.TrimFunc(string(out), func(r rune) bool { return r <= ' ' || r == 0x7f }) != "" {
			t.Fatalf("%q gave nothing", out)
		}
	})
}

// fakeMPI answers probes from a table; commands it lacks are not installed.
func fakeMPI(outputs map[string]string, asked *[]string) mpiCommand {
	return func(ctx context.Context, argv ...string) ([]byte, error) {
		*asked = append(*asked, strings.Join(argv, " "))
		out, ok := outputs[argv[0]]
		if !ok {
			return nil, exec.ErrNotFound
		}
		return []byte(out), nil
	}
}

func TestMPIVersionOrder(t *testing.T) {
	for _, tt := range []struct {
		name    string
		outputs map[string]string
		want    string
		asked   string
	}{
		{"open mpi", map[string]string{"mpirun": mpiOutputs["openmpi mpirun"].out, "mpichversion": mpiOutputs["mpichversion"].out},
			"Open MPI 4.1.4", "mpirun --version"},
		{"hydra asks the library", map[string]string{"mpirun": mpiOutputs["hydra"].out, "mpichversion": mpiOutputs["mvapich"].out},
			"MVAPICH2 2.3.7", "mpirun --version, mpichversion"},
		{"hydra alone", map[string]string{"mpiexec": mpiOutputs["hydra"].out},
			"MPICH (Hydra) 4.0", "mpirun --version, mpiexec --version, mpichversion"},
		{"no launcher", map[string]string{"ompi_info": mpiOutputs["ompi_info"].out},
			"Open MPI 4.1.4", "mpirun --version, mpiexec --version, ompi_info --parsable --version"},
		{"none", map[string]string{},
			"", "mpirun --version, mpiexec --version, ompi_info --parsable --version, mpichversion"},
	} {
		var asked []string
		got := mpiVersion(context.Background(), fakeMPI(tt.outputs, &asked))
		if got != tt.want || strings.Join(asked, ", ") != tt.asked {
			t.Errorf("%s: %q after %v; want %q after %s", tt.name, got, asked, tt.want, tt.asked)
		}
	}
}

// TestMPIVersionHere asks the MPI installed on this machine, if any.
func TestMPIVersionHere(t *testing.T) {
	testenv.LookPath(t, "mpirun", "openmpi-bin")
	start := time.Now()
	v := MPIVersion(context.Background())
	if !regexp.MustCompile(`^(Open MPI|MPICH|MVAPICH2|Intel)`).MatchString(v) || time.Since(start) > mpiProbeTimeout+time.Second {
		t.Errorf("MPIVersion() = %q after %s", v, time.Since(start))
	}
	t.Logf("%s in %s", v, time.Since(start).Round(time.Millisecond))
}

func TestMPIVersionTimesOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	v := mpiVersion(ctx, func(ctx context.Context, argv ...string) ([]byte, error) {
		<-ctx.Done() // a launcher that hangs
		return nil, errors.New("killed")
	})
	if v != "" || time.Since(start) > time.Second {
		t.Errorf("%q after %s", v, time.Since(start))
	}
}

func TestRevisionOf(t *testing.T) {
	for _, tt := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, ""},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "cbdec56aa"}, {Key: "vcs.modified", Value: "false"}}, "cbdec56aa"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: "cbdec56aa"}}, "cbdec56aa-dirty"},
		{[]debug.BuildSetting{{Key: "vcs.modified", Value: "true"}}, ""},
	} {
		if got := revisionOf(tt.settings); got != tt.want {
			t.Errorf("revisionOf(%v) = %q, want %q", tt.settings, got, tt.want)
		}
	}
}
