#!/bin/sh
# fake-supervisor-silent.sh: stands in for the bgcmd binary as a detached
# supervisor that reads its spec from descriptor 3, logs a line full of
# terminal control sequences to stderr and exits 1 without a start report.
read -r store <&3; read -r job <&3 # the two lines of the hand-over
printf 'log \033[2J\033]0;owned\007line one\r\nline\010 two\n' >&2
exit 1
