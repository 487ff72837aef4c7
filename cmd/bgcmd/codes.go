package main

import (
	"errors"
	"fmt"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// Exit codes of `run --wait`, `wait` and `follow` beyond the command's own,
// chosen as coreutils timeout and shells do.
const (
	// exitStillRunning: `wait --timeout` elapsed with the job still running.
	exitStillRunning = 5
	// exitNoMatch: `wait --until-output` saw the job settle with no line
	// matching.
	exitNoMatch = 6
	// exitTimeout: the job hit its timeout (as `timeout` exits).
	exitTimeout = 124
	// exitOutputLimit: a stream reached its byte cap.
	exitOutputLimit = 125
	// exitOrphaned: the supervisor died; reconcile settled the job.
	exitOrphaned = 126
	// exitStartFailed: allowed, but the command could not be started.
	exitStartFailed = 127
	// exitInterrupted: bgcmd itself got SIGINT or SIGTERM while waiting;
	// the job keeps running.
	exitInterrupted = 130
	// exitKilled: stopped by `bgcmd kill` (128 + SIGKILL, as a shell shows).
	exitKilled = 137
)

// exitCodesHelp documents the exit codes of the commands that wait.
const exitCodesHelp = `Exit codes once the job has settled (the command's own code when it exited):
  N        exited with code N
  128+S    exited on signal S (e.g. 139 for SIGSEGV)
  124      timeout: the job hit its timeout
  125      output_limit: a stream reached its byte cap
  126      orphaned: its supervisor died; reconcile settled it
  127      start_failed: allowed by policy but could not be started
  127      dependency_failed: a job it was queued --after did not exit 0
  137      killed: stopped by bgcmd kill
  1        stopped by bgcmd because its output could not be written, or
           killed by the kernel at its memory limit (its error says so)
Before the job settles, bgcmd's own codes apply: 1 runtime error, 2 usage
error, 3 refused by policy, 4 not found, 5 the wait elapsed (still running),
130 interrupted while waiting (the job keeps running). wait --until-output
exits 0 on a match and 6 when the job settled without one.`

// jobExitCode maps a status to the exit code of a command that waited for
// it (see exitCodesHelp).
func jobExitCode(s *bgcmd.Status) int {
	switch s.State {
	case bgcmd.StateExited:
		if s.Error != "" {
			// bgcmd stopped it for a reason of its own (its output could
			// not be written), the kernel killed it at its memory limit,
			// or bgcmd could not learn how it ended: a runtime error, never
			// a kill's 137.
			return exitRuntime
		}
		if s.ExitCode != nil {
			return *s.ExitCode
		}
		if sig, _, err := runner.ParseSignal(s.Signal); err == nil && s.Signal != "" {
			return 128 + int(sig)
		}
		return exitRuntime
	case bgcmd.StateKilled:
		return exitKilled
	case bgcmd.StateTimeout:
		return exitTimeout
	case bgcmd.StateOutputLimit:
		return exitOutputLimit
	case bgcmd.StateOrphaned:
		return exitOrphaned
	case bgcmd.StateStartFailed, bgcmd.StateDependencyFailed:
		return exitStartFailed
	case bgcmd.StateRunning, bgcmd.StateQueued:
		return exitStillRunning
	}
	return exitRuntime
}

// jobErr turns a not-found error about job id into exit 4 with a clear
// line; other errors pass through.
func jobErr(id string, err error) error {
	if errors.Is(err, bgcmd.ErrNotFound) {
		return &exitError{code: exitNotFound, msg: fmt.Sprintf("no job with id %q (bgcmd list shows the jobs)", id)}
	}
	return err
}

// settledExit returns nil for exit code 0 and an exitError carrying the
// code otherwise (with no message: the status was printed already).
func settledExit(s *bgcmd.Status) error {
	if code := jobExitCode(s); code != 0 {
		return &exitError{code: code}
	}
	return nil
}
