#!/bin/sh
# fill-after.sh FLAG N: waits until FLAG exists, then prints N bytes (the
# repeating alphabet of print-bytes.sh) fast to stdout and exits 0. Jobs
# started with it all begin printing at once, after every start returned.
while [ ! -e "$1" ]; do sleep 0.05; done
yes abcdefghijklmnopqrstuvwxyz | head -c "$2"
