#!/bin/sh
# kill-self.sh SIGNAL: prints a line, then sends SIGNAL to itself.
echo "about to receive $1"
kill -s "$1" $$
sleep 5
