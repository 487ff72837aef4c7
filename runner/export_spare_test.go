package runner

import (
	"sync"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// SparePID returns the pid of the spare supervisor of r that the next
// detached start takes, or 0 when there is none (yet).
func SparePID(r *Runner) int {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if len(r.spares) == 0 {
		return 0
	}
	return r.spares[0].pid
}

// SpareCount returns how many spare supervisors of r wait for a job.
func SpareCount(r *Runner) int {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	return len(r.spares)
}

// PrestartedPID returns the pid of a supervisor started by Prestart, or 0
// once a runner took it or it was closed.
func PrestartedPID(ps *Prestarted) int {
	if ps == nil || ps.p == nil {
		return 0
	}
	return ps.p.pid
}

// LastSpawnedSparePID returns the pid of the latest spare supervisor r
// started, whether or not a job or Close took it since (0 when none).
func LastSpawnedSparePID(r *Runner) int {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if r.lastSpare == nil {
		return 0
	}
	return r.lastSpare.pid
}

// HoldSupervisorPeers keeps open, until t ends, a copy of every new
// supervisor's end of its hand-over socket, as a fork of this process that
// runs at the same time holds one until it execs: while it does, a
// supervisor that died waiting does not fail the write of its job.
func HoldSupervisorPeers(t testing.TB) {
	var mu sync.Mutex
	var held []int
	hold := func(peer int) {
		fd, err := unix.Dup(peer)
		if err != nil {
			t.Errorf("hold a supervisor's socket: %v", err)
			return
		}
		mu.Lock()
		held = append(held, fd)
		mu.Unlock()
	}
	heldPeers.Store(&hold)
	t.Cleanup(func() {
		heldPeers.Store(nil)
		mu.Lock()
		defer mu.Unlock()
		for _, fd := range held {
			unix.Close(fd)
		}
	})
}

// OnSupervisorExit calls f, until t ends, with each detached supervisor this
// process reaps and its rusage.
func OnSupervisorExit(t testing.TB, f func(pid int, ru *syscall.Rusage)) {
	supervisorExited.Store(&f)
	t.Cleanup(func() { supervisorExited.Store(nil) })
}
