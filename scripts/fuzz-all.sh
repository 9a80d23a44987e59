#!/usr/bin/env bash
# Runs every Go fuzz target of the module for the given time each (default 30s).
# go test -fuzz takes one target per run, so we list them first.
set -euo pipefail
fuzztime=${1:-30s}
cd "$(dirname "$0")/.."
failed=0
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    echo "== $pkg $target ($fuzztime)"
    if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"; then
      failed=1
    fi
  done
done
exit $failed
