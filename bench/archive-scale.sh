#!/usr/bin/env bash
# Times sbench's archive commands on a site-like archive at two sizes, the
# way a user runs them, and prints wall time, CPU time (user + system: on a
# shared machine it varies far less than wall time does) and peak memory (from
# /usr/bin/time -v) per command and size, with the growth between sizes.
#
# The archive is bench/sitearchive's: three systems measured nightly from
# 2022 to 2025 (OSU point-to-point and allreduce wrapped by the runner, the
# runner's pairs and matrix kernels, HPL), three labels per run, a step
# change on two systems, failed and invalid runs; about 50 samples a run
# beside the site's screenings: about 2.9k matrix runs of 16 nodes in 20k
# runs (480 samples each; MATRIX_NODES=24 makes them 24 nodes, 1,104).
# It is built with the real CLI: "sbench archive import" of the generated
# archive file (that import is one of the timed commands), and "sbench
# ingest" of the same runs as bundle files is timed on its own.
#
# Usage: bench/archive-scale.sh [-r REPEATS] [-s "5000 20000"] [-k DIR] [SBENCH]
#   -r  runs of each command, the median is printed (default 3)
#   -s  archive sizes in runs (default "5000 20000"); growth is last/first
#   -k  keep the generated archives and databases in DIR (reused next time)
#   SBENCH defaults to bin/sbench, built if absent.
# The machine should be quiet: other processes on its cores make every
# figure slower and noisier (the load average is printed with the table).
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=3
SIZES="5000 20000"
KEEP=""
while getopts "r:s:k:" opt; do
	case $opt in
	r) REPEATS=$OPTARG ;;
	s) SIZES=$OPTARG ;;
	k) KEEP=$OPTARG ;;
	*) sed -n '2,23p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
SBENCH=${1:-bin/sbench}
if [ ! -x "$SBENCH" ]; then
	go build -o bin/sbench ./cmd/sbench
	SBENCH=bin/sbench
fi
SBENCH=$(realpath "$SBENCH")
[ -x /usr/bin/time ] || { echo "archive-scale: needs /usr/bin/time (Debian: apt-get install time)" >&2; exit 2; }
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP"
	W=$(realpath "$KEEP")
else
	W=$(mktemp -d)
	trap 'rm -rf "$W"' EXIT
fi
GEN="$W/sitearchive"
go build -o "$GEN" ./bench/sitearchive

# measure NAME SIZE CMD...: runs CMD $REPEATS times (stdout to $W/out),
# records the median wall time, CPU time (user + system) and peak RSS as
# "$NAME $SIZE SECS KIB CPUSECS".
# Exit status 1 is a result (compare found a regression), not a failure.
measure() {
	local name=$1 size=$2
	shift 2
	local i secs=() kibs=() cpus=()
	for ((i = 0; i < REPEATS; i++)); do
		[ -n "${PREP:-}" ] && eval "$PREP"
		local rc=0
		/usr/bin/time -v -o "$W/time" "$@" >"$W/out" 2>"$W/err" || rc=$?
		if [ "$rc" -gt 1 ]; then
			echo "archive-scale: $name ($size runs) failed with status $rc:" >&2
			cat "$W/err" >&2
			exit 1
		fi
		secs+=("$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s }' "$W/time")")
		kibs+=("$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$W/time")")
		cpus+=("$(awk -F': ' '/(User|System) time \(seconds\)/ { s += $2 } END { print s }' "$W/time")")
	done
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$size" "$(median "${secs[@]}")" "$(median "${kibs[@]}")" "$(median "${cpus[@]}")" >>"$W/results"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# note NAME SIZE TEXT: what a command produced (pages, tables, rate).
note() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$W/notes"; }

rm -f "$W/results" "$W/notes"
for n in $SIZES; do
	A="$W/site-$n.sbench.gz"
	[ -s "$A" ] || "$GEN" -runs "$n" -matrix-nodes "${MATRIX_NODES:-16}" -o "$A"
	[ -d "$W/bundles-$n" ] || "$GEN" -runs "$n" -matrix-nodes "${MATRIX_NODES:-16}" -dir "$W/bundles-$n"
	DB="$W/site-$n.db"

	PREP="rm -f '$W/import.db' '$W/import.db-wal' '$W/import.db-shm'" \
		measure "archive import" "$n" "$SBENCH" archive import --db "$W/import.db" "$A"
	rm -f "$DB" "$DB-wal" "$DB-shm"
	mv "$W/import.db" "$DB"

	PREP="rm -f '$W/ingest.db' '$W/ingest.db-wal' '$W/ingest.db-shm'" \
		measure "ingest" "$n" "$SBENCH" ingest --db "$W/ingest.db" "$W/bundles-$n"
	samples=$(sqlite3 "$DB" "SELECT count(*) FROM samples")
	note "ingest" "$n" "$n/$samples"

	measure "report" "$n" "$SBENCH" report --db "$DB" -o "$W/report-$n.pdf"
	note "report" "$n" "$(pdfinfo "$W/report-$n.pdf" | awk '/^Pages:/ { print $2 }') pages"

	measure "compare" "$n" "$SBENCH" compare --db "$DB" system=alpha system=beta
	note "compare" "$n" "$(grep -c ' · ' "$W/out" || true) tables, $(wc -l <"$W/out") lines"

	measure "runs" "$n" "$SBENCH" runs --db "$DB"
	measure "export" "$n" "$SBENCH" export --db "$DB" --format csv
	measure "archive export" "$n" "$SBENCH" archive export --db "$DB" -o "$W/export-$n.sbench.gz"
	measure "history" "$n" "$SBENCH" history --db "$DB" --benchmark osu_bw --metric bandwidth --x 4MiB \
		--label system=alpha --variant inter --config mpi=openmpi-4.1.6
done

# The table: one line per command, a column per size, then the growth.
awk -F'\t' -v sizes="$SIZES" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" '
FILENAME ~ /notes$/ { note[$1, $2] = $3; next }
{
	secs[$1, $2] = $3; kib[$1, $2] = $4; cpu[$1, $2] = $5
	if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
}
END {
	ns = split(sizes, s, " ")
	printf "| command |"
	for (j = 1; j <= ns; j++) printf " %s runs |", s[j]
	printf " growth |\n|---|"
	for (j = 1; j <= ns; j++) printf "---|"
	printf "---|\n"
	for (i = 1; i <= n; i++) {
		k = order[i]
		printf "| `%s` |", k
		for (j = 1; j <= ns; j++) {
			extra = ""
			if ((k, s[j]) in note) {
				if (k == "ingest") {
					split(note[k, s[j]], rs, "/")
					extra = sprintf(", %.0f files/s, %.0fk samples/s", rs[1] / secs[k, s[j]], rs[2] / secs[k, s[j]] / 1000)
				} else {
					extra = ", " note[k, s[j]]
				}
			}
			printf " %.2f s (CPU %.2f s) / %.0f MB%s |", secs[k, s[j]], cpu[k, s[j]], kib[k, s[j]] / 1024, extra
		}
		a = s[1]; b = s[ns]
		printf " %.1f× (CPU %.1f×) / %.1f× |\n", secs[k, b] / secs[k, a], cpu[k, b] / cpu[k, a], kib[k, b] / kib[k, a]
	}
	printf "\n(median of %d runs of each command; load average at the end: %s)\n", repeats, load
}' repeats="$REPEATS" "$W/notes" "$W/results"
