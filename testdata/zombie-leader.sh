#!/bin/sh
# zombie-leader.sh: starts $ZOMBIE_LEADER (a program that keeps a thread
# sleeping and ends its main thread alone, with exit(2), not exit_group(2))
# as a descendant that leaves the job's session (setsid). The descendant
# runs on, while /proc shows it in its thread group leader's state: a
# zombie. Once that is so the script prints "leader PID", then waits for
# the file named by $1 to exist and exits 0.
pidfile="$1.pid"
BGCMD_TEST_ZOMBIE_LEADER="$pidfile" setsid "$ZOMBIE_LEADER" </dev/null >/dev/null 2>&1 &
while [ ! -s "$pidfile" ]; do
	sleep 0.01
done
pid=$(cat "$pidfile")
while [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
	sleep 0.01
done
echo "leader $pid"
while [ ! -e "$1" ]; do
	sleep 0.01
done
exit 0
