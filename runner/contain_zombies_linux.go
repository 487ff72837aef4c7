//go:build linux

package runner

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// zombieReaper reaps, while a job runs, the orphans that came back to this
// subreaper and exited, so a job that keeps daemonizing short-lived
// processes does not fill the process table with zombies until it ends. It
// waits only for specific pids, never the main process (os/exec waits for
// that one).
type zombieReaper struct {
	main int
	sigs chan os.Signal
	done chan struct{}
	mu   sync.Mutex
	sum  usageSum
}

// startZombieReaper begins reaping exited children other than main on
// every SIGCHLD.
func startZombieReaper(main int) *zombieReaper {
	z := &zombieReaper{main: main, sigs: make(chan os.Signal, 1), done: make(chan struct{})}
	signal.Notify(z.sigs, syscall.SIGCHLD)
	go func() {
		defer close(z.done)
		for range z.sigs {
			z.reapExited()
		}
	}()
	return z
}

// reapExited waits for every zombie child of this process but main.
func (z *zombieReaper) reapExited() {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			pid, err := strconv.Atoi(f)
			if err != nil || pid == z.main {
				continue
			}
			if st, err := readProcStat(pid); err != nil || st.state != 'Z' {
				continue
			}
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			if wpid, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, &ru); err == nil && wpid == pid {
				z.mu.Lock()
				z.sum.add(&ru)
				z.mu.Unlock()
			}
		}
	}
}

// stop ends the reaping and returns what the reaped processes used.
func (z *zombieReaper) stop() usageSum {
	signal.Stop(z.sigs)
	close(z.sigs)
	<-z.done
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.sum
}
