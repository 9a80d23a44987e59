#!/usr/bin/env bash
# Size and time of the HTML reports of `make articles` (the articles'
# published outputs, examples/articles): each report written as a PDF and as
# an HTML page, REPEAT times; prints the median time, peak RSS and size of
# each, and fails if the 004 reproduction's page is 1 MB or more.
#
# Usage: bench/html-report.sh [SBENCH]   (default: bin/sbench, built if absent)
# Environment: REPEAT (default 5).
set -euo pipefail
cd "$(dirname "$0")/.."
SBENCH=${1:-bin/sbench}
REPEAT=${REPEAT:-5}
if [ ! -x "$SBENCH" ]; then
	go build -o bin/sbench ./cmd/sbench
	SBENCH=bin/sbench
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
SBENCH=$SBENCH OUT=$W examples/articles/make-reports.sh >/dev/null

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-30s %-5s %10s %8s %9s\n' report format bytes "s (med)" "RSS KiB"
while IFS=$'\t' read -r article name group title; do
	case $article in '#'* | '') continue ;; esac
	args=(--db "$W/articles.db" --label "article=$article" --title "$title")
	[ "$group" != "-" ] && args+=(--group-by "$group")
	for fmt in pdf html; do
		: >"$W/times"
		for _ in $(seq "$REPEAT"); do
			/usr/bin/time -f '%e %M' -o "$W/t" "$SBENCH" report "${args[@]}" -o "$W/$name.$fmt" >/dev/null
			cat "$W/t" >>"$W/times"
		done
		secs=$(cut -d' ' -f1 "$W/times" | median)
		kib=$(cut -d' ' -f2 "$W/times" | median)
		printf '%-30s %-5s %10d %8s %9s\n' "$name" "$fmt" "$(stat -c %s "$W/$name.$fmt")" "$secs" "$kib"
	done
done <examples/articles/reports.tsv
size=$(stat -c %s "$W/004-erdma-vs-tcp.html")
[ "$size" -lt $((1000 * 1000)) ] || { echo "004's HTML report is $size bytes: want under 1 MB"; exit 1; }
