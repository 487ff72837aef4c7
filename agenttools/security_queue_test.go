package agenttools_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/agenttools"
)

// An agent can neither rerun another session's command nor wait for one
// (after): both read exactly as an id that names no command.
func TestSecurityRerunAndAfterOfAnotherSessionsTaskAreUnknown(t *testing.T) {
	h := newHarness(t)
	other, err := agenttools.New(agenttools.Options{Runner: h.r, Session: "other"})
	require.NoError(t, err)
	j := newHarnessView(h, other)
	theirs := ok[*agenttools.Status](j, "run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "wait_ms": 60000})
	e := h.fail("command_rerun", map[string]any{"task_id": theirs.TaskID})
	unknown := h.fail("command_rerun", map[string]any{"task_id": "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"})
	require.Equal(t, unknown.Code, e.Code)
	e2 := h.fail("run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "after": []string{theirs.TaskID}})
	e3 := h.fail("run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "after": []string{"0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"}})
	require.Equal(t, e3.Code, e2.Code)
	require.Equal(t, e3.Message, replaceID(e2.Message, theirs.TaskID, "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"), "the refusal tells nothing more of a real job")
}

// newHarnessView is h driving another toolset over the same runner.
func newHarnessView(h *harness, ts *agenttools.Toolset) *harness {
	c := *h
	c.ts = ts
	return &c
}

func replaceID(s, from, to string) string { return strings.ReplaceAll(s, from, to) }
