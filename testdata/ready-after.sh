#!/bin/sh
# ready-after.sh GATE STREAM MESSAGE RELEASE: prints "starting" on both
# streams, waits until GATE exists, prints MESSAGE on STREAM ("out" or
# "err"), then waits until RELEASE exists and exits 0. A GATE or RELEASE of
# "-" does not wait.
echo starting
echo starting >&2
if [ "$1" != - ]; then
	while [ ! -e "$1" ]; do sleep 0.02; done
fi
if [ "$2" = err ]; then
	echo "$3" >&2
else
	echo "$3"
fi
if [ "$4" != - ]; then
	while [ ! -e "$4" ]; do sleep 0.02; done
fi
echo finished
