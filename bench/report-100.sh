#!/usr/bin/env bash
# Times `sbench report` on a synthetic archive that makes a 100-figure
# report, the way a user runs it: the same campaign as the reports package's
# BenchmarkReport100Figures (20 point-to-point benchmarks × 4 configurations
# × 3 repeats: bandwidth, latency and its small-message zoom = 60 figures;
# 10 allreduce benchmarks at 8 and 16 ranks: latency, zoom and scaling = 30;
# 5 node-pair matrices of 8 nodes: 10 heatmaps), written as result bundles,
# ingested into SQLite, then reported.
#
# Usage: bench/report-100.sh [SBENCH]   (default: bin/sbench, built if absent)
# Prints the report's wall time, peak memory, size and page count; fails if
# the report takes 2 s or more or is 5 MB or more.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_sbench "$@"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/bundles"

# One bundle (JSON) per run. Sizes 1 B … 4 MiB; a link with a start-up
# latency and an asymptotic rate, as every ping-pong curve looks.
awk -v dir="$W/bundles" 'BEGIN {
	split("n01 n02 n03 n04 n05 n06 n07 n08", node, " ")
	id = 0
	for (f = 0; f < 20; f++) for (v = 0; v < 4; v++) for (rep = 0; rep < 3; rep++) {
		lat0 = 1 + v; bw = 1000 * (v + 1); jit = 1 + 0.02 * (rep - 1)
		s = ""
		for (k = 0; k <= 22; k++) {
			x = 2 ^ k; l = (lat0 + x / bw) * jit
			s = s sprintf("%s{\"metric\":\"latency\",\"unit\":\"us\",\"x\":%d,\"x_unit\":\"bytes\",\"value\":%.4f,\"repeat\":%d},", "", x, l, rep)
			s = s sprintf("{\"metric\":\"bandwidth\",\"unit\":\"MB/s\",\"x\":%d,\"x_unit\":\"bytes\",\"value\":%.4f,\"repeat\":%d},", x, x / l, rep)
		}
		emit(sprintf("bench-%02d", f), "pingpong", "variant-" v, 2, rep, s)
	}
	for (f = 0; f < 10; f++) for (n = 8; n <= 16; n += 8) {
		s = ""
		for (k = 3; k <= 16; k++) {
			x = 2 ^ k
			s = s sprintf("{\"metric\":\"latency\",\"unit\":\"us\",\"x\":%d,\"x_unit\":\"bytes\",\"value\":%.4f},", x, n * 0.4 + x / 3000)
		}
		emit(sprintf("allreduce-%02d", f), "allreduce", "ppn=auto", n, 0, s)
	}
	for (f = 0; f < 5; f++) {
		s = ""
		for (a = 1; a <= 8; a++) for (b = 1; b <= 8; b++) if (a != b) {
			tags = sprintf("\"tags\":{\"from\":\"%s\",\"to\":\"%s\"}", node[a], node[b])
			s = s sprintf("{\"metric\":\"matrix_bandwidth\",\"unit\":\"MB/s\",\"value\":%d,%s},", 12000 - 37 * a - 11 * b, tags)
			s = s sprintf("{\"metric\":\"matrix_latency\",\"unit\":\"us\",\"value\":%.2f,%s},", 1.5 + 0.01 * a * b, tags)
		}
		emit(sprintf("matrix-%d", f), "matrix", "ppn=1", 8, 0, s)
	}
}
function emit(bench, kernel, variant, tasks, rep, samples,   file) {
	id++
	file = sprintf("%s/run-%04d.json", dir, id)
	printf "{\"schema\":\"sbench.result/v1\",\"campaign\":\"bench100\",\"variant\":\"%s\",\"params\":{\"repeat\":\"%d\"},", variant, rep > file
	printf "\"job\":{\"id\":\"%d\",\"step\":\"0\",\"nodes\":[\"n01\",\"n02\"],\"tasks\":%d},", 1000 + id, tasks > file
	printf "\"start\":\"2025-03-01T10:%02d:%02dZ\",\"end\":\"2025-03-01T10:%02d:%02dZ\",", int(id / 60) % 60, id % 60, int(id / 60) % 60, id % 60 > file
	printf "\"hosts\":[{\"hostname\":\"n01\",\"cpu_model\":\"Xeon Gold 6338\",\"cores\":64,\"ib\":[{\"device\":\"mlx5_0\",\"port\":1,\"state\":\"ACTIVE\",\"rate\":\"100 Gb/sec (2X HDR)\",\"rate_gbps\":100}]}," > file
	printf "{\"hostname\":\"n02\",\"cpu_model\":\"Xeon Gold 6338\",\"cores\":64,\"ib\":[{\"device\":\"mlx5_0\",\"port\":1,\"state\":\"ACTIVE\",\"rate\":\"100 Gb/sec (2X HDR)\",\"rate_gbps\":100}]}]," > file
	printf "\"benchmark\":{\"name\":\"%s\",\"kind\":\"native\",\"kernel\":\"%s\"},\"status\":\"ok\",", bench, kernel > file
	sub(/,$/, "", samples)
	printf "\"samples\":[%s]}\n", samples > file
	close(file)
}'

"$SBENCH" ingest --db "$W/a.db" "$W/bundles" >/dev/null
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f '%e %M' -o "$W/time" "$SBENCH" report --db "$W/a.db" -o "$W/r.pdf" >"$W/out"
	read -r secs kib <"$W/time"
else
	start=$(date +%s.%N)
	"$SBENCH" report --db "$W/a.db" -o "$W/r.pdf" >"$W/out"
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	kib="?"
fi
bytes=$(stat -c %s "$W/r.pdf")
figures=$(sed -n 's/.* \([0-9]*\) figures.*/\1/p' "$W/out")
pages=$(pdfinfo "$W/r.pdf" 2>/dev/null | awk '/^Pages:/{print $2}')
echo "report-100: ${figures} figures, ${pages:-?} pages, ${bytes} bytes, ${secs} s, ${kib} KiB peak RSS"
[ "$figures" = 100 ] || { echo "want 100 figures"; exit 1; }
awk -v s="$secs" 'BEGIN { exit !(s < 2) }' || { echo "slower than 2 s"; exit 1; }
[ "$bytes" -lt $((5 * 1000 * 1000)) ] || { echo "larger than 5 MB"; exit 1; }
