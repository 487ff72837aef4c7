package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
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
