#!/usr/bin/env bash
# Print each argument on its own line, bracketed, so spacing and quoting are visible.
for a in "$@"; do printf '[%s]\n' "$a"; done
