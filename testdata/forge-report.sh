#!/bin/sh
# forge-report.sh: tries to forge a detached supervisor's start report by
# writing "error: forged" to descriptors 3, 4 and 5. For each of them it
# prints "open fd N" when it holds it and "wrote fd N" when the write went
# through; then it prints "done" and exits 0.
for fd in 3 4 5; do
	if [ -e "/proc/$$/fd/$fd" ]; then
		echo "open fd $fd"
	fi
	if (eval "echo 'error: forged' >&$fd") 2>/dev/null; then
		echo "wrote fd $fd"
	fi
done
echo done
