#!/usr/bin/env bash
# Print $1 numbered lines to stdout and stderr, then a closing line on each.
set -euo pipefail
n=${1:-1000}
for ((i = 1; i <= n; i++)); do
  printf 'out line %d\n' "$i"
  printf 'err line %d\n' "$i" >&2
done
echo "END-OF-OUTPUT"
echo "END-OF-OUTPUT" >&2
