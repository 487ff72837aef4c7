//go:build linux

package runner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// hookReaper starts on_settle hooks under a reaper process of a pool, as
// the in-process jobs of a process that called MaybeSupervise start: the
// reaper is the hook's subreaper, and once the hook's main process has
// ended it kills and reaps whatever the hook left running, a descendant in
// a session of its own included. A detached supervisor runs its job's hook
// itself and sweeps after it (it is the subreaper), so it needs none.
type hookReaper struct {
	pool   *reaperPool
	binary string
}

// hookReaper is how this runner's process starts hooks: under a reaper
// when its in-process jobs start under one, else nil (in this process,
// the hook's process group is its bound).
func (r *Runner) hookReaper() *hookReaper {
	if r.inProcessContainment() != containReaper {
		return nil
	}
	return &hookReaper{pool: &r.reapers, binary: r.reaperBinary()}
}

// hookReaper is hookReaper for the jobs this supervisor settles.
func (s *supervisor) hookReaper() *hookReaper {
	if s.containment != containReaper || s.reapers == nil {
		return nil
	}
	return &hookReaper{pool: s.reapers, binary: s.binary}
}

// hookExit is how a hook run under a reaper ended other than with status
// 0: its exit status as the reaper waited it.
type hookExit struct{ ws syscall.WaitStatus }

func (e *hookExit) Error() string {
	if e.ws.Signaled() {
		return "signal: " + e.ws.Signal().String()
	}
	return fmt.Sprintf("exit status %d", e.ws.ExitStatus())
}

// ExitCode is the hook's exit code, -1 when a signal ended it (as
// os.ProcessState's).
func (e *hookExit) ExitCode() int {
	if e.ws.Exited() {
		return e.ws.ExitStatus()
	}
	return -1
}

// run runs cmd's program (its path, argv, environment and directory) under
// a reaper with in on its stdin and its output discarded, and returns as
// exec.Cmd.Run would: nil for status 0, a *hookExit for another status, or
// why it could not start. When ctx ends first, the hook's process group
// and main process are killed; the reaper then kills what is left.
func (hr *hookReaper) run(ctx context.Context, cmd *exec.Cmd, in []byte) error {
	if cmd.Err != nil {
		return cmd.Err // its path could not be resolved
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devNull.Close()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return err
	}
	run := &exec.Cmd{Path: cmd.Path, Args: cmd.Args, Env: cmd.Env, Dir: cmd.Dir,
		Stdin: stdinR, Stdout: devNull, Stderr: devNull}
	p, err := hr.pool.start(hr.binary, run, nil, nil)
	stdinR.Close()
	if err != nil {
		stdinW.Close()
		return err
	}
	p.recorded(true) // nothing to record: the reaper keeps it until it ends
	go func() {
		// A hook that reads nothing gets EPIPE here once it is gone.
		_, _ = stdinW.Write(in)
		stdinW.Close()
	}()
	done := make(chan procExit, 1)
	go func() { done <- p.wait() }()
	var out procExit
	select {
	case out = <-done:
	case <-ctx.Done():
		signalJob(p, syscall.SIGKILL) // its group, and its main process wherever it went
		out = <-done
	}
	switch {
	case out.err != nil:
		return out.err
	case out.status == nil:
		return fmt.Errorf("the reaper of pid %d reported no exit status", p.pid())
	case out.status.Exited() && out.status.ExitStatus() == 0:
		return nil
	default:
		return &hookExit{ws: *out.status}
	}
}
