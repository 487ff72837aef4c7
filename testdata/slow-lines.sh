#!/bin/sh
# slow-lines.sh N DELAY: prints "line I" N times, sleeping DELAY seconds
# between lines, then "done".
i=1
while [ "$i" -le "$1" ]; do
	echo "line $i"
	sleep "$2"
	i=$((i + 1))
done
echo done
