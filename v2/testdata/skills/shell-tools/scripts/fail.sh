#!/usr/bin/env bash
# Report a failure on stderr and exit with the code given.
echo "about to fail with ${1:-3}"
echo "fatal: something went wrong" >&2
exit "${1:-3}"
