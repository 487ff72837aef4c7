package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

func TestMCPCommandsOutliveAKilledServer(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	first := e.start(t)
	flag := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(flag, nil, 0o600) }) // ends the command if the test fails early
	st := mcpOK[agenttools.Status](first, "run_command_bg", map[string]any{
		"argv": []string{mcpFixture(t, "wait-for-file.sh"), flag, "7"}})
	require.Equal(t, bgcmd.StateRunning, st.State)
	require.Equal(t, 1, st.Counters.Running)

	// SIGKILL the server mid-command: nothing of it gets to clean up.
	// The client reaps it once its stdout closes, which ends the session.
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
	first.cs.Wait()
	mcpWaitFor(t, "the killed server to be reaped", func() bool {
		return errors.Is(first.cmd.Process.Signal(syscall.Signal(0)), os.ErrProcessDone)
	})
	require.NoError(t, os.WriteFile(flag, nil, 0o600))

	second := e.start(t)
	w := mcpOK[agenttools.Status](second, "command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 30000})
	require.Equal(t, bgcmd.StateExited, w.State, "the detached supervisor recorded the true status")
	require.NotNil(t, w.ExitCode)
	require.Equal(t, 7, *w.ExitCode)
	require.Equal(t, bgcmd.Counters{}, w.Counters)

	out := mcpOK[agenttools.OutputPage](second, "command_output", map[string]any{"task_id": st.TaskID, "stream": "stdout"})
	require.Equal(t, "waiting\ndone\n", *out.Text)
	errOut := mcpOK[agenttools.OutputPage](second, "command_output", map[string]any{"task_id": st.TaskID, "stream": "stderr"})
	require.Equal(t, "", *errOut.Text)
	require.False(t, errOut.HasMore)
}

// TestMCPSupervisorsEndWithAKilledServer: the server takes each job's
// supervisor back once the job has settled and hands it a later job; none
// of them outlives a server killed with SIGKILL. A supervisor waiting for
// a job exits at once, one running a job once that job has settled, which
// it records truthfully.
//
// Which supervisor the server keeps is its own affair: one that comes back
// while the server already has its spares is let go, so the test asks only
// that some supervisor that served a job takes a later one, and that some
// supervisor back from its job is waiting when the server is killed.
func TestMCPSupervisorsEndWithAKilledServer(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	srv := e.start(t)
	ctx := context.Background()
	st, err := jobstore.OpenReadOnly(ctx, filepath.Join(e.home, "bgcmd.db"))
	require.NoError(t, err)
	defer st.Close()
	served := map[int]bool{} // every supervisor that has run a job
	supervisorOf := func(id string) int {
		rec, err := st.Get(ctx, id)
		require.NoError(t, err)
		served[rec.SupervisorPID] = true
		return rec.SupervisorPID
	}
	runShort := func(code string) int {
		s := mcpOK[agenttools.Status](srv, "run_command_bg", map[string]any{
			"argv": []string{mcpFixture(t, "exit-with.sh"), code}})
		w := mcpOK[agenttools.Status](srv, "command_wait", map[string]any{"task_id": s.TaskID, "timeout_ms": 30000})
		require.Equal(t, bgcmd.StateExited, w.State)
		return supervisorOf(s.TaskID)
	}

	runShort("3")
	flag := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(flag, nil, 0o600) }) // ends the command if the test fails early
	var long *agenttools.Status
	reused := 0
	mcpWaitFor(t, "a supervisor that served a job to take the next one", func() bool {
		// A job that comes before a supervisor is back goes to a new
		// one: let it end (its supervisor has then served too), and try
		// again.
		long = mcpOK[agenttools.Status](srv, "run_command_bg", map[string]any{
			"argv": []string{mcpFixture(t, "wait-for-file.sh"), flag, "7"}})
		before := len(served)
		pid := supervisorOf(long.TaskID)
		if len(served) == before { // pid had run a job already
			reused = pid
			return true
		}
		mcpOK[agenttools.Status](srv, "command_kill", map[string]any{"task_id": long.TaskID})
		return false
	})
	idle := 0
	mcpWaitFor(t, "a supervisor back from its job and waiting for the next", func() bool {
		for pid := range served {
			if pid != reused {
				mcpWaitFor(t, "a served supervisor to come back or exit", func() bool { return supervisorStateOf(pid) != supervisorBusy })
			}
		}
		pid := runShort("0")
		require.NotEqual(t, reused, pid)
		mcpWaitFor(t, "the short job's supervisor to come back or exit", func() bool { return supervisorStateOf(pid) != supervisorBusy })
		if supervisorStateOf(pid) != supervisorWaiting {
			return false // let go: the server had its spares
		}
		idle = pid
		return true
	})

	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGKILL))
	srv.cs.Wait()
	mcpWaitFor(t, "the waiting supervisor to exit", func() bool { return isZombie(idle) })
	for pid := range served {
		if pid != reused {
			mcpWaitFor(t, "every supervisor but the running job's to exit", func() bool { return isZombie(pid) })
		}
	}
	require.False(t, isZombie(reused), "the running job's supervisor outlives its server")
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	mcpWaitFor(t, "the long job to settle", func() bool {
		rec, err := st.Get(ctx, long.TaskID)
		require.NoError(t, err)
		return rec.State.Settled()
	})
	rec, err := st.Get(ctx, long.TaskID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, rec.State, "error: %s", rec.Error)
	require.Equal(t, 7, *rec.ExitCode)
	mcpWaitFor(t, "the running job's supervisor to exit", func() bool { return isZombie(reused) })
}

// supervisorState is what a supervisor of the MCP server is doing, as its
// descriptors show.
type supervisorState int

const (
	supervisorBusy    supervisorState = iota // in a job: stdout and stderr go to the job's log
	supervisorWaiting                        // back from its job, waiting for the next
	supervisorGone                           // exited
)

// supervisorStateOf reads supervisor pid's state from /proc.
func supervisorStateOf(pid int) supervisorState {
	if isZombie(pid) {
		return supervisorGone
	}
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil || len(fds) == 0 {
		return supervisorBusy // exiting: ask again
	}
	for _, fd := range fds {
		if target, _ := os.Readlink(filepath.Join(dir, fd.Name())); strings.HasSuffix(target, "supervisor.log") {
			return supervisorBusy
		}
	}
	return supervisorWaiting
}
