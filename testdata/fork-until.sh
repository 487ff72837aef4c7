#!/bin/sh
# fork-until.sh N: starts up to N sleepers in the background, printing
# "forked I" after each, then "all forked", and exits 0. Under a process
# bound (pids.max) a fork fails first: the shell says so on stderr and
# exits non-zero; the sleepers it did start end with the job.
n=$1
i=0
while [ "$i" -lt "$n" ]; do
	sleep 308 &
	i=$((i + 1))
	echo "forked $i"
done
echo "all forked"
