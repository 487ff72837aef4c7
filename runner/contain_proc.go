//go:build linux

package runner

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// jobProc is a started job: its main process and how the job ends.
type jobProc interface {
	// pid is the main process, which leads its own process group.
	pid() int
	// recorded says whether the job's start is on record (its row names
	// the main process), once the supervisor has tried to write it: a
	// keeper that holds the job for this process (a reaper) stops a job
	// that is not, or whose host ended before saying so, since a job
	// nobody recorded is nobody's to stop. It is called once, before wait.
	recorded(ok bool)
	// signal sends sig to the main process itself, never to a process
	// that reused its pid: it may have left the group bgcmd made for it
	// (setpgid into another group of its session), which a group signal
	// then misses. A main process already gone is not an error.
	signal(sig syscall.Signal)
	// wait blocks until the main process has exited and, under
	// containment, every descendant has been killed and reaped.
	wait() procExit
}

// procExit is how a job's processes ended.
type procExit struct {
	// status is the main process's wait status; nil when it is unknown and
	// err says why.
	status *syscall.WaitStatus
	err    error
	// leftovers counts the processes killed after the main process exited.
	leftovers int
	usage     usageSum
	// cgroupErr is why the job's cgroup could not be emptied or removed.
	cgroupErr error
	// limits is what the limits of the job's cgroup did.
	limits limitEvents
}

// start starts cmd under the supervisor's containment. An error is the
// command's own start error (not installed, not executable, cwd gone).
func (s *supervisor) start(cmd *exec.Cmd) (jobProc, error) {
	var cg *jobCgroup
	if lim := s.job.ResourceLimits; lim != nil {
		var err error
		if cg, err = newLimitedCgroup(s.cgroupRoot, s.job.ID, lim); err != nil {
			return nil, err // never run without the limits it was allowed with
		}
	} else if s.cgroupRoot != "" {
		var err error
		if cg, err = newJobCgroup(s.cgroupRoot, s.job.ID); err != nil {
			s.cgroupErr = err // recorded with the outcome; the other containment still holds
		}
	}
	var p jobProc
	var err error
	if s.containment == containReaper {
		p, err = s.reapers.start(s.binary, cmd, s.cwd, cg)
	} else {
		if cg != nil {
			if cmd.SysProcAttr == nil {
				cmd.SysProcAttr = &syscall.SysProcAttr{}
			}
			cg.place(cmd.SysProcAttr)
		}
		if err = startUnprivileged(cmd, s.containment == ContainSubreaper); err == nil {
			p = &directProc{cmd: cmd, reap: s.containment == ContainSubreaper}
			if s.containment == ContainSubreaper {
				p.(*directProc).zombies = startZombieReaper(cmd.Process.Pid)
			}
		}
	}
	if cg == nil {
		return p, err
	}
	if err != nil {
		_, _ = cg.killAll() // empty: this removes it
		return nil, err
	}
	s.inCgroup = true
	return &cgroupProc{jobProc: p, cg: cg}, nil
}

// containReaper is the in-process flavour of ContainSubreaper: the job runs
// under a reaper process (see reaper_linux.go).
const containReaper Containment = "reaper"

// recordedContainment is the mechanism the event detail names.
func (s *supervisor) recordedContainment() Containment {
	if s.inCgroup {
		return ContainCgroup
	}
	return s.containment.recorded()
}

// recorded is the mechanism as the event detail names it.
func (c Containment) recorded() Containment {
	if c == containReaper {
		return ContainSubreaper
	}
	return c
}

// directProc is a job whose main process is this process's child.
type directProc struct {
	cmd *exec.Cmd
	// reap: this process is a subreaper and owns every descendant.
	reap bool
	// zombies reaps the exited orphans while the job runs (with reap).
	zombies *zombieReaper
}

func (p *directProc) pid() int { return p.cmd.Process.Pid }

// recorded: this process itself keeps the job, and stops it when its start
// cannot be recorded.
func (p *directProc) recorded(bool) {}

// signal goes through the process's pidfd (os.Process), so it never
// reaches a process that reused the pid once the main process is waited.
func (p *directProc) signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }

// signalJob sends sig to the job's process group and to its main process:
// the group alone misses a main process that left it, which would then
// outlive its timeout and every kill.
func signalJob(p jobProc, sig syscall.Signal) {
	_ = signalGroup(p.pid(), sig)
	p.signal(sig)
}

func (p *directProc) wait() procExit {
	err := p.cmd.Wait()
	var out procExit
	if p.zombies != nil {
		out.usage.addSum(p.zombies.stop())
	}
	if ps := p.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
			out.status = &ws
		}
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			out.usage.add(ru)
		}
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		out.err = err
	}
	if p.reap {
		out.leftovers = reapTree(&out.usage)
	} else {
		out.leftovers = killLeftovers(p.pid())
	}
	return out
}

// ownExecutable is this program's executable, re-executed as a reaper.
var ownExecutable = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return exe
})

// reaperBinary is the executable an in-process job's reaper runs.
func (r *Runner) reaperBinary() string {
	if r.binary != "" {
		return r.binary
	}
	return ownExecutable()
}

// inProcessContainment is ContainSubreaper (through a reaper process) when
// this program called MaybeSupervise, else ContainProcessGroup: the host
// itself never becomes a subreaper.
func (r *Runner) inProcessContainment() Containment {
	if _, ok := processGroupOnly.Load(r); ok {
		return ContainProcessGroup
	}
	if reaperReady.Load() && r.reaperBinary() != "" {
		return containReaper
	}
	return ContainProcessGroup
}

// processGroupOnly holds the runners whose in-process jobs use
// ContainProcessGroup even though MaybeSupervise was called. Only tests and
// benchmarks set it, to compare the two mechanisms in one run.
var processGroupOnly sync.Map // *Runner → struct{}

// cgroupRoot is the policy's delegated cgroup, "" when there is none.
func (r *Runner) cgroupRoot() string {
	if r.policy == nil {
		return ""
	}
	return r.policy.Cgroup
}
