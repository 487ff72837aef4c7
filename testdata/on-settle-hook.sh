#!/bin/sh
# on-settle-hook.sh LOG DIR CODE: an on_settle hook for tests. Appends
# "JOB_ID STATE EXIT_CODE PATH" to LOG, copies the status JSON from stdin
# to DIR/JOB_ID.json, its own NoNewPrivs line to DIR/JOB_ID.privs and
# exits with CODE.
echo "$BGCMD_JOB_ID $BGCMD_STATE $BGCMD_EXIT_CODE $PATH" >> "$1"
cat > "$2/$BGCMD_JOB_ID.json"
grep NoNewPrivs /proc/self/status > "$2/$BGCMD_JOB_ID.privs"
exit "${3:-0}"
