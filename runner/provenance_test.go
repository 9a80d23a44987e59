package runner

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/sbench/sbench/results"
)

// writeTree creates files under root from a path → content map; a value
// starting with "->" makes a symlink, as sysfs's class directories are.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if len(content) > 2 && content[:2] == "->" {
			if err := os.Symlink(content[2:], full); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fakeTree is a small node: hostname and CPU model only.
func fakeTree(t *testing.T, hostname, cpu string) string {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/sys/kernel/hostname": hostname + "\n",
		"proc/cpuinfo":             "processor\t: 0\nmodel name\t: " + cpu + "\n",
	})
	return root
}

func TestGatherHostFromFakeTree(t *testing.T) {
	cpuinfo, err := os.ReadFile("testdata/host/cpuinfo-xeon-6338-2-sockets")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"proc/sys/kernel/hostname":  "cn001\n",
		"proc/sys/kernel/osrelease": "5.14.0-427.el9.x86_64\n",
		"proc/cpuinfo":              string(cpuinfo),
		"proc/meminfo":              "MemTotal:       263596692 kB\nMemFree:         1000 kB\n",
		"etc/os-release":            "NAME=\"Rocky Linux\"\nPRETTY_NAME=\"Rocky Linux 9.4 (Blue Onyx)\"\n",
		"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance\n",
		"sys/devices/system/node/node0/meminfo":                "",
		"sys/devices/system/node/node1/meminfo":                "",
		"sys/devices/system/node/possible":                     "0-1\n",
		// mlx5_0: two ports, fw at device level; a device without ports is skipped.
		"devices/mlx5_0/fw_ver":                "20.39.1002\n",
		"devices/mlx5_0/ports/1/state":         "4: ACTIVE\n",
		"devices/mlx5_0/ports/1/rate":          "200 Gb/sec (4X HDR)\n",
		"devices/mlx5_0/ports/1/link_layer":    "InfiniBand\n",
		"devices/mlx5_0/ports/2/state":         "1: DOWN\n",
		"devices/mlx5_0/ports/2/rate":          "10 Gb/sec (4X SDR)\n",
		"devices/mlx5_0/ports/2/link_layer":    "Ethernet\n",
		"devices/mlx5_1/fw_ver":                "20.39.1002\n",
		"sys/class/infiniband/mlx5_0":          "->../../../devices/mlx5_0",
		"sys/class/infiniband/mlx5_1":          "->../../../devices/mlx5_1",
		"devices/ib0/speed":                    "100000\n",
		"devices/ib0/mtu":                      "4092\n",
		"devices/ib0/operstate":                "up\n",
		"devices/docker0/speed":                "-1\n",
		"devices/docker0/mtu":                  "1500\n",
		"devices/docker0/operstate":            "down\n",
		"sys/class/net/ib0":                    "->../../../devices/ib0",
		"sys/class/net/docker0":                "->../../../devices/docker0",
		"sys/class/net/lo/mtu":                 "65536\n",
		"sys/devices/system/cpu/cpufreq/dummy": "",
	})
	env := map[string]string{"LOADEDMODULES": "gcc/13.2:openmpi/4.1.6::"}
	got := GatherHost(root, func(k string) string { return env[k] })
	want := results.Host{
		Hostname: "cn001", CPUModel: "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
		Sockets: 2, Cores: 3, Threads: 4,
		CPUFlags:    []string{"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw"},
		Governor:    "performance",
		MemoryBytes: 263596692 * 1024, NUMANodes: 2,
		Kernel: "5.14.0-427.el9.x86_64", OS: "Rocky Linux 9.4 (Blue Onyx)",
		Modules: []string{"gcc/13.2", "openmpi/4.1.6"},
		IB: []results.IBPort{
			{Device: "mlx5_0", Port: 1, State: "ACTIVE", Rate: "200 Gb/sec (4X HDR)", RateGbps: 200, LinkLayer: "InfiniBand", Firmware: "20.39.1002"},
			{Device: "mlx5_0", Port: 2, State: "DOWN", Rate: "10 Gb/sec (4X SDR)", RateGbps: 10, LinkLayer: "Ethernet", Firmware: "20.39.1002"},
		},
		Net: []results.NetIf{
			{Name: "docker0", MTU: 1500, State: "down"},
			{Name: "ib0", SpeedMbps: 100000, MTU: 4092, State: "up"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestGatherHostPrefersSysfsTopology(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		// An Arm cpuinfo: no model name, no physical id.
		"proc/cpuinfo": "processor\t: 0\nFeatures\t: fp asimd sve\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nFeatures\t: fp asimd sve\n",
	}
	for cpu, topo := range map[string][2]string{"cpu0": {"0", "0"}, "cpu1": {"0", "1"}, "cpu2": {"1", "0"}} {
		files["sys/devices/system/cpu/"+cpu+"/topology/physical_package_id"] = topo[0] + "\n"
		files["sys/devices/system/cpu/"+cpu+"/topology/core_id"] = topo[1] + "\n"
	}
	files["sys/devices/system/cpu/cpu3/online"] = "0\n" // offline: not counted
	writeTree(t, root, files)
	h := GatherHost(root, func(string) string { return "" })
	if h.Sockets != 2 || h.Cores != 3 || h.Threads != 3 {
		t.Errorf("sockets/cores/threads = %d/%d/%d, want 2/3/3", h.Sockets, h.Cores, h.Threads)
	}
	if !reflect.DeepEqual(h.CPUFlags, []string{"asimd", "sve"}) {
		t.Errorf("flags %v", h.CPUFlags)
	}
}

func TestGatherHostEmptyTree(t *testing.T) {
	got := GatherHost(t.TempDir(), func(string) string { return "" })
	if !reflect.DeepEqual(got, results.Host{}) {
		t.Errorf("an empty tree gave %+v", got)
	}
}

func TestIBRate(t *testing.T) {
	for rate, want := range map[string]float64{
		"100 Gb/sec (4X EDR)": 100, "2.5 Gb/sec (1X SDR)": 2.5, "400 Gb/sec (4X NDR)": 400,
		"": 0, "fast": 0, "10 Mb/sec": 0, "-5 Gb/sec": 0,
	} {
		if got := ibRateGbps(rate); got != want {
			t.Errorf("ibRateGbps(%q) = %v, want %v", rate, got, want)
		}
	}
}

func TestCPUFrequency(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sys/devices/system/cpu/cpu0/cpufreq")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "cpuinfo_max_freq"), []byte("3500000\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "base_frequency"), []byte("2100000\n"), 0o644)
	var h results.Host
	CPUFrequency(&h, root)
	if h.Extra["cpu_base_mhz"] != "2100" || h.Extra["cpu_max_mhz"] != "3500" {
		t.Errorf("Extra = %v", h.Extra)
	}
	var none results.Host
	CPUFrequency(&none, t.TempDir())
	if none.Extra != nil {
		t.Errorf("no cpufreq, yet Extra = %v", none.Extra)
	}
}
