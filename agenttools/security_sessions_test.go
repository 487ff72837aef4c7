package agenttools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
)

// TestAnotherSessionsTaskAnswersAsAnUnknownOne is the exploit of a shared
// store: mallory's toolset, over the same runner as alice's, must not read
// alice's command, clear her unread counter or kill it. Each of alice's ids
// answers mallory exactly as an id that names no command does.
func TestAnotherSessionsTaskAnswersAsAnUnknownOne(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(o *agenttools.Options) { o.Session = "alice" })
	mallory, err := agenttools.New(agenttools.Options{Runner: h.r, Session: "mallory"})
	require.NoError(t, err)
	m := h.in(t)
	m.ts = mallory

	flag := filepath.Join(h.root, "go")
	running := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "wait-for-file.sh"), flag, "0"}})
	h.killAtEnd(running.TaskID)
	// Held until run_command_bg has returned: a command that ended before
	// the tool read its status would be read (and not unread) at once.
	doneFlag := filepath.Join(h.root, "done")
	done := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "wait-for-file.sh"), doneFlag, "0"}})
	require.Equal(t, "running", string(done.State))
	require.NoError(t, os.WriteFile(doneFlag, nil, 0o600))
	waitFor(t, "alice's second command settles", func() bool {
		rec, err := h.store.Get(t.Context(), done.TaskID)
		return err == nil && rec.State.Settled()
	})
	const unknown = "01900000-0000-7000-8000-000000000000"

	// sameAsUnknown calls name with alice's id and with an unknown one and
	// requires the same error, the id aside.
	sameAsUnknown := func(name string, args map[string]any, id string) {
		t.Helper()
		args["task_id"] = id
		got := m.fail(name, args)
		args["task_id"] = unknown
		want := m.fail(name, args)
		require.Equal(t, want.Code, got.Code, "%s on alice's task", name)
		require.Equal(t, strings.ReplaceAll(want.Message, unknown, id), got.Message, "%s on alice's task", name)
		require.Equal(t, want.Hint, got.Hint, "%s on alice's task", name)
	}
	for _, id := range []string{running.TaskID, done.TaskID} {
		sameAsUnknown("command_status", map[string]any{}, id)
		sameAsUnknown("command_output", map[string]any{"stream": "stdout"}, id)
		sameAsUnknown("command_output", map[string]any{"stream": "stderr", "tail": 5}, id)
		sameAsUnknown("command_wait", map[string]any{"timeout_ms": 0}, id)
		sameAsUnknown("command_kill", map[string]any{"signal": "SIGKILL"}, id)
	}
	list := ok[*agenttools.List](m, "command_list", map[string]any{})
	require.Empty(t, list.Commands, "mallory lists none of alice's commands")

	rec, err := h.store.Get(t.Context(), running.TaskID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, rec.State, "mallory did not kill alice's command")
	unread := ok[*agenttools.List](h, "command_list", map[string]any{"unread": true})
	require.Len(t, unread.Commands, 1, "alice's finished command is still unread")
	require.Equal(t, done.TaskID, unread.Commands[0].TaskID)
	require.Equal(t, 1, unread.Counters.Finished)

	// Alice herself still reads and stops her own.
	require.Equal(t, done.TaskID, ok[*agenttools.Status](h, "command_status", map[string]any{"task_id": done.TaskID}).TaskID)
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	st2 := ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": running.TaskID, "timeout_ms": 60000})
	require.Equal(t, bgcmd.StateExited, st2.State)
}
