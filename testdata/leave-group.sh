#!/bin/sh
# leave-group.sh: the job's main process moves itself out of the
# process group bgcmd made for it, into its parent's (the reaper's or the
# detached supervisor's: same session, so setpgid allows it), prints
# "moved PGID" and sleeps. Every signal bgcmd sends to the job's group then
# misses it.
exec perl -e '
	use POSIX ();
	my $pg = getpgrp(getppid());
	setpgrp(0, $pg) or die "setpgid: $!";
	$| = 1;
	print "moved ", getpgrp(0), "\n";
	sleep 1000;
'
