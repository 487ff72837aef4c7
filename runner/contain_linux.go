//go:build linux

package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
)

// Containment is how a job's descendants are kept inside the job; the event
// detail of every terminal transition records it under "containment".
type Containment string

// The containment mechanisms.
const (
	// ContainSubreaper: the job's supervisor (the detached supervisor, or in
	// the in-process mode a small reaper process between the host and the
	// job) is a child subreaper, so every descendant that leaves the process
	// group or the session still comes back to it as an orphan; when the
	// main process exits, each descendant is killed and reaped.
	ContainSubreaper Containment = "subreaper"
	// ContainProcessGroup: only the job's process group is killed; a
	// descendant that called setsid or setpgid escapes. Used in the
	// in-process mode when this program never called MaybeSupervise.
	ContainProcessGroup Containment = "process_group"
)

// reapRounds bounds the kill-and-reap loop over a job's descendants: each
// round kills every live descendant found and reaps the direct children, so
// a tree that keeps forking loses a generation per round.
const reapRounds = 500

// becomeSubreaper makes this process the reaper of its orphaned descendants.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// startUnprivileged starts cmd with no_new_privs set, which the job and
// every descendant inherit: a setuid or file-capability executable (sudo,
// su, a setuid helper) then runs without gaining anything. A descendant that
// became another user could not be killed by the supervisor, and would
// outlive the job, its timeout and every kill.
//
// The flag belongs to one thread and passes to the processes it forks, so
// cmd starts from a thread that sets it first. In bgcmd's own supervisor
// and reaper processes (own), which start nothing but jobs, that thread
// keeps the flag and goes back to the others. In a host's process it is a
// thread of its own that ends after the start (should that be the main
// thread, Go parks it for good instead), so no thread that starts the
// host's other children gets it; a new thread per start costs about 90 µs
// where keeping one costs 2.
func startUnprivileged(cmd *exec.Cmd, own bool) error {
	start := func() error {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("set no_new_privs, which keeps a job from gaining privileges: %w", err)
		}
		return cmd.Start()
	}
	if own {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		return start()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		done <- start()
	}()
	return <-done
}

// proc is one process as the /proc scan sees it.
type proc struct {
	pid  int
	ppid int
	// live: it still runs (see running), so it must be killed; a process
	// that is not live is a zombie to reap.
	live bool
	// start is its start time, which tells it from a process that takes
	// its pid later.
	start int64
}

// signal sends sig to the process the scan found, never to one that took
// its pid after the scan (see signalIf).
func (p proc) signal(sig syscall.Signal) bool {
	return signalIf(p.pid, sig, func(st procStat) bool { return st.start == p.start })
}

// descendants lists every process whose parent chain leads to root (root
// itself excluded), zombies included.
func descendants(root int) []proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil {
			continue
		}
		children[st.ppid] = append(children[st.ppid], proc{pid: pid, ppid: st.ppid, live: running(pid, st), start: st.start})
	}
	var out []proc
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if c.pid == root {
				continue
			}
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// reapTree kills every descendant of this process and reaps each with wait4
// on its own pid (never wait4(-1): os/exec may still have to wait the main
// child), adding the reaped processes' rusage to u. It must run after the
// main child has been waited. It returns how many live processes it
// killed. Orphans come back to this process only when it is a subreaper;
// without that it still kills what it can find below itself.
func reapTree(u *usageSum) int {
	self := os.Getpid()
	if noChildren() {
		return 0 // the common case, without a scan of /proc
	}
	killed := map[int]bool{}
	for range reapRounds {
		procs := descendants(self)
		if len(procs) == 0 {
			break
		}
		// Stop first: a stopped process cannot fork while the others of the
		// round are being found and killed.
		for _, p := range procs {
			if p.live {
				p.signal(syscall.SIGSTOP)
			}
		}
		for _, p := range procs {
			if p.live && p.signal(syscall.SIGKILL) {
				killed[p.pid] = true
			}
		}
		reaped := 0
		for _, p := range procs {
			if p.ppid != self {
				continue // reparented to this process once its parent is reaped
			}
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			for {
				wpid, err := syscall.Wait4(p.pid, &ws, 0, &ru)
				if err == syscall.EINTR {
					continue
				}
				if err == nil && wpid == p.pid {
					u.add(&ru)
					reaped++
				}
				break
			}
		}
		if reaped == 0 {
			time.Sleep(time.Millisecond) // a killed grandchild is still exiting; not a synchronisation
		}
	}
	return len(killed)
}

// noChildren reports whether this process surely has no child left (so no
// descendant either): waitid on any child, without waiting for one (WNOWAIT,
// WNOHANG), fails with ECHILD only when there is none.
func noChildren() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT|unix.WALL, nil)
	return errors.Is(err, unix.ECHILD)
}

// usageSum adds up the rusage of a job's reaped processes.
type usageSum struct {
	utime, stime time.Duration
	// maxRSSKiB is the largest peak resident set of any one process: the
	// kernel reports peaks per process, not for a tree at once.
	maxRSSKiB int64
	ok        bool
}

func (u *usageSum) add(ru *syscall.Rusage) {
	if ru == nil {
		return
	}
	u.ok = true
	u.utime += time.Duration(ru.Utime.Nano())
	u.stime += time.Duration(ru.Stime.Nano())
	u.maxRSSKiB = max(u.maxRSSKiB, ru.Maxrss) // Linux reports ru_maxrss in KiB
}

func (u *usageSum) addSum(o usageSum) {
	if !o.ok {
		return
	}
	u.ok = true
	u.utime += o.utime
	u.stime += o.stime
	u.maxRSSKiB = max(u.maxRSSKiB, o.maxRSSKiB)
}

// public is the sum as a status reports it; nil when nothing was reaped.
func (u usageSum) public() *bgcmd.Usage {
	if !u.ok {
		return nil
	}
	return &bgcmd.Usage{CPUUserMS: u.utime.Milliseconds(), CPUSystemMS: u.stime.Milliseconds(),
		MaxRSSKiB: u.maxRSSKiB}
}
