#!/bin/sh
# big-then-ready.sh N MESSAGE: prints N bytes of 1000-byte lines, then
# MESSAGE on a line of its own, and exits 0.
line=$(printf '%0999d' 0)
yes "$line" | head -c "$1"
echo
echo "$2"
