#!/bin/sh
# zombie-leader.sh: starts a descendant that leaves the job's session
# (setsid), keeps a thread sleeping and ends its main thread alone (exit(2),
# not exit_group(2)). The descendant runs on, while /proc shows it in its
# thread group leader's state: a zombie. Once that is so the script prints
# "leader PID", then waits for the file named by $1 to exist and exits 0.
#
# zombie-leader.sh --main: the job's main process itself does so, after
# printing "leader PID"; its thread sleeps.
if [ "$1" = --main ]; then
	exec perl -Mthreads -e '
		use POSIX ();
		$| = 1;
		print "leader $$\n";
		threads->create(sub { sleep 1000 })->detach;
		my $exit = (POSIX::uname())[4] eq "aarch64" ? 93 : 60;
		syscall($exit, 0); # SYS_exit: this thread only
	'
fi
pidfile="$1.pid"
setsid perl -Mthreads -e '
	use POSIX ();
	threads->create(sub { sleep 1000 })->detach;
	open(my $f, ">", "$ARGV[0].tmp") or die "$ARGV[0]: $!";
	print $f "$$\n";
	close($f);
	rename("$ARGV[0].tmp", $ARGV[0]) or die "$ARGV[0]: $!";
	my $exit = (POSIX::uname())[4] eq "aarch64" ? 93 : 60;
	syscall($exit, 0); # SYS_exit: this thread only
' "$pidfile" </dev/null >/dev/null 2>&1 &
while [ ! -s "$pidfile" ]; do
	sleep 0.01
done
pid=$(cat "$pidfile")
while [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]; do
	sleep 0.01
done
echo "leader $pid"
while [ ! -e "$1" ]; do
	sleep 0.01
done
exit 0
