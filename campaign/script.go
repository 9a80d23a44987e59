package campaign

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sbench/sbench/runargs"
)

// Block is one step of a script, as shell text: a comment and the lines
// that launch it. Every value from the campaign in Body is quoted; the
// only unquoted expansions are the script's own variables.
type Block struct {
	Comment string
	Body    string
}

// Launch is one start of a step's ranks on concrete nodes, as sbench local
// does it (the scripts compute the same from the allocation at run time).
type Launch struct {
	// ID names the launch in bundle file names: the step index, with the
	// node pair for pairs placements.
	ID string
	// Nodes are the nodes in rank order; TasksPerNode ranks on each, Ranks
	// in all.
	Nodes        []string
	TasksPerNode int
	Ranks        int
	// Args are the runner arguments of this launch beyond the step's.
	Args []string
}

// Launches places a step on a job's nodes (in allocation order).
func (st Step) Launches(nodes []string) []Launch {
	id := strconv.Itoa(st.Index)
	pair := func(suffix string, a, b string, extra ...string) Launch {
		return Launch{ID: id + "-" + suffix, Nodes: []string{a, b}, TasksPerNode: 1, Ranks: 2,
			Args: append([]string{"--label", "pair=" + a + "->" + b}, extra...)}
	}
	switch st.Benchmark.Pairs {
	case "both-directions", "all", "reference":
		var out []Launch
		for _, p := range orderedPairs(st.Benchmark.Pairs, nodes) {
			l := pair(p[0]+"-"+p[1], p[0], p[1])
			if st.Benchmark.Pairs == "reference" {
				l.Args = append(l.Args, "--label", "reference="+nodes[0])
			}
			out = append(out, l)
		}
		return out
	case "intra-inter":
		a, b := nodes[0], nodes[1]
		return []Launch{
			{ID: id + "-intra", Nodes: []string{a}, TasksPerNode: 2, Ranks: 2,
				Args: []string{"--label", "pair=" + a + "->" + a, "--label", "placement=intra-node"}},
			pair("inter", a, b, "--label", "placement=inter-node"),
		}
	}
	return []Launch{{ID: id, Nodes: nodes[:min(st.Nodes, len(nodes))], TasksPerNode: st.PerNode, Ranks: st.Ranks}}
}

// LaunchIDs are the ids of the launches (the runner's --step) a step of a
// job makes on its allocation's nodes: the step's index, or one id per
// node pair for a pairs placement, as the script computes them. Without
// the nodes (a job that never ran), a pairs step has no ids.
func LaunchIDs(index, pairs string, nodes []string) []string {
	switch pairs {
	case "":
		return []string{index}
	case "intra-inter":
		return []string{index + "-intra", index + "-inter"}
	}
	var ids []string
	for _, p := range orderedPairs(pairs, nodes) {
		ids = append(ids, index+"-"+p[0]+"-"+p[1])
	}
	return ids
}

// orderedPairs are the (from, to) node pairs a both-directions, all or
// reference placement runs on nodes, in launch order.
func orderedPairs(pairs string, nodes []string) [][2]string {
	var out [][2]string
	switch pairs {
	case "both-directions":
		if len(nodes) >= 2 {
			out = [][2]string{{nodes[0], nodes[1]}, {nodes[1], nodes[0]}}
		}
	case "all":
		for _, a := range nodes {
			for _, b := range nodes {
				if a != b {
					out = append(out, [2]string{a, b})
				}
			}
		}
	case "reference":
		for _, x := range nodes[min(1, len(nodes)):] {
			out = append(out, [2]string{nodes[0], x}, [2]string{x, nodes[0]})
		}
	}
	return out
}

// usesPairs reports whether any step needs the allocation's node names.
func usesPairs(steps []Step) bool {
	return slices.ContainsFunc(steps, func(st Step) bool { return st.Benchmark.Pairs != "" })
}

// stepComment describes a step in one line (or more, if names hold
// newlines: commentLines makes every line a comment).
func stepComment(st Step, repeats int) string {
	s := fmt.Sprintf("step %d: benchmark %s, variant %s", st.Index, st.Benchmark.Name, st.Name)
	if repeats > 1 {
		s += fmt.Sprintf(", repeat %d of %d", st.Repeat+1, repeats)
	}
	switch st.Benchmark.Pairs {
	case "":
		s += fmt.Sprintf(": %d rank(s) on %d node(s)", st.Ranks, st.Nodes)
	case "all":
		s += ": 2 ranks, every ordered pair of the job's nodes"
	case "both-directions":
		s += ": 2 ranks, first node to second and back"
	case "reference":
		s += ": 2 ranks, the first node (the reference) to every other node and back"
	case "intra-inter":
		s += ": 2 ranks on one node, then on two"
	}
	if in, err := hplInput(st.Run); err == nil {
		s += "; " + kinds[st.Benchmark.Kind].input + " " + inputSummary(in)
	}
	return commentLines(s)
}

