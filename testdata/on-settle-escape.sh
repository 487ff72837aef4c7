#!/bin/sh
# on-settle-escape.sh DIR: an on_settle hook that leaves a descendant
# behind in a session of its own (setsid), which writes its pid to
# DIR/JOB_ID.pid and sleeps; the hook exits 0 once that file exists.
setsid sh -c 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1" && exec sleep 311' sh "$1/$BGCMD_JOB_ID.pid" \
	</dev/null >/dev/null 2>&1 &
while [ ! -e "$1/$BGCMD_JOB_ID.pid" ]; do
	sleep 0.01
done
exit 0
