#!/usr/bin/env bash
# Reproduces the articles sbench was designed from, from their published
# outputs (testdata/, copied verbatim from the pages): ingests each file with
# the labels articles.tsv gives it — what the article says in words — and
# writes one report per article as reports.tsv says, as a PDF and as a
# self-contained HTML page.
#
#   000  InfiniBand vs Gigabit Ethernet: NetPIPE (NPib, NPmpi, NPtcp),
#        perf_main, and the two HPL runs whose residual checks FAILED (Korean)
#   002  osu_bw between two nodes, both directions (Japanese)
#   003  the OSU set on an OCI cluster: alltoall, latency, bandwidth,
#        allreduce (Japanese)
#   004  eRDMA vs TCP under sbatch: osu_latency and osu_bw (Japanese)
#
# Usage: examples/articles/make-reports.sh   (or: make articles)
# Environment: SBENCH (default: sbench in PATH), OUT (default:
# examples/articles/out). The titles are the articles' own, in Korean and
# Japanese: with fonts-nanum and fonts-ipafont-gothic installed (Debian) they
# render; FONT=FILE.ttf picks a font; without one the reports print '?' and
# say which font they need.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
SBENCH=${SBENCH:-sbench}
OUT=${OUT:-$here/out}
DB=$OUT/articles.db
mkdir -p "$OUT"
rm -f "$DB"

while IFS=$'\t' read -r article file labels; do
	case $article in '#'* | '') continue ;; esac
	args=(--label "article=$article")
	IFS=';' read -r -a kvs <<<"$labels"
	for kv in "${kvs[@]}"; do
		args+=(--label "$kv")
	done
	"$SBENCH" ingest --db "$DB" "${args[@]}" "$here/testdata/$file" >/dev/null
done <"$here/articles.tsv"

while IFS=$'\t' read -r article name group title; do
	case $article in '#'* | '') continue ;; esac
	args=(--label "article=$article" --title "$title")
	[ "$group" != "-" ] && args+=(--group-by "$group")
	[ -n "${FONT:-}" ] && args+=(--font "$FONT")
	"$SBENCH" report --db "$DB" "${args[@]}" -o "$OUT/$name.pdf"
	"$SBENCH" report --db "$DB" "${args[@]}" -o "$OUT/$name.html" >/dev/null
done <"$here/reports.tsv"

echo "reports in $OUT"