// block renders one step.
func (c *Campaign) block(st Step) Block {
	cfg := st.Config
	var pre []string
	if len(cfg.Modules) > 0 {
		pre = append(pre, "module load "+QuoteArgs(cfg.Modules))
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		pre = append(pre, "export "+k+"="+Quote(cfg.Env[k]))
	}
	pre = append(pre, cfg.Setup...) // the user's own shell lines, by design
	runner := Quote(c.RunnerPath()) + " " + QuoteArgs(st.RunnerArgs)
	var body []string
	// sub runs one launch in a subshell between two markers on the job's
	// stderr: sbench reads them back to tell which step is running, and
	// for a step that left no bundle, how it ended and what it printed.
	sub := func(id string, lines ...string) string {
		all := append(append([]string(nil), pre...), lines...)
		return stepMarker(id, "begin", "") + "\n(\n  " + strings.Join(all, "\n  ") + "\n)\nsbench_rc=$?\n" +
			stepMarker(id, "end", ` rc=%s`) + "\n" + `[ "$sbench_rc" = 0 ] || rc=1`
	}
	// pair runs the launch of the ordered pair $a -> $b named launchID;
	// labels go before its plan, after at the end of its line.
	pair := func(launchID, labels, after string) string {
		return sub(launchID, `printf '%s\n' "$a" "$b" >"$sbench_hostfile"`, pairLaunch(c, st, runner, launchID, labels)+after)
	}
	id := strconv.Itoa(st.Index)
	switch st.Benchmark.Pairs {
	case "":
		launch := c.launchLine(st, st.Ranks, st.Nodes, st.PerNode, nil)
		nodes := count{n: st.Nodes}
		if st.rangeNodes() {
			nodes = count{expr: "$SLURM_JOB_NUM_NODES"}
		}
		body = append(body, sub(id, launch+" "+runner+planArgs(nodes, st.PerNode)+stepArgs(id)))
	case "both-directions":
		for _, ab := range [][2]string{{"0", "1"}, {"1", "0"}} {
			body = append(body, "a=${sbench_nodes["+ab[0]+"]} b=${sbench_nodes["+ab[1]+"]}", pair(id+"-${a}-${b}", "", ""))
		}
	case "all":
		body = append(body, `for a in "${sbench_nodes[@]}"; do`,
			`  for b in "${sbench_nodes[@]}"; do`,
			`    [ "$a" = "$b" ] && continue`,
			indent(pair(id+"-${a}-${b}", "", ""), "    "),
			"  done",
			"done")
	case "reference":
		// The first node is every pair's reference: an O(n) check of each
		// node's link, both ways, against the same end.
		body = append(body, `for x in "${sbench_nodes[@]:1}"; do`,
			`  for ab in "${sbench_nodes[0]} $x" "$x ${sbench_nodes[0]}"; do`,
			`    read -r a b <<<"$ab"`,
			indent(pair(id+"-${a}-${b}", "", ` --label "reference=${sbench_nodes[0]}"`), "    "),
			"  done",
			"done")
	case "intra-inter":
		intra := c.launchLine(st, 2, 1, 2, []string{`--nodelist="$a"`})
		body = append(body,
			"a=${sbench_nodes[0]} b=${sbench_nodes[1]}",
			sub(id+"-intra",
				intra+" "+runner+` --label "pair=${a}->${a}" --label placement=intra-node`+planArgs(count{n: 1}, 2)+stepArgs(id+"-intra")),
			pair(id+"-inter", " --label placement=inter-node", ""))
	}
	return Block{Comment: stepComment(st, c.Repeats(st.Benchmark)), Body: strings.Join(body, "\n")}
}

// StepMarker starts the lines the scripts write on the job's stderr around
// every launch:
//
//	sbench-step: 3-n1-n2 begin attempt=0 at=1733040000
//	sbench-step: 3-n1-n2 end attempt=0 at=1733040042 rc=1
//
// with the launch id (the runner's --step), Slurm's restart count and the
// Unix time; the end line adds the launcher's exit status (124 when the
// step's limit ended it).
const StepMarker = "sbench-step:"

