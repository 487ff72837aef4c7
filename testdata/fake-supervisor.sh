#!/bin/sh
# fake-supervisor.sh: stands in for the bgcmd binary as a detached
# supervisor that misbehaves (it is run as "fake-supervisor.sh
# __supervise"): it reads its spec from descriptor 3, writes a start report
# (descriptor 4) and a log line (stderr) full of terminal control sequences,
# and exits 1.
read -r store <&3; read -r job <&3 # the two lines of the hand-over
printf 'error: \033]0;owned\007\033[2Jreport\r\033[31m red\tline\n' >&4
printf 'log \033[2J\033]0;owned\007line one\r\nline\010 two\n' >&2
exit 1
