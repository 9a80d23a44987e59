#!/bin/bash
# lu-vs-hpcc.sh — the native HPL kernel (package hpl/lu, pure Go + Go
# assembly, no cgo) next to HPCC's HPL linked with OpenBLAS, on this
# machine, at the same N, in the same run (issue 6).
#
# For each N in NS (default "3000 6000"), ROUNDS times (default 3), the
# runs interleaved so that a noisy neighbour hits all of them alike:
#
#   hpcc   mpirun -np NP hpcc, HPL on a 1×NP grid with NB=128: ONE system
#          of order N solved by NP ranks, one core each. Its HPL Gflops
#          (HPL_Tflops × 1000). OpenBLAS single-threaded.
#   same   our kernel, ONE system of order N solved by one process with NP
#          goroutines: the same problem on the same cores. The headline.
#   ep     our kernel as the runner's hpl kernel runs it with NP ranks on a
#          node ("EP", like HPCC's Star runs): NP processes, one goroutine
#          and one core each (taskset), each solving its own system of
#          order N at the same time; Gflops summed.
#
# Both count HPL's flops, 2/3·N³ + 3/2·N², over the factorization and
# solve; both check HPL's scaled residual (< 16), and a failed check is a
# failed run. The ratios are of the medians over the rounds; the best
# figures are shown too.
#
# HPCC with the reference BLAS (Debian's default libblas.so.3) would be no
# yardstick, so hpcc is run on OpenBLAS: the system's if libblas.so.3 is
# OpenBLAS, else OPENBLAS_DIR (a directory with OpenBLAS's libblas.so.3),
# else an installed but not selected /usr/lib/*/openblas-*/, else
# Debian's libopenblas0-serial fetched with `apt-get download` and
# unpacked under ~/.cache/sbench (nothing is installed; hpcc gets it by
# LD_LIBRARY_PATH). BLAS=reference runs hpcc as it is, for information.
#
# Target: same and ep >= TARGET (0.5) × hpcc, at every N.
#
# Measured on the 2-core AMD EPYC (Zen 5, AVX-512) development VM, medians
# of 3 rounds, Gflops (hpcc with Debian's OpenBLAS 0.3.21 serial):
#
#   N=3000   hpcc 75.5   same 109.5 (1.45×)   ep 123.0 (1.63×)
#   N=6000   hpcc 86.0   same 143.4 (1.67×)   ep 154.7 (1.80×)
# Exit status: 0 when every target is met, 1 when one is missed, 2 when a
# tool is missing or a run failed. Starts nothing but its own processes,
# and kills only those.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
NS=${NS:-"3000 6000"}
ROUNDS=${ROUNDS:-3}
NP=${NP:-2}
HPCC_NB=128
TARGET=${TARGET:-0.5}
. "$ROOT/bench/lib.sh"
bench_work lu-vs-hpcc hpcc mpirun go

cd "$ROOT"
# The runner must stay cgo-free with the kernel in it.
CGO_ENABLED=0 go build -o "$WORK/sbench-runner" ./cmd/sbench-runner || die "CGO_ENABLED=0 build of sbench-runner"
CGO_ENABLED=0 go build -o "$WORK/lu" ./bench/lu || die "build bench/lu"

# --- which BLAS hpcc runs on -------------------------------------------
HPCC_ENV=()
blas=$(readlink -f "$(ldd "$(command -v hpcc)" | awk '$1 ~ /^libblas\.so/ { print $3; exit }')")
if [ "${BLAS:-openblas}" = reference ]; then
	blas_name="as installed ($blas)"
elif [[ $blas == *openblas* ]]; then
	blas_name="OpenBLAS, the system's ($blas)"
