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
// supervisor back once the job has settled and hands it the next job; none
// of them outlives a server killed with SIGKILL. A supervisor waiting for
// a job exits at once, one running a job once that job has settled, which
// it records truthfully.
func TestMCPSupervisorsEndWithAKilledServer(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	srv := e.start(t)
	ctx := context.Background()
	st, err := jobstore.OpenReadOnly(ctx, filepath.Join(e.home, "bgcmd.db"))
	require.NoError(t, err)
	defer st.Close()
	supervisorOf := func(id string) int {
		rec, err := st.Get(ctx, id)
		require.NoError(t, err)
		return rec.SupervisorPID
	}
	runShort := func(code string) int {
		s := mcpOK[agenttools.Status](srv, "run_command_bg", map[string]any{
			"argv": []string{mcpFixture(t, "exit-with.sh"), code}})
		w := mcpOK[agenttools.Status](srv, "command_wait", map[string]any{"task_id": s.TaskID, "timeout_ms": 30000})
		require.Equal(t, bgcmd.StateExited, w.State)
		return supervisorOf(s.TaskID)
	}

	first := runShort("3")
	flag := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(flag, nil, 0o600) }) // ends the command if the test fails early
	var long *agenttools.Status
	mcpWaitFor(t, "the first job's supervisor to take the next job", func() bool {
		// A job that comes before the supervisor is back goes to a spare:
		// let it end, and try again.
		long = mcpOK[agenttools.Status](srv, "run_command_bg", map[string]any{
			"argv": []string{mcpFixture(t, "wait-for-file.sh"), flag, "7"}})
		if supervisorOf(long.TaskID) == first {
			return true
		}
		mcpOK[agenttools.Status](srv, "command_kill", map[string]any{"task_id": long.TaskID})
		return false
	})
	idle := runShort("0")
	require.NotEqual(t, first, idle)
	mcpWaitFor(t, "the last job's supervisor to wait for a job", func() bool {
		fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(idle), "fd"))
		for _, fd := range fds {
			if target, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(idle), "fd", fd.Name())); strings.HasSuffix(target, "supervisor.log") {
				return false // still in its job: stdout and stderr go to the job's log
			}
		}
		return len(fds) > 0
	})

	require.NoError(t, srv.cmd.Process.Signal(syscall.SIGKILL))
	srv.cs.Wait()
	mcpWaitFor(t, "the waiting supervisor to exit", func() bool { return isZombie(idle) })
	require.False(t, isZombie(first), "the running job's supervisor outlives its server")
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
	mcpWaitFor(t, "the running job's supervisor to exit", func() bool { return isZombie(first) })
}
