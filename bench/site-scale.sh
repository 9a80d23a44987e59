#!/usr/bin/env bash
# Time and memory of `sbench site` on a site-sized archive (20,000 runs):
# a whole build into an empty directory, a second build with nothing new,
# and the nightly update after 10 new runs; each REPEAT times, medians
# printed. Fails when a median misses the targets: whole build < 60 s and
# < 300 MB peak RSS, update after 10 runs < 5 s.
#
# The archive: $ARCHIVE if set; else bench/archive-scale.sh's site-like
# archive of $RUNS runs (bench/sitearchive, imported with sbench archive
# import), when that script is there; else a synthetic one of $RUNS runs
# (bench/synthruns: three clusters measured nightly, a kernel upgrade that
# costs one a fifth of its bandwidth).
# The 10 new runs are the archive's latest 10, a day later
# (bench/synthruns -clone).
#
# Usage: bench/site-scale.sh [SBENCH]   (default: bin/sbench, built if absent)
# Environment: ARCHIVE, RUNS (default 20000), REPEAT (default 3), KEEP=1
# keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/.."
SBENCH=${1:-bin/sbench}
RUNS=${RUNS:-20000}
REPEAT=${REPEAT:-3}
if [ ! -x "$SBENCH" ]; then
	go build -o bin/sbench ./cmd/sbench
	SBENCH=bin/sbench
fi
W=$(mktemp -d)
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$W"' EXIT
go build -o "$W/synthruns" ./bench/synthruns

if [ -n "${ARCHIVE:-}" ]; then
	cp "$ARCHIVE" "$W/a.db"
	from="$ARCHIVE"
elif [ -x bench/archive-scale.sh ] && [ -d bench/sitearchive ]; then
	# archive-scale.sh's site-like archive, made as it makes it.
	go build -o "$W/sitearchive" ./bench/sitearchive
	"$W/sitearchive" -runs "$RUNS" -o "$W/a.sbench.gz"
	"$SBENCH" archive import --db "$W/a.db" "$W/a.sbench.gz" >/dev/null
	from="bench/sitearchive (bench/archive-scale.sh's), $RUNS runs"
else
	"$W/synthruns" -db "$W/a.db" -runs "$RUNS" >/dev/null
	from="bench/synthruns, $RUNS runs"
fi
cp "$W/a.db" "$W/b.db"
"$W/synthruns" -db "$W/b.db" -clone 10 >/dev/null
runs=$("$SBENCH" runs --db "$W/a.db" --json | grep -c '"id":' || true)

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# timed NAME ARGS…: runs sbench ARGS under /usr/bin/time, appends "secs kib".
timed() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$W/t" "$SBENCH" "$@" >"$W/out"
	cat "$W/t" >>"$W/$name"
	tail -1 "$W/out" >"$W/$name.last"
}
for _ in $(seq "$REPEAT"); do
	rm -rf "$W/site"
	timed full site --db "$W/a.db" -o "$W/site"
	timed again site --db "$W/a.db" -o "$W/site"
	cp -a "$W/site" "$W/site0"
	timed update site --db "$W/b.db" -o "$W/site"
	rm -rf "$W/site" && mv "$W/site0" "$W/site"
done
pages=$(find "$W/site" -name '*.html' | wc -l)
mb=$(du -sm "$W/site" | cut -f1)
echo "site-scale: archive $from: $runs runs; site $pages pages, $mb MB; medians of $REPEAT on $(nproc) cores"
fail=0
for name in full again update; do
	secs=$(cut -d' ' -f1 "$W/$name" | median)
	kib=$(cut -d' ' -f2 "$W/$name" | median)
	printf '  %-7s %7s s %8s KiB peak RSS   (%s)\n' "$name" "$secs" "$kib" "$(cat "$W/$name.last")"
	case $name in
	full)
		awk -v s="$secs" 'BEGIN { exit !(s < 60) }' || { echo "  whole build: $secs s, want < 60 s"; fail=1; }
		[ "$kib" -lt $((300 * 1000)) ] || { echo "  whole build: $kib KiB, want < 300 MB"; fail=1; }
		;;
	update)
		awk -v s="$secs" 'BEGIN { exit !(s < 5) }' || { echo "  update after 10 runs: $secs s, want < 5 s"; fail=1; }
		;;
	esac
done
exit $fail
