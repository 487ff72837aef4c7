#!/bin/sh
# escape.sh KIND GOFILE: starts descendants that leave the job's process
# group or session the way KIND says, prints "ready", then exits 0 once
# GOFILE exists (never, when it is never created).
#   setsid      setsid sleep &              (a new session, in the background)
#   doublefork  ( sleep & )                 (the subshell exits: an orphan)
#   setsid-f    setsid -f sleep             (setsid forks and returns)
#   daemon      a setsid'd shell that keeps stdout, prints "daemon-up" and
#               forks again before it sleeps
#   fork100     100 sleepers, each in its own session
#   churn       50 short-lived orphans (they exit at once)
kind=$1
gofile=$2
case $kind in
setsid) setsid sleep 301 & ;;
doublefork) ( sleep 302 & ) ;;
setsid-f) setsid -f sleep 303 ;;
daemon)
	setsid sh -c '(sleep 304 &); echo daemon-up; exec sleep 305' </dev/null &
	;;
fork100)
	i=0
	while [ "$i" -lt 100 ]; do
		setsid sleep 306 &
		i=$((i + 1))
	done
	;;
churn)
	i=0
	while [ "$i" -lt 50 ]; do
		(true &)
		i=$((i + 1))
	done
	;;
*)
	echo "escape.sh: unknown kind $kind" >&2
	exit 2
	;;
esac
echo ready
while [ ! -e "$gofile" ]; do
	sleep 0.05
done
exit 0
