#!/usr/bin/env bash
# Print $1 bytes of text on stdout and as many on stderr, in large writes.
set -eu  # no pipefail: yes ends on SIGPIPE when head has enough
n=${1:-1048576}
yes 'the quick brown fox jumps over the lazy dog 0123456789' | head -c "$n" &
yes 'a failing build logs a lot of lines before its verdict' | head -c "$n" >&2
wait
