package agenttools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/agenttools"
)

func TestToolsHaveStrictSchemasAndTruthfulAnnotations(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tools := h.ts.Tools()
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		var s struct {
			Type                 string                    `json:"type"`
			Properties           map[string]map[string]any `json:"properties"`
			Required             []string                  `json:"required"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		}
		require.NoError(t, json.Unmarshal(tl.InputSchema, &s), tl.Name)
		require.Equal(t, "object", s.Type, tl.Name)
		require.NotNil(t, s.AdditionalProperties, tl.Name)
		require.False(t, *s.AdditionalProperties, "%s rejects unknown arguments", tl.Name)
		for name, p := range s.Properties {
			require.NotEmpty(t, p["description"], "%s.%s is described", tl.Name, name)
		}
		for _, r := range s.Required {
			require.Contains(t, s.Properties, r, tl.Name)
		}
		require.Contains(t, tl.Description, "Example", "%s shows an example", tl.Name)
		require.False(t, tl.Annotations.OpenWorld, tl.Name)
	}
	require.Equal(t, []string{"run_command_bg", "command_status", "command_output", "command_wait",
		"command_kill", "command_list", "command_export", "command_rerun"}, names, "no git tools without a git toolset")

	byName := map[string]agenttools.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	for _, n := range []string{"command_status", "command_output", "command_wait", "command_list"} {
		require.True(t, byName[n].Annotations.ReadOnly, n)
	}
	require.False(t, byName["command_kill"].Annotations.ReadOnly)
	require.True(t, byName["command_kill"].Annotations.Destructive)
	require.False(t, byName["run_command_bg"].Annotations.ReadOnly)
	require.Contains(t, string(byName["run_command_bg"].InputSchema), `"required":["argv"]`)
	require.Contains(t, byName["run_command_bg"].Description, fixture(t, "exit-with.sh"),
		"the description names what the policy allows")

	// Tools returns copies.
	tools[0].InputSchema[0] = 'X'
	require.Equal(t, byte('{'), h.ts.Tools()[0].InputSchema[0])
}

func TestToolRunWithWaitReturnsTheSettledCommand(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "exit-with.sh"), "3"}, "wait_ms": 30000,
		"labels": map[string]string{"purpose": "test"}})
	require.Equal(t, bgcmd.StateExited, st.State)
	require.True(t, st.Settled)
	require.NotNil(t, st.ExitCode)
	require.Equal(t, 3, *st.ExitCode)
	require.Contains(t, st.TailPreview, "out: exiting with 3")
	require.Contains(t, st.TailPreview, "err: exiting with 3")
	require.NotEmpty(t, st.Stdout.SHA256, "the artifact is referenced")
	require.Equal(t, map[string]string{"purpose": "test"}, st.Labels)
	require.Equal(t, bgcmd.Counters{}, st.Counters, "a settled result the caller saw is read")
}

func TestToolRunWithoutWaitReturnsRunningAndTheCountersTell(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	flag := filepath.Join(h.root, "go")
	t.Cleanup(func() { os.WriteFile(flag, nil, 0o600) }) // ends the command if the test fails early
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "wait-for-file.sh"), flag, "0"}})
	require.Equal(t, bgcmd.StateRunning, st.State)
	require.NotZero(t, st.PID)
	require.Equal(t, bgcmd.Counters{Running: 1}, st.Counters)
	require.Contains(t, st.Next, "command_wait")

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	waitFor(t, "finished to reach 1", func() bool {
		l := ok[*agenttools.List](h, "command_list", nil)
		return l.Counters == bgcmd.Counters{Finished: 1}
	})
	l := ok[*agenttools.List](h, "command_list", map[string]any{"unread": true})
	require.Len(t, l.Commands, 1)
	require.Equal(t, st.TaskID, l.Commands[0].TaskID)
	require.True(t, l.Commands[0].Unread)

	got := ok[*agenttools.Status](h, "command_status", map[string]any{"task_id": st.TaskID})
	require.Equal(t, bgcmd.StateExited, got.State)
	require.Equal(t, bgcmd.Counters{}, got.Counters, "reading it clears it from finished")
	require.Empty(t, ok[*agenttools.List](h, "command_list", map[string]any{"unread": true}).Commands)
}

func TestToolWaitIsBoundedAndNotAnError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	flag := filepath.Join(h.root, "go")
	t.Cleanup(func() { os.WriteFile(flag, nil, 0o600) }) // ends the command if the test fails early
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "wait-for-file.sh"), flag, "4"}, "wait_ms": 50})
	require.Equal(t, bgcmd.StateRunning, st.State, "the wait elapsed; the command keeps running")

	w := ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 0})
	require.Equal(t, bgcmd.StateRunning, w.State)

	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	w = ok[*agenttools.Status](h, "command_wait", map[string]any{"task_id": st.TaskID, "timeout_ms": 30000})
	require.Equal(t, bgcmd.StateExited, w.State)
	require.Equal(t, 4, *w.ExitCode)
	require.Equal(t, bgcmd.Counters{}, w.Counters)
}

func TestToolKillStopsTheCommandAndKeepsItsOutput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "ignore-term.sh")}})
	h.killAtEnd(st.TaskID)
	waitFor(t, "the script to say ready", func() bool {
		p := ok[*agenttools.OutputPage](h, "command_output", map[string]any{"task_id": st.TaskID, "stream": "stdout"})
		return p.Text != nil && *p.Text == "ready\n"
	})
	k := ok[*agenttools.Status](h, "command_kill", map[string]any{"task_id": st.TaskID, "signal": "KILL"})
	require.Equal(t, bgcmd.StateKilled, k.State)
	require.Equal(t, "ready\n", k.TailPreview)

	again := ok[*agenttools.Status](h, "command_kill", map[string]any{"task_id": st.TaskID})
	require.Equal(t, bgcmd.StateKilled, again.State)
	require.Contains(t, again.Next, "already ended")

	te := h.fail("command_kill", map[string]any{"task_id": st.TaskID, "signal": "SIGBOGUS"})
	require.Equal(t, agenttools.CodeInvalidArguments, te.Code)
}

func TestToolRunResolvesARelativeCwdAgainstTheRoot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	require.NoError(t, os.Mkdir(filepath.Join(h.root, "sub"), 0o700))
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{fixture(t, "exit-with.sh"), "0"}, "cwd": "sub", "wait_ms": 30000})
	require.Equal(t, filepath.Join(h.root, "sub"), st.Cwd)

	h2 := newHarness(t, func(o *agenttools.Options) { o.CwdRoot = h.root })
	te := h2.fail("run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "cwd": "sub"})
	require.Equal(t, "cwd_escape", te.Code, "CwdRoot is the base, the policy still decides")
}

func TestToolsetNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	_, err := agenttools.New(agenttools.Options{})
	require.Error(t, err)
	h := newHarness(t)
	_, err = agenttools.New(agenttools.Options{Runner: h.r, CwdRoot: "relative"})
	require.Error(t, err)
	require.Equal(t, "default", func() string {
		ts, err := agenttools.New(agenttools.Options{Runner: h.r})
		require.NoError(t, err)
		return ts.Session()
	}())
}

func TestToolRunOfAMissingExecutableSettlesAsStartFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	st := ok[*agenttools.Status](h, "run_command_bg", map[string]any{
		"argv": []string{"/nonexistent/bin/tool"}, "wait_ms": 30000})
	require.Equal(t, bgcmd.StateStartFailed, st.State)
	require.NotEmpty(t, st.Error)
	require.Equal(t, bgcmd.Counters{}, st.Counters, "the caller saw how it ended")

	p := ok[*agenttools.OutputPage](h, "command_output", map[string]any{"task_id": st.TaskID, "stream": "stdout"})
	require.Equal(t, "", *p.Text)
	require.False(t, p.HasMore)
}
