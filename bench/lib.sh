# lib.sh — what the scripts in bench/ share. A script sources it after
# `set -euo pipefail`, from the repository's root or by its path:
#
#	. "$ROOT/bench/lib.sh"

# bench_sbench [SBENCH]: SBENCH is the sbench binary given, else
# bin/sbench, built if absent (run from the repository's root).
bench_sbench() {
	SBENCH=${1:-bin/sbench}
	if [ ! -x "$SBENCH" ]; then
		go build -o bin/sbench ./cmd/sbench
		SBENCH=bin/sbench
	fi
}

# bench_work NAME TOOL...: WORK, a directory removed on exit; PIDS, the
# processes the script started (it appends them), killed on exit and
# only those; die MESSAGE, which exits 2 naming NAME; and every TOOL
# installed, or die.
bench_work() {
	BENCH_NAME=$1
	shift
	WORK=$(mktemp -d)
	PIDS=()
	trap bench_cleanup EXIT
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null || die "$tool is not installed"
	done
}

bench_cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}

die() { echo "$BENCH_NAME: $*" >&2; exit 2; }

# median prints the median of the numbers on stdin, one a line.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