else
	dir=${OPENBLAS_DIR:-}
	if [ -z "$dir" ]; then
		dir=$(dirname "$(ls /usr/lib/*/openblas-*/libblas.so.3 2>/dev/null | head -1)" 2>/dev/null || true)
		[ "$dir" = . ] && dir=
	fi
	if [ -z "$dir" ]; then
		cache=${XDG_CACHE_HOME:-$HOME/.cache}/sbench/openblas
		if [ -z "$(find "$cache" -path '*openblas*' -name libblas.so.3 2>/dev/null | head -1)" ]; then
			command -v apt-get >/dev/null || die "hpcc uses $blas, not OpenBLAS, and there is no apt-get to fetch it: set OPENBLAS_DIR"
			echo "hpcc uses $blas; fetching Debian's libopenblas0-serial into $cache (nothing is installed)"
			(cd "$WORK" && apt-get download libopenblas0-serial >/dev/null 2>&1) || die "apt-get download libopenblas0-serial failed: set OPENBLAS_DIR"
			mkdir -p "$cache"
			dpkg-deb -x "$WORK"/libopenblas0-serial_*.deb "$cache" || die "unpack libopenblas0-serial"
		fi
		dir=$(dirname "$(find "$cache" -path '*openblas*' -name libblas.so.3 | head -1)")
	fi
	[ -e "$dir/libblas.so.3" ] || die "no libblas.so.3 in $dir"
	HPCC_ENV=(-x "LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
	blas_name="OpenBLAS from $dir"
fi

# hpccinf N -> hpccinf.txt: HPL on a 1×NP grid, HPCC's usual settings.
hpccinf() {
	cat <<EOF
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
$1         Ns
1            # of NBs
$HPCC_NB          NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
1            Ps
$NP            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                      		Number of additional problem sizes for PTRANS
1200 10000 30000        	values of N
0                       	number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64       	values of NB
EOF
}

# The helpers below write their figure to stdout; call them with a
# redirection, not in $(...), so that PIDS reaches the trap.

# hpcc_gflops N -> HPCC's HPL Gflops
hpcc_gflops() {
	local d="$WORK/hpcc-$1"
	rm -rf "$d" && mkdir -p "$d"
	hpccinf "$1" >"$d/hpccinf.txt"
	(cd "$d" && timeout 1800 mpirun --allow-run-as-root --oversubscribe -np "$NP" \
		-x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "${HPCC_ENV[@]}" hpcc >"$d/stdout" 2>&1) &
	local pid=$!
	PIDS+=("$pid")
	wait "$pid" || { tail -20 "$d/stdout" >&2; die "hpcc at N=$1 failed"; }
	grep -q '\.\.\.\.\.\. PASSED' "$d/hpccoutf.txt" || die "hpcc at N=$1: HPL's residual check did not pass (see $d/hpccoutf.txt)"
	awk -F= '/^HPL_Tflops=/ { printf "%.3f\n", $2 * 1000; found = 1 } END { exit !found }' "$d/hpccoutf.txt" ||
		die "hpcc at N=$1: no HPL_Tflops in hpccoutf.txt"
}

# lu_same N -> our Gflops, one process with NP goroutines
lu_same() {
	"$WORK/lu" -n "$1" -threads "$NP" >"$WORK/same.out" || die "our kernel at N=$1 failed: $(cat "$WORK/same.out")"
	awk '{ print $6 }' "$WORK/same.out"
}

# lu_ep N -> our Gflops summed over NP processes, one core each
lu_ep() {
	local pids=() i
	for i in $(seq 0 $((NP - 1))); do
		local pin=()
		command -v taskset >/dev/null && pin=(taskset -c "$((i % $(nproc)))")
		"${pin[@]}" "$WORK/lu" -n "$1" -threads 1 >"$WORK/ep.$i" &
		pids+=($!)
		PIDS+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || die "our kernel at N=$1, process $i, failed: $(cat "$WORK/ep.$i")"
	done
	cat "$WORK"/ep.* | awk '{ s += $6 } END { printf "%.3f\n", s }'
}

best() { sort -g | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "hpcc: $NP ranks, P=1 Q=$NP, NB=$HPCC_NB; BLAS: $blas_name"
echo "ours: $("$WORK/lu" -n 8 | awk '{ print "micro-kernel " $4 ", NB " $2 }'); rounds: $ROUNDS"
status=0
for n in $NS; do
	echo
	printf '%-6s %12s %12s %12s   (Gflops, N=%d)\n' round hpcc same ep "$n"
	: >"$WORK/h" && : >"$WORK/s" && : >"$WORK/e"
	for r in $(seq 1 "$ROUNDS"); do
		hpcc_gflops "$n" >"$WORK/r.h"
		lu_same "$n" >"$WORK/r.s"
		lu_ep "$n" >"$WORK/r.e"
		printf '%-6s %12s %12s %12s\n' "$r" "$(cat "$WORK/r.h")" "$(cat "$WORK/r.s")" "$(cat "$WORK/r.e")"
		cat "$WORK/r.h" >>"$WORK/h" && cat "$WORK/r.s" >>"$WORK/s" && cat "$WORK/r.e" >>"$WORK/e"
	done
	h=$(median <"$WORK/h") s=$(median <"$WORK/s") e=$(median <"$WORK/e")
	printf '%-6s %12s %12s %12s\n' median "$h" "$s" "$e"
	printf '%-6s %12s %12s %12s\n' best "$(best <"$WORK/h")" "$(best <"$WORK/s")" "$(best <"$WORK/e")"
	for mode in same ep; do
		v=$s
		[ $mode = ep ] && v=$e
		rt=$(ratio "$v" "$h")
		if awk -v r="$rt" -v t="$TARGET" 'BEGIN { exit !(r >= t) }'; then verdict=met; else verdict=MISSED; status=1; fi
		printf 'N=%d %-4s: ours %s / hpcc %s Gflops = %s (target >= %s): %s\n' "$n" "$mode" "$v" "$h" "$rt" "$TARGET" "$verdict"
	done
done
exit $status
