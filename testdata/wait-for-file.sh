#!/bin/sh
# wait-for-file.sh PATH CODE: says it is waiting, waits until PATH exists,
# prints "done" and exits with CODE.
echo waiting
while [ ! -e "$1" ]; do sleep 0.05; done
echo done
exit "${2:-0}"