// stepMarker is the printf that writes a marker; extra is more format
// text, whose one %s is $sbench_rc.
func stepMarker(id, what, extra string) string {
	args := `"${SLURM_RESTART_COUNT:-0}" "$(date +%s)"`
	if extra != "" {
		args += ` "$sbench_rc"`
	}
	return `printf '` + StepMarker + ` %s ` + what + ` attempt=%s at=%s` + extra + `\n' "` + id + `" ` + args + ` >&2`
}

// pairLaunch is the launch of one ordered pair $a -> $b, named launchID,
// with more runner labels.
func pairLaunch(c *Campaign, st Step, runner, launchID, labels string) string {
	return "SLURM_HOSTFILE=\"$sbench_hostfile\" " + c.launchLine(st, 2, 2, 1, []string{`--nodelist="$a,$b"`, "--distribution=arbitrary"}) +
		" " + runner + ` --label "pair=${a}->${b}"` + labels + planArgs(count{n: 2}, 1) + stepArgs(launchID)
}

// PlanArgs are the runner arguments that give it a launch's plan: its
// ranks on nodes nodes, at most perNode on each. Rank 0 makes a run whose
// ranks ran otherwise invalid.
func PlanArgs(nodes, perNode int) []string {
	a := runargs.Args{PlanNodes: &nodes, PlanPPN: &perNode}
	return a.Argv()[1:]
}

// planArgs is PlanArgs as script text, after a space; on a node range the
// node count is the job's.
func planArgs(nodes count, perNode int) string {
	return " " + renderWords([]word{lit("--plan-nodes"), nodes.option(""), lit("--plan-ppn"), lit(strconv.Itoa(perNode))})
}

// stepArgs names the launch: --step for the bundle's file name, --session
// for the rendezvous file (unique within the cluster: job id and step). id
// may hold the script's own ${a} and ${b}.
func stepArgs(id string) string {
	step := id
	if strings.Contains(id, "$") {
		step = `"` + id + `"`
	}
	return " --step " + step + ` --session "$SLURM_JOB_ID.` + id + `"`
}

// launchLine is the launcher's command line for a step (without the
// runner), as shell text, under timeout(1): a launcher still running
// its grace (GraceFor) after the step's limit is ended, whatever it is doing (an
// mpirun that hangs before the runner starts, say). Placement arguments
// (extra) are already shell text; everything else is quoted.
func (c *Campaign) launchLine(st Step, ranks, nodes, perNode int, extra []string) string {
	rc, nc := count{n: ranks}, count{n: nodes}
	if st.rangeNodes() {
		// The allocation decides the node count: take what it got.
		nc = count{expr: "$SLURM_JOB_NUM_NODES"}
		rc = count{expr: "$((SLURM_JOB_NUM_NODES * " + strconv.Itoa(perNode) + "))"}
	}
	words := st.launcherWords(rc, nc, perNode)
	step := cmp.Or(st.Limit, DefaultStepLimit)
	grace := GraceFor(step)
	limit := step + grace
	killer := "timeout --kill-after=" + strconv.Itoa(int(grace.Seconds())) + " " + strconv.Itoa(int(limit.Seconds())) + " "
	if launcherType(st.Config.Launcher) == "srun" {
		// Slurm ends the step too, and says so in the job's output.
		// srun's --time counts whole minutes: round up, never cut short.
		minutes := (limit + time.Minute - 1) / time.Minute
		i := slices.IndexFunc(words, func(w word) bool { return len(w) == 1 && w[0].s == "--kill-on-bad-exit=1" })
		words = slices.Insert(words, i+1, lit("--time="+formatSlurmTime(minutes*time.Minute)))
	}
	env := strings.Join(append(st.LauncherEnv(), ""), " ")
	return env + killer + insertExtra(renderWords(words), extra)
}

// rangeNodes reports whether the step runs on whatever number of nodes the
// job got (a node range), which the script knows only at run time.
func (st Step) rangeNodes() bool {
	return st.Config.Slurm.Nodes.IsRange() && st.Benchmark.Pairs == ""
}

// insertExtra puts placement arguments before srun's closing "--".
func insertExtra(line string, extra []string) string {
	if len(extra) == 0 {
		return line
	}
	if strings.HasSuffix(line, " --") {
		return strings.TrimSuffix(line, " --") + " " + strings.Join(extra, " ") + " --"
	}
	return line + " " + strings.Join(extra, " ")
}

