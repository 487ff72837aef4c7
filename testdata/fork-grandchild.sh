#!/bin/sh
# fork-grandchild.sh: leaves a sleeping grandchild in its process group,
# prints the grandchild's pid, and exits 0.
sleep 1000 &
echo "$!"
exit 0
