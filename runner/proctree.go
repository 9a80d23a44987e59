package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// The processes a local step started, found from the one sbench started.
//
// sbench local starts the ranks (or an MPI launcher, which starts them),
// and each rank starts its tool in a process group of its own (exec.go),
// out of reach of a signal to the rank's group. What a rank that was
// killed left running (its tool, a launcher's daemons) is found by
// walking /proc from the process sbench started: nothing is matched by
// name.

// procStat is what /proc/PID/stat says of a process: its parent, and
// whether it is a zombie, which is already gone but for its exit status.
type procStat struct {
	ppid   int
	zombie bool
}

// readProcStat reads /proc/PID/stat. The command name, in parentheses,
// may hold spaces and parentheses itself: the fields follow its last ')'.
func readProcStat(pid int) (procStat, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 2 {
		return procStat{}, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return procStat{}, false
	}
	return procStat{ppid: ppid, zombie: string(f[0]) == "Z"}, true
}

// children maps every live process to its children, read from /proc.
func children() map[int][]int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	kids := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok && !st.zombie {
			kids[st.ppid] = append(kids[st.ppid], pid)
		}
	}
	return kids
}

// descendants lists the live processes under pid (not pid itself),
// parents before their children.
func descendants(pid int) []int {
	kids := children()
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// exePath is the file a process runs (its /proc/PID/exe).
func exePath(pid int) string {
	p, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return p
}

// signalRunners sends sig to the processes under pid that run the binary
// runner (the ranks an MPI launcher started) and reports how many there
// were. A launcher told to stop kills its ranks at once (Open MPI's mpirun
// sends SIGTERM, then SIGKILL a moment later), which leaves rank 0 no
// time to write its bundle and remove its rendezvous file; a rank told
// itself stops as at a time limit.
func signalRunners(pid int, runner string, sig syscall.Signal) int {
	want, _ := filepath.Abs(runner)
	if p, err := filepath.EvalSymlinks(want); err == nil {
		want = p
	}
	n := 0
	for _, p := range descendants(pid) {
		if exePath(p) == want {
			if syscall.Kill(p, sig) == nil {
				n++
			}
		}
	}
	return n
}

// killTree ends proc and everything under it with SIGKILL. It stops them
// first, parents before children, so that none starts another process or
// is orphaned (and so lost from the walk) meanwhile; each one's process
// group goes too, where it leads one (a tool and whatever it started).
// proc is stopped through its os.Process, which knows when it has been
// waited for: its pid, perhaps another process's by now, is not used then.
func killTree(proc *os.Process) {
	if proc.Signal(syscall.SIGSTOP) != nil {
		return // it has ended, and its children are no longer its own
	}
	pid := proc.Pid
	stopped := map[int]bool{pid: true}
	order := []int{pid}
	stop := func(p int) {
		if !stopped[p] {
			stopped[p] = true
			order = append(order, p)
			syscall.Kill(p, syscall.SIGSTOP)
		}
	}
	// A process that forked as it was stopped has a child the first walk
	// missed: walk again until nothing new turns up.
	for {
		found := false
		for _, p := range descendants(pid) {
			if !stopped[p] {
				stop(p)
				found = true
			}
		}
		if !found {
			break
		}
	}
	for _, p := range order {
		if pgid, err := syscall.Getpgid(p); err == nil && pgid == p {
			syscall.Kill(-p, syscall.SIGKILL)
		}
		if p == pid {
			proc.Kill()
		} else {
			syscall.Kill(p, syscall.SIGKILL)
		}
	}
}

// UsableCores counts the cores this process may run on (its CPU affinity),
// as Open MPI's mpirun counts a host's slots: a core's hardware threads
// are one. 0 when it cannot tell.
func UsableCores() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	cores := map[[2]int]bool{}
	for cpu := 0; cpu < len(set)*64; cpu++ {
		if !set.IsSet(cpu) {
			continue
		}
		dir := filepath.Join("/sys/devices/system/cpu", "cpu"+strconv.Itoa(cpu), "topology")
		pkg, ok1 := readInt(filepath.Join(dir, "physical_package_id"))
		core, ok2 := readInt(filepath.Join(dir, "core_id"))
		if !ok1 || !ok2 {
			return 0
		}
		cores[[2]int{pkg, core}] = true
	}
	return len(cores)
}
