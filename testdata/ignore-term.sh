#!/bin/sh
# ignore-term.sh: ignores SIGTERM, says it is ready, then runs until killed.
trap '' TERM
echo ready
while :; do sleep 1; done
