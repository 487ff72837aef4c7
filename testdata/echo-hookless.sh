#!/bin/sh
# echo-hookless.sh: stands in for the bgcmd binary as a detached supervisor
# (run as "echo-hookless.sh __supervise"): it reads the two lines of its
# hand-over from descriptor 3 and logs, on stderr, the spec's "hookless"
# field as it came (nothing when it is absent), then exits 1 without a
# start report: the host relays the log in the start's error.
read -r store <&3; read -r job <&3
printf 'spec: %s\n' "$(printf '%s' "$job" | grep -o '"hookless":[a-z]*')" >&2
exit 1
