#!/bin/sh
# exit-with.sh CODE: prints a line on each stream and exits with CODE.
echo "out: exiting with $1"
echo "err: exiting with $1" >&2
exit "$1"
