package agenttools_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/policy"
)

func TestRunAfterGroupAndRerunThroughTheTools(t *testing.T) {
	h := newHarness(t)
	h.r.Policy().Groups = map[string]policy.Group{"tests": {MaxRunning: 1}}
	gate := filepath.Join(h.root, "go")
	a := ok[*agenttools.Status](h, "run_command_bg", map[string]any{"argv": []string{fixture(t, "wait-for-file.sh"), gate, "0"}, "group": "tests"})
	h.killAtEnd(a.TaskID)
	b := ok[*agenttools.Status](h, "run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "after": []string{a.TaskID}})
	require.Equal(t, bgcmd.StateQueued, b.State)
	require.False(t, b.Settled)
	require.Equal(t, 1, b.Counters.Queued)
	require.Equal(t, 1, b.Counters.Running)
	require.Contains(t, b.Next, "queued")
	c := ok[*agenttools.Status](h, "run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "group": "tests"})
	require.Equal(t, bgcmd.StateQueued, c.State)
	require.Equal(t, 1, c.QueuePosition)

	e := h.fail("run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "group": "nope"})
	require.Contains(t, e.Message, "nope")
	e = h.fail("run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "after": []string{"0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"}})
	require.Contains(t, e.Message, "no such job")

	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	for _, id := range []string{a.TaskID, b.TaskID, c.TaskID} {
		s := ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": id, "timeout_ms": 60000})
		require.Equal(t, bgcmd.StateExited, s.State)
	}

	again := ok[*agenttools.Status](h, "command_rerun", map[string]any{"task_id": c.TaskID})
	require.Equal(t, c.TaskID, again.RerunOf)
	require.Equal(t, "tests", again.Group)
	ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": again.TaskID, "timeout_ms": 60000})

	withEnv := ok[*agenttools.Status](h, "run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"},
		"env": map[string]string{"ALPHA": "1", "PATH": "/usr/bin:/bin"}, "wait_ms": 60000})
	require.Equal(t, bgcmd.StateExited, withEnv.State)
	e = h.fail("command_rerun", map[string]any{"task_id": withEnv.TaskID})
	require.Contains(t, e.Message, "missing: ALPHA, PATH")
	r := ok[*agenttools.Status](h, "command_rerun", map[string]any{"task_id": withEnv.TaskID,
		"env": map[string]string{"ALPHA": "2", "PATH": "/usr/bin:/bin"}})
	require.Equal(t, withEnv.TaskID, r.RerunOf)
	ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": r.TaskID, "timeout_ms": 60000})
}
