#!/bin/sh
# print-then-wait.sh GO N RELEASE: waits until GO exists, prints N bytes (the
# repeating alphabet of print-bytes.sh) to stdout, then waits until RELEASE
# exists and exits 0. The test decides when each job writes and how much,
# and nothing more comes from a job that has printed until it is released.
while [ ! -e "$1" ]; do sleep 0.05; done
yes abcdefghijklmnopqrstuvwxyz | head -c "$2"
while [ ! -e "$3" ]; do sleep 0.05; done
