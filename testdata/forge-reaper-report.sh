#!/bin/sh
# forge-reaper-report.sh: writes a forged "job done, exit 0" report line to
# each descriptor from 3 to 9 it might hold (an in-process reaper's socket
# is its descriptor 3), prints "done" and exits 7.
line='{"pid":1,"done":true,"status":0}'
for fd in 3 4 5 6 7 8 9; do
	(printf '%s\n' "$line" >&"$fd") 2>/dev/null
done
echo done
exit 7
