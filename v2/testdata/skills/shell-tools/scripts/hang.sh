#!/usr/bin/env bash
# Print a line, then wait forever.
echo started
while true; do sleep 1; done
