package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// TestAStartBeyondTheSessionsQueueBoundIsRefused: every queued job is
// held by a process (or, in process, a goroutine and an open directory)
// until it starts, and nothing bounded how many a session queued:
// max_running bounded what ran while the queue took the machine's memory
// or its processes. A start that would queue past MaxQueued is refused
// queue_full and recorded; another session's queue is its own, and once
// a queued job leaves the queue there is room again.
func TestAStartBeyondTheSessionsQueueBoundIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, false)
	e.policy.MaxRunning = 1
	e.policy.MaxQueued = 2
	gate := filepath.Join(t.TempDir(), "gate")
	t.Cleanup(func() { _ = os.WriteFile(gate, nil, 0o600) }) // before the runner's Close
	blocker := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{})
	require.Equal(t, bgcmd.StateRunning, blocker.State)
	var queued []string
	for range 2 {
		j, err := e.r.Start(ctx, []string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
		require.NoError(t, err)
		require.Equal(t, bgcmd.StateQueued, j.State)
		queued = append(queued, j.ID)
	}
	_, err := e.r.Start(ctx, []string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	var ref *policy.Refusal
	require.True(t, errors.As(err, &ref), "%v", err)
	require.Equal(t, policy.CodeQueueFull, ref.Code)
	require.Contains(t, ref.Message, "max_queued")
	refusals, err := e.store.Refusals(ctx, 10)
	require.NoError(t, err)
	require.NotEmpty(t, refusals)
	require.Equal(t, string(policy.CodeQueueFull), refusals[0].Code)

	other, err := e.r.Start(ctx, []string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Session: "other"})
	require.NoError(t, err, "another session's queue is its own")
	require.Equal(t, bgcmd.StateRunning, other.State)

	_, err = e.r.Kill(ctx, queued[0], syscall.SIGKILL)
	require.NoError(t, err)
	e.await(queued[0])
	j, err := e.r.Start(ctx, []string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	require.NoError(t, err, "a killed queued job leaves room")
	require.Equal(t, bgcmd.StateQueued, j.State)
}
