//go:build linux

package runner

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// zombieReaper reaps, while a job runs, the orphans that came back to this
// subreaper and exited, so a job that keeps daemonizing short-lived
// processes does not fill the process table with zombies until it ends. It
// waits only for specific pids, never the main process (os/exec waits for
// that one).
type zombieReaper struct {
	main int
	sigs chan os.Signal
	quit chan struct{}
	done chan struct{}
	mu   sync.Mutex
	sum  usageSum
}

// startZombieReaper begins reaping exited children other than main on
// every SIGCHLD.
func startZombieReaper(main int) *zombieReaper {
	z := &zombieReaper{main: main, sigs: make(chan os.Signal, 1), quit: make(chan struct{}), done: make(chan struct{})}
	signal.Notify(z.sigs, syscall.SIGCHLD)
	go func() {
		defer close(z.done)
		for {
			select {
			case <-z.sigs:
				z.reapExited()
			case <-z.quit:
				return
			}
		}
	}()
	return z
}

// reapExited waits for the exited children of this process, one by one,
// until none is left or the one waitid names is main (os/exec reaps that;
// any other left then is reaped when the job ends). It never reads /proc.
func (z *zombieReaper) reapExited() {
	for {
		pid := exitedChild()
		if pid <= 0 || pid == z.main {
			return
		}
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, &ru)
		if err != nil || wpid != pid {
			return
		}
		z.mu.Lock()
		z.sum.add(&ru)
		z.mu.Unlock()
	}
}

// exitedChild names an exited child of this process without reaping it
// (waitid with WNOWAIT); 0 when there is none.
func exitedChild() int {
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil); err != nil || info.Signo == 0 {
		return 0
	}
	// si_pid opens the union after si_signo, si_errno and si_code, which
	// is aligned like a pointer.
	ptr := unsafe.Sizeof(uintptr(0))
	off := (3*unsafe.Sizeof(int32(0)) + ptr - 1) &^ (ptr - 1)
	return int(*(*int32)(unsafe.Add(unsafe.Pointer(&info), off)))
}

// stop ends the reaping and returns what the reaped processes used. The
// SIGCHLD subscription stays (signal.Stop would wait for the signal loop to
// go idle): a supervisor or reaper process has one job and ends with it,
// and a full channel drops further signals.
func (z *zombieReaper) stop() usageSum {
	close(z.quit)
	<-z.done
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.sum
}
