#!/bin/sh
# print-bytes.sh N [STREAM]: prints N bytes (a repeating alphabet) fast to
# stdout, or to stderr when STREAM is "err", then exits 0.
if [ "${2:-out}" = err ]; then
	yes abcdefghijklmnopqrstuvwxyz | head -c "$1" >&2
else
	yes abcdefghijklmnopqrstuvwxyz | head -c "$1"
fi
