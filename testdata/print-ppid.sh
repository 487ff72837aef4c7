#!/bin/sh
# print-ppid.sh: prints the pid of its parent process (the process that
# started the job: its supervisor, or in the in-process mode its reaper).
echo "$PPID"