func launcherType(l Launcher) string { return cmp.Or(l.Type, "srun") }

// Flavors of MPI launcher (Launcher.Flavor): whose mpirun or mpiexec it is.
const (
	// FlavorOpenMPI places K ranks per node with --map-by ppr:K:node.
	FlavorOpenMPI = "openmpi"
	// FlavorMPICH is Hydra's mpiexec (MPICH, MVAPICH): -ppn K.
	FlavorMPICH = "mpich"
	// FlavorIntelMPI is Intel MPI's Hydra: -ppn K, which inside a Slurm
	// job it honours only with I_MPI_JOB_RESPECT_PROCESS_PLACEMENT=0
	// (else it takes Slurm's tasks per node).
	FlavorIntelMPI = "intelmpi"
)

// Flavors lists the flavors a [launcher] may name.
var Flavors = []string{FlavorOpenMPI, FlavorMPICH, FlavorIntelMPI}

// placementOptions are the options of Open MPI's mpirun and of Hydra's
// (MPICH, Intel MPI, MVAPICH) that place ranks on nodes. Launcher args
// holding one place the ranks themselves: sbench then adds no mapping of
// its own, which would conflict with theirs (Open MPI 4.1 silently takes
// the last --map-by; Hydra refuses a second -ppn).
var placementOptions = map[string]bool{
	// Open MPI (4.x and 5.x)
	"--map-by": true, "-map-by": true, "--npernode": true, "-npernode": true, "-N": true,
	"--pernode": true, "-pernode": true, "--bynode": true, "-bynode": true, "--byslot": true, "-byslot": true,
	"--ppr": true, "-ppr": true, "--rankfile": true, "-rankfile": true, "-rf": true,
	"--host": true, "-host": true, "-H": true, "--hostfile": true, "-hostfile": true,
	"--machinefile": true, "-machinefile": true, "--default-hostfile": true,
	// Hydra
	"-ppn": true, "-perhost": true, "-hosts": true, "-f": true, "-machine": true,
	"-rr": true, "-grr": true, "-configfile": true,
}

// placementFlags are the placement options that take no value.
var placementFlags = map[string]bool{
	"--pernode": true, "-pernode": true, "--bynode": true, "-bynode": true, "--byslot": true, "-byslot": true, "-rr": true,
}

// PlacesRanks reports whether launcher args place ranks on nodes
// themselves (--map-by, -ppn, --npernode, -N, a host list …).
func PlacesRanks(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool {
		name, _, _ := strings.Cut(a, "=")
		return placementOptions[name]
	})
}

// perNodeArgs are the options that make an MPI launcher of flavor start
// perNode ranks on each node, filling the allocation's first nodes.
func perNodeArgs(flavor string, perNode int) []string {
	k := strconv.Itoa(perNode)
	switch flavor {
	case FlavorOpenMPI:
		return []string{"--map-by", "ppr:" + k + ":node"}
	case FlavorMPICH, FlavorIntelMPI:
		return []string{"-ppn", k}
	}
	return nil
}

// LauncherEnv is what the launcher's environment needs (NAME=VALUE) for
// the step's ranks to be placed as planned: Intel MPI's mpirun takes
// Slurm's tasks per node over -ppn unless told not to.
func (st Step) LauncherEnv() []string {
	l := st.Config.Launcher
	if launcherType(l) != "srun" && l.Flavor == FlavorIntelMPI {
		return []string{"I_MPI_JOB_RESPECT_PROCESS_PLACEMENT=0"}
	}
	return nil
}

// SbenchPlaces reports whether the step's launcher line places its ranks
// per node with its flavor's options: an MPI launcher whose flavor is
// known and whose args do not place the ranks themselves.
func (st Step) SbenchPlaces() bool {
	l := st.Config.Launcher
	return launcherType(l) != "srun" && l.Flavor != "" && !PlacesRanks(l.Args)
}

// LauncherArgv is the launcher's argv for ranks on nodes (perNode each):
// srun with counts, --mpi, the user's args and "--" before the runner;
// mpirun/mpiexec with -np, its flavor's per-node placement (unless the
// user's args place the ranks) and the user's args. {ranks}, {nodes} and
// {ppn} in the args are replaced.
func (st Step) LauncherArgv(ranks, nodes, perNode int) []string {
	words := st.launcherWords(count{n: ranks}, count{n: nodes}, perNode)
	// Counts are numbers: every word is one literal.
	return mapped(words, func(w word) string { return w[0].s })
}

// LocalLauncherArgv is an MPI launcher's argv for sbench local, which
// starts all ranks of a launch on this one host: -np ranks, the flavor's
// per-node placement of all of them on the one node, and the user's args
// less the options that place ranks on the cluster's nodes (a host list
// or file, a per-node count, a mapping: they cannot hold on one host, or
// would send ranks to other machines). dropped are those options and
// their values, as the campaign gives them.
func (st Step) LocalLauncherArgv(ranks int) (argv, dropped []string) {
	args := st.Config.Launcher.Args
	var kept []string
	for i := 0; i < len(args); i++ {
		name, _, inline := strings.Cut(args[i], "=")
		if !placementOptions[name] {
			kept = append(kept, args[i])
			continue
		}
		dropped = append(dropped, args[i])
		if !inline && !placementFlags[name] && i+1 < len(args) {
			i++
			dropped = append(dropped, args[i])
		}
	}
	st.Config.Launcher.Args = kept
	return st.LauncherArgv(ranks, 1, ranks), dropped
}

// launcherWords is LauncherArgv as words of a launch line, whose counts
// may be the script's expressions.
func (st Step) launcherWords(ranks, nodes count, perNode int) []word {
	l := st.Config.Launcher
	typ := launcherType(l)
	counts := map[string]count{"{ranks}": ranks, "{nodes}": nodes, "{ppn}": {n: perNode}}
	args := make([]word, len(l.Args))
	for i, a := range l.Args {
		args[i] = expandCounts(a, counts)
	}
	words := []word{lit(cmp.Or(l.Command, typ))}
	if typ == "srun" {
		words = append(words, nodes.option("--nodes="))
		if ranks.expr == "" {
			words = append(words, ranks.option("--ntasks="))
		}
		words = append(words, lit("--ntasks-per-node="+strconv.Itoa(perNode)))
		if l.MPI != "" {
			words = append(words, lit("--mpi="+l.MPI))
		}
		words = append(words, lit("--kill-on-bad-exit=1"))
		words = append(words, args...)
		return append(words, lit("--"))
	}
	words = append(words, lit("-np"), ranks.option(""))
	if st.SbenchPlaces() {
		for _, a := range perNodeArgs(l.Flavor, perNode) {
			words = append(words, lit(a))
		}
	}
	return append(words, args...)
}

// count is a rank or node count of a launch line: a number, or the
// script's expression of it (a node range's, known at run time).
type count struct {
	n    int
	expr string
}

// option is the word opt followed by the count.
func (c count) option(opt string) word {
	if c.expr == "" {
		return lit(opt + strconv.Itoa(c.n))
	}
	return word{{s: opt}, {s: c.expr, expr: true}}
}

// word is one word of a launch line: literal pieces, quoted when
// rendered, and the script's own expansions, rendered in double quotes.
type word []piece

type piece struct {
	s    string
	expr bool
}

func lit(s string) word { return word{{s: s}} }

// countRE finds the counts a launcher arg may hold.
var countRE = regexp.MustCompile(`\{(ranks|nodes|ppn)\}`)

// expandCounts replaces {ranks}, {nodes} and {ppn} in a launcher arg.
func expandCounts(a string, counts map[string]count) word {
	var w word
	text, last := "", 0
	for _, m := range countRE.FindAllStringIndex(a, -1) {
		text += a[last:m[0]]
		last = m[1]
		if c := counts[a[m[0]:m[1]]]; c.expr == "" {
			text += strconv.Itoa(c.n)
		} else {
			if text != "" {
				w = append(w, piece{s: text})
			}
			text = ""
			w = append(w, piece{s: c.expr, expr: true})
		}
	}
	text += a[last:]
	if text != "" || len(w) == 0 {
		w = append(w, piece{s: text})
	}
	return w
}

// renderWords writes words as shell text.
func renderWords(words []word) string {
	out := make([]string, len(words))
	for i, w := range words {
		var b strings.Builder
		for _, p := range w {
			switch {
			case p.expr:
				b.WriteString(`"` + p.s + `"`)
			case p.s != "" || len(w) == 1:
				b.WriteString(Quote(p.s))
			}
		}
		out[i] = b.String()
	}
	return strings.Join(out, " ")
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
